package lsfout

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"xce/lib/resreq"
)

// combinedResReq is the job's resource requirement as bjobs -l shows it
// under RESOURCE REQUIREMENT DETAILS: its -R strings joined into one, with
// LSF's defaults filled in (select[type == local], order[r15s:pg]) and the
// rusage amounts printed with two decimals as LSF prints them
// (rusage[mem=100.00]). A job with no requirement shows the defaults
// alone. Strings that do not parse (a record older than the parser) are
// shown as stored.
func combinedResReq(reqs []string) string {
	var parsed []*resreq.ResReq
	for _, s := range reqs {
		if strings.TrimSpace(s) == "" {
			continue
		}
		r, err := resreq.Parse(s)
		if err != nil {
			return strings.Join(reqs, " ")
		}
		parsed = append(parsed, r)
	}
	var r *resreq.ResReq
	if len(parsed) == 1 {
		r = parsed[0]
	} else if len(parsed) > 1 {
		j, err := resreq.Join(parsed...)
		if err != nil {
			return strings.Join(reqs, " ")
		}
		r = j
	}
	return rusageDecimals(resreq.Defaults(r).String())
}

var (
	rusageSectionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`rusage\[[^\]]*\]`) })
	rusageAmountRE  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)=([0-9]+(?:\.[0-9]+)?)([,:/\] ]|$)`)
	})
)

// rusageDecimals prints the plain amounts of every rusage section of s
// with two decimals; duration and decay keep their form.
func rusageDecimals(s string) string {
	if !strings.Contains(s, "rusage[") {
		return s // most jobs: no need to compile the expressions
	}
	return rusageSectionRE().ReplaceAllStringFunc(s, func(sec string) string {
		return rusageAmountRE().ReplaceAllStringFunc(sec, func(m string) string {
			p := rusageAmountRE().FindStringSubmatch(m)
			if p[1] == "duration" || p[1] == "decay" {
				return m
			}
			v, err := strconv.ParseFloat(p[2], 64)
			if err != nil {
				return m
			}
			return p[1] + "=" + strconv.FormatFloat(v, 'f', 2, 64) + p[3]
		})
	})
}

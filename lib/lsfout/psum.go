package lsfout

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"xce/lib/api"
)

// hostReasonRE splits a host-based pending reason ("Not enough job slot(s):
// 1 host") into its text and its host count.
var hostReasonRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*): (\d+) hosts?$`) })

// hostBasedReasons is the line of the -psum summary that counts the jobs
// pending for host-based reasons, detailed in a second section.
const hostBasedReasons = "Individual host based reasons"

// WritePendSummary writes bjobs -psum for the pending jobs given (PEND and
// PSUSP; others are ignored), in the layout of IBM's example:
//
//	Pending reason summary: published Wed Mar 24 15:11:50 2016
//	Summarizing 100 pending jobs in cluster (cluster1):
//	    Individual host based reasons:                                   70 jobs
//	    New job is waiting for scheduling:                               10 jobs
//
//	Individual host based reasons
//	    Load information unavailable:                                    160 occurrences
//
// Each reason line is indented 4 spaces, the reason and its colon padded to
// 65 columns (at least two spaces follow the colon), then the count. A
// job's reasons that are not host-based count the job once each, most jobs
// first; a job with host-based reasons ("text: N hosts") counts once
// toward "Individual host based reasons", and each host-based reason adds
// its host count to its occurrences (LSF: per job and host), listed most
// first in the second section, shown only when there is one. Ties keep the
// order in which the reasons first appear among the jobs (dispatch order).
// published is when the summary was made.
func WritePendSummary(w io.Writer, jobs []*api.Job, cluster string, published time.Time) error {
	type count struct {
		reason string
		n      int
	}
	jobsBy, occBy := map[string]int{}, map[string]int{}
	first := map[string]int{} // ties keep the order reasons first appear in
	note := func(r string) {
		if _, ok := first[r]; !ok {
			first[r] = len(first)
		}
	}
	pending := 0
	for _, j := range jobs {
		if !isPending(j.GetState()) {
			continue
		}
		pending++
		seen, hostBased := map[string]bool{}, false
		for _, r := range pendReasons(j) {
			if m := hostReasonRE().FindStringSubmatch(r); m != nil {
				n, _ := strconv.Atoi(m[2])
				occBy[m[1]] += n
				note(m[1])
				hostBased = true
				continue
			}
			if !seen[r] {
				seen[r] = true
				jobsBy[r]++
				note(r)
			}
		}
		if hostBased {
			jobsBy[hostBasedReasons]++
			note(hostBasedReasons)
		}
	}
	sorted := func(m map[string]int) []count {
		var out []count
		for r, n := range m {
			out = append(out, count{r, n})
		}
		slices.SortFunc(out, func(a, b count) int {
			if a.n != b.n {
				return b.n - a.n
			}
			return cmp.Compare(first[a.reason], first[b.reason])
		})
		return out
	}
	label := func(r string) string {
		if runeLen(r) > 62 {
			return "    " + r + ":  "
		}
		return "    " + padRight(r+":", 65)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Pending reason summary: published %s\n", published.Format("Mon Jan _2 15:04:05 2006"))
	fmt.Fprintf(&b, "Summarizing %d pending jobs in cluster (%s):\n", pending, cluster)
	for _, c := range sorted(jobsBy) {
		fmt.Fprintf(&b, "%s%d jobs\n", label(c.reason), c.n)
	}
	if len(occBy) > 0 {
		b.WriteString("\n" + hostBasedReasons + "\n")
		for _, c := range sorted(occBy) {
			fmt.Fprintf(&b, "%s%3d occurrences\n", label(c.reason), c.n)
		}
	}
	return flush(w, &b)
}

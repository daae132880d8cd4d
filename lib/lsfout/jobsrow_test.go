package lsfout

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// referenceJobRow is the table row as it was written column by column
// with strings (padRight, fixed, tailName): writeJobRow must write the
// same bytes without them.
func referenceJobRow(b *bytes.Buffer, j *api.Job, opt JobsOptions) {
	s := submitted(j)
	id := strconv.FormatInt(j.GetJobId(), 10)
	hosts := ExecHosts(j)
	var cols []string
	if opt.Wide {
		exec := strings.Join(hosts, ":")
		if exec == "" {
			exec = "   -    "
		}
		cols = []string{padRight(id, 7), padRight(s.GetUser(), 7), fixed(StateName(j.GetState()), 5),
			padRight(effective(j).GetQueue(), 10), padRight(s.GetSubmitHost(), 11), padRight(exec, 11),
			padRight(DisplayName(j), 10), FormatSubmitTime(j.GetSubmitTime(), opt.loc())}
	} else {
		first := ""
		if len(hosts) > 0 {
			first = hosts[0]
		}
		cols = []string{padRight(id, 7), fixed(s.GetUser(), 7), fixed(StateName(j.GetState()), 5),
			fixed(effective(j).GetQueue(), 10), fixed(s.GetSubmitHost(), 11), fixed(first, 11),
			padRight(tailName(DisplayName(j), 10), 10), FormatSubmitTime(j.GetSubmitTime(), opt.loc())}
	}
	b.WriteString(strings.Join(cols, " "))
	b.WriteByte('\n')
	if !opt.Wide && len(hosts) > 1 {
		for _, h := range hosts[1:] {
			b.WriteString(strings.Repeat(" ", execHostColumn))
			b.WriteString(h)
			b.WriteByte('\n')
		}
	}
	if opt.PendReasons && isPending(j.GetState()) {
		for _, r := range pendReasons(j) {
			b.WriteString(" " + r + ";\n")
		}
	}
}

func TestJobRowMatchesReference(t *testing.T) {
	loc := time.FixedZone("X", 3600+30) // an offset with seconds
	names := []string{"", "short", "exactly10c", "a_much_longer_job_name", "ünïcödé_náme_long", "bad\xffutf8_name_long", "日本語のジョブ名です長い"}
	hosts := [][]*api.HostSlots{nil, {{Host: "h1", Slots: 1}}, {{Host: "averyverylonghostname", Slots: 4}, {Host: "h2", Slots: 1}, {Host: "h3", Slots: 2}}}
	states := []api.JobState{api.JobState_STATE_UNSPECIFIED, api.JobState_PEND, api.JobState_PSUSP, api.JobState_RUN, api.JobState_DONE}
	times := []int64{0, 1, -1, -int64(time.Second) / 2, 1700000000*int64(time.Second) + 999999999, 1700000059 * int64(time.Second)}
	var jobs []*api.Job
	n := 0
	for _, name := range names {
		for _, hs := range hosts {
			for _, st := range states {
				n++
				spec := &api.JobSpec{JobName: name, Command: "sleep 100; echo done", User: "user_" + name, SubmitHost: "submithost" + name, Queue: "queue" + name}
				if name == "" && n%2 == 0 {
					spec.Command, spec.CommandIsScript = "#!/bin/sh\n# c\nrun_this_program --with args\n", true
				}
				jobs = append(jobs, &api.Job{JobId: int64(n * 977), ArrayIndex: int32(n % 3 * 7), State: st, ExecHosts: hs,
					SubmitTime: times[n%len(times)], Spec: spec, Effective: spec, PendReason: "reason one\nreason two"})
			}
		}
	}
	for _, opt := range []JobsOptions{{}, {Wide: true}, {PendReasons: true, Location: loc}, {Wide: true, PendReasons: true, Location: loc}} {
		var want, got bytes.Buffer
		for _, j := range jobs {
			referenceJobRow(&want, j, opt)
		}
		if err := WriteJobs(&got, jobs, JobsOptions{NoHeader: true, Wide: opt.Wide, PendReasons: opt.PendReasons, Location: opt.Location}); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			g, w := strings.Split(got.String(), "\n"), strings.Split(want.String(), "\n")
			for i := range min(len(g), len(w)) {
				if g[i] != w[i] {
					t.Fatalf("%+v: line %d:\n got %q\nwant %q", opt, i, g[i], w[i])
				}
			}
			t.Fatalf("%+v: %d lines, want %d", opt, len(g), len(w))
		}
	}
}

// referenceJSONString is jsonString as it was, rune by rune.
func referenceJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestJSONStringMatchesReference(t *testing.T) {
	for _, s := range []string{"", "plain", `a "quoted" \path/to`, "tab\tnl\ncr\r\x01\x1f\x7f", "ünï 日本", "bad\xff\xfe utf8 \xe6\x97", "\xed\xa0\x80 surrogate"} {
		if got, want := jsonString(s), referenceJSONString(s); got != want {
			t.Errorf("jsonString(%q) = %q, want %q", s, got, want)
		}
	}
}

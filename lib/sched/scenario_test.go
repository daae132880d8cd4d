package sched

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected results of testdata/*.txt")

// TestScenarios runs the scenarios of testdata/*.txt. Each starts with
// "=== name" and has sections, one item a line:
//
//	hosts:    name slots [key=value ...] [closed|unavail|locked|boolean]
//	groups:   group member...
//	queues:   name priority [exclusive] [slotreserve] [fairshare] [slots=N] [uslots=N] [hslots=N] [hosts=a,b]
//	shared:   name=total
//	running:  id user queue started-ago run-limit|- host*slots,... [x] [| rusage [| used MB]]
//	jobs:     id [option ...] [| requirement]   (options as mkJob: n=2,4 u= q= P= x m= sp= W= age=)
//	expect:   what render prints, then "reserve <job> <hosts> <start>" per reservation
//
// The clock is 2026-01-05 09:00 UTC. go test -run Scenarios -update
// rewrites the expect sections.
func TestScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scenarios")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		blocks := strings.Split("\n"+string(data), "\n=== ")
		if head := strings.TrimSpace(blocks[0]); head != "" {
			out.WriteString(head + "\n\n")
		}
		for _, blk := range blocks[1:] {
			name, body, _ := strings.Cut(blk, "\n")
			s, want, rest := parseScenario(t, name, body)
			got := renderAll(s, Schedule(s))
			t.Run(name, func(t *testing.T) {
				if !*update && strings.TrimSpace(got) != strings.TrimSpace(want) {
					t.Errorf("%s: got:\n%s\nwant:\n%s", f, got, want)
				}
			})
			fmt.Fprintf(&out, "=== %s\n%sexpect:\n%s\n", name, rest, strings.TrimSpace(got))
			if !strings.HasSuffix(blk, "\n\n") && blk != blocks[len(blocks)-1] {
				out.WriteString("\n")
			}
		}
		if *update {
			if err := os.WriteFile(f, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func renderAll(s *Snapshot, d *Decision) string {
	var sb strings.Builder
	sb.WriteString(render(s, d))
	for _, r := range d.Reservations {
		fmt.Fprintf(&sb, "reserve %v:", r.Job)
		for _, h := range r.Hosts {
			fmt.Fprintf(&sb, " %s*%d", h.Host, h.Slots)
		}
		if r.Start.IsZero() {
			sb.WriteString(" when running jobs without a run limit end\n")
		} else {
			fmt.Fprintf(&sb, " at %s\n", r.Start.UTC().Format("15:04"))
		}
	}
	return sb.String()
}

// parseScenario returns the snapshot, the expected text, and the scenario
// text before "expect:".
func parseScenario(t *testing.T, name, body string) (*Snapshot, string, string) {
	s := snapshot(nil)
	before, want, _ := strings.Cut(body, "expect:\n")
	section := ""
	queuesSet := false
	for _, line := range strings.Split(before, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, ":") && !strings.Contains(line, " ") {
			section = strings.TrimSuffix(line, ":")
			continue
		}
		f := strings.Fields(line)
		switch section {
		case "hosts":
			s.Hosts = append(s.Hosts, mkHost(line))
		case "groups":
			if s.HostGroups == nil {
				s.HostGroups = map[string][]string{}
			}
			s.HostGroups[f[0]] = f[1:]
		case "queues":
			if !queuesSet {
				s.Queues, queuesSet = nil, true
			}
			q := Queue{Name: f[0]}
			fmt.Sscan(f[1], &q.Priority)
			for _, o := range f[2:] {
				k, v, _ := strings.Cut(o, "=")
				switch k {
				case "exclusive":
					q.Exclusive = true
				case "slotreserve":
					q.SlotReserve = true
				case "fairshare":
					q.Fairshare = &Fairshare{}
				case "inactive":
					q.Inactive = true
				case "slots":
					fmt.Sscan(v, &q.SlotLimit)
				case "uslots":
					fmt.Sscan(v, &q.UserSlotLimit)
				case "hslots":
					fmt.Sscan(v, &q.HostSlotLimit)
				case "hosts":
					q.Hosts = strings.Split(v, ",")
				default:
					t.Fatalf("%s: queue option %q", name, o)
				}
			}
			s.Queues = append(s.Queues, q)
		case "shared":
			if s.Shared == nil {
				s.Shared = map[string]float64{}
			}
			k, v, _ := strings.Cut(line, "=")
			var x float64
			fmt.Sscan(v, &x)
			s.Shared[k] = x
		case "running":
			parts := strings.Split(line, "|")
			id, spec, _ := strings.Cut(strings.TrimSpace(parts[0]), " ")
			var n int64
			fmt.Sscan(id, &n)
			rus, used := "", 0.0
			if len(parts) > 1 {
				rus = strings.TrimSpace(parts[1])
			}
			if len(parts) > 2 {
				fmt.Sscan(strings.TrimSpace(parts[2]), &used)
			}
			s.Running = append(s.Running, mkRun(n, spec, rus, used))
		case "jobs":
			spec, r, _ := strings.Cut(line, "|")
			f := strings.Fields(spec)
			var n int64
			fmt.Sscan(f[0], &n)
			s.Jobs = append(s.Jobs, mkJob(n, strings.TrimSpace(r), f[1:]...))
		default:
			t.Fatalf("%s: line %q outside a section", name, line)
		}
	}
	return s, want, before
}

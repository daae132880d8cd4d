package tests

import (
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The options of issue 6 for bqueues (-r, -m, -u, -o, -json), bhosts (-l,
// -R, -s, -o, -json), lshosts (-l, -R, -s) and lsload (-l, -I, -n, -R,
// -s), run as a user's shell would against a real xced.

// hostsQueuesConfig is an xce.toml with a fairshare queue, a queue for a
// host group and a user group, one that uses no host, a Boolean host
// attribute and a shared license pool.
func hostsQueuesConfig(t *testing.T) string {
	text := `
[cluster]
name = "e2e"
default_queue = "normal"

[resources.fast]
type = "boolean"

[resources.verilog]
total = 20
description = "simulator licenses"

[hosts.` + hostName() + `]
slots = 4
attributes = ["fast"]

[host_groups.cpu]
members = ["` + hostName() + `"]

[user_groups.chem]
members = ["alice", "bob"]

[queues.normal]
priority = 30
fairshare = { chem = 2, default = 1 }

[queues.short]
priority = 50
hosts = ["cpu"]
users = ["chem"]
max_run_limit = "1h"
max_tasks = 2

[queues.nohost]
priority = 10
hosts = ["none"]
`
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// keepWidth replaces word, with the blanks after it, by repl and as many
// blanks as keep the width (one at least where there were some), so that
// columns after a host or user name stay where they were.
func keepWidth(s, word, repl string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b( *)`)
	return re.ReplaceAllStringFunc(s, func(m string) string {
		pad := len(m) - len(repl)
		if len(m) > len(word) {
			pad = max(pad, 1)
		} else {
			pad = 0
		}
		return repl + strings.Repeat(" ", max(pad, 0))
	})
}

// hqNormalize masks this host and this user, keeping column widths.
func hqNormalize(s string) string {
	s = keepWidth(s, hostName(), "HOST")
	if u, err := user.Current(); err == nil {
		s = keepWidth(s, u.Username, "USER")
	}
	return s
}

var loadNumber = regexp.MustCompile(`^(\d+(\.\d+)?[%MGT]?|-)$`)

// maskLoad rewrites the lines that start with one of prefixes (after
// blanks) as their words, numbers and "-" replaced by N, joined by one
// blank: load values differ from run to run, and a host may not report
// some (no swap, no /proc/cpuinfo topology).
func maskLoad(s string, prefixes ...string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 || !slices.Contains(prefixes, f[0]) {
			continue
		}
		for k := 1; k < len(f); k++ {
			if loadNumber.MatchString(f[k]) {
				f[k] = "N"
			}
		}
		lines[i] = "~ " + strings.Join(f, " ")
	}
	return strings.Join(lines, "\n")
}

// bqueues -m, -u, -o, -json and -r; -l keeps its layout.
func TestHostsQueuesBqueues(t *testing.T) {
	c := newCluster(t, "--config", hostsQueuesConfig(t))
	var all strings.Builder
	for _, args := range [][]string{
		{"-m", hostName()}, {"-m", "cpu"}, {"-m", "all"}, {"-m", "e2e"},
		{"-u", "alice"}, {"-u", "chem"}, {"-u", "all"},
		{"-m", "cpu", "-u", "all", "-w"}, {"-m", hostName(), "short", "normal"},
	} {
		all.WriteString("$ bqueues " + strings.Join(args, " ") + "\n" + c.must("", "bqueues", args...))
	}
	golden(t, "bqueues_m_u", hqNormalize(all.String()))
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-m", "nosuch"}, "nosuch: Bad host name, host group name or cluster name\n"},
		{[]string{"-m", hostName(), "nohost"}, hostName() + ": Host or host group is not used by the queue\n"},
		{[]string{"-u", "nosuchuser_xce"}, "nosuchuser_xce: Unknown user\n"},
		{[]string{"-u", "alice", "nohost", "normal"}, ""},
		{[]string{"-u", "bob", "short"}, ""},
		{[]string{"-o", "queue_name nosuch"}, "nosuch in the format string is not a valid field name.\n"},
	} {
		r := c.run("", "bqueues", tc.args...)
		if tc.stderr == "" {
			if r.code != 0 {
				t.Errorf("bqueues %v: exit %d, %q", tc.args, r.code, r.stderr)
			}
			continue
		}
		if r.code != 255 || r.stderr != tc.stderr || r.stdout != "" {
			t.Errorf("bqueues %v: exit %d, stdout %q, stderr %q; want 255 and %q", tc.args, r.code, r.stdout, r.stderr, tc.stderr)
		}
	}
	if r := c.run("", "bqueues", "-u", u(t), "short"); r.code != 255 || r.stderr != u(t)+": User cannot use the queue\n" {
		t.Errorf("bqueues -u me short: exit %d, %q", r.code, r.stderr)
	}

	// Two held jobs in the fairshare queue: an account with its default
	// share, priority 1/3, nothing started yet.
	c.submit("", "-H", "sleep 60")
	c.submit("", "-H", "sleep 60")
	var custom strings.Builder
	for _, args := range [][]string{
		{"-o", "queue_name:10 prio:-4 status max jl_u njobs pend run susp hosts max_runlimit max_tasklimit"},
		{"-o", "qname stat njobs pend delimiter=','", "-noheader"},
		{"-o", "queue_name priority status max njobs pend hosts", "-json", "normal", "short"},
	} {
		custom.WriteString("$ bqueues " + strings.Join(args, " ") + "\n" + c.must("", "bqueues", args...))
	}
	t.Setenv("LSB_BQUEUES_FORMAT", "queue_name njobs pend")
	custom.WriteString("$ LSB_BQUEUES_FORMAT='queue_name njobs pend' bqueues\n" + c.must("", "bqueues"))
	custom.WriteString("$ LSB_BQUEUES_FORMAT='queue_name njobs pend' bqueues -o 'qname prio'\n" + c.must("", "bqueues", "-o", "qname prio"))
	t.Setenv("LSB_BQUEUES_FORMAT", "")
	golden(t, "bqueues_o", hqNormalize(custom.String()))

	golden(t, "bqueues_r", hqNormalize(c.must("", "bqueues", "-r", "normal", "short")))
	if out := c.must("", "bqueues", "-l", "normal"); strings.Contains(out, "SHARE_INFO_FOR") {
		t.Errorf("bqueues -l shows the share accounts:\n%s", out)
	}
	// A running job: STARTED 1, and its run time counts.
	id := c.submit("", "sleep 60")
	c.waitState(id, "RUN")
	out := c.must("", "bqueues", "-r", "normal")
	if !regexp.MustCompile(`(?m)^ ` + regexp.QuoteMeta(u(t)) + ` +1 +0\.\d{3} +1 +0 +\d+\.\d +\d+ +0\.000$`).MatchString(out) {
		t.Errorf("bqueues -r with a running job:\n%s", out)
	}
}

// u is the user the tests run as.
func u(t *testing.T) string {
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	return me.Username
}

// bhosts -l (with an administrator's comment and a license reservation),
// -s, -R, -o and -json; lshosts -s and lsload -s.
func TestHostsQueuesBhosts(t *testing.T) {
	c := newCluster(t, "--config", hostsQueuesConfig(t))
	id := c.submit("", "-R", "rusage[verilog=3]", "sleep 60")
	c.waitState(id, "RUN")
	c.must("", "badmin", "hclose", "-C", "Weekly backup", hostName())

	long := c.must("", "bhosts", "-l")
	golden(t, "bhosts_l", maskLoad(hqNormalize(long), "Total"))

	var shared strings.Builder
	for _, cmd := range [][]string{
		{"bhosts", "-s"}, {"bhosts", "-s", "verilog"}, {"lshosts", "-s"}, {"lsload", "-s", "verilog"},
	} {
		shared.WriteString("$ " + strings.Join(cmd, " ") + "\n" + c.must("", cmd[0], cmd[1:]...))
	}
	golden(t, "bhosts_s", hqNormalize(shared.String()))

	var custom strings.Builder
	for _, args := range [][]string{
		{"-o", "host_name status cpuf max njobs run ssusp ususp rsv comments"},
		{"-o", "hname:40 stat:6 max:-4 njobs delimiter=';'"},
		{"-o", "host_name status jl_u max njobs run dispatch_window comments", "-json"},
	} {
		custom.WriteString("$ bhosts " + strings.Join(args, " ") + "\n" + c.must("", "bhosts", args...))
	}
	golden(t, "bhosts_o", hqNormalize(custom.String()))

	// -R selects on what the scheduler sees: the attribute, free slots.
	for _, rr := range []string{"fast", "select[fast && slots >= 3] order[mem]", "defined(fast) && maxslots == 4", "type == any", "ncpus > 0 && cpuf == 1"} {
		if out := c.must("", "bhosts", "-w", "-R", rr); !strings.Contains(out, "\n"+hostName()+" ") {
			t.Errorf("bhosts -R %q:\n%s", rr, out)
		}
	}
	for _, tc := range []struct{ rr, stderr string }{
		{"!fast", "No host is eligible\n"},
		{"slots >= 4", "No host is eligible\n"},
		{"select[", "select[: column 8: expected a selection string (a number, a resource name or '('), found the end of the string. Bad resource requirement syntax.\n"},
		{"nosuchres > 1", "nosuchres > 1: column 1: unknown resource name 'nosuchres'. Bad resource requirement syntax.\n"},
	} {
		if r := c.run("", "bhosts", "-R", tc.rr); r.code != 255 || r.stderr != tc.stderr {
			t.Errorf("bhosts -R %q: exit %d, %q; want 255, %q", tc.rr, r.code, r.stderr, tc.stderr)
		}
	}
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"bhosts", "-s", "nosuch"}, "nosuch: Bad resource name\n"},
		{[]string{"bhosts", "-s", "-l"}, "bhosts: -s cannot be used with -l, -w, -R or -o\n"},
		{[]string{"lshosts", "-s", "-R", "fast"}, "lshosts: -s cannot be used with -l, -w or -R\n"},
		{[]string{"lsload", "-s", "-I", "mem"}, "lsload: -s cannot be used with -l, -w, -I, -n or -R\n"},
		{[]string{"bhosts", "-o", "host_name jl_p"}, "jl_p in the format string is not a valid field name.\n"},
	} {
		r := c.run("", tc.args[0], tc.args[1:]...)
		if r.code != 255 || !strings.HasPrefix(r.stderr, tc.stderr) {
			t.Errorf("%v: exit %d, %q; want 255, %q", tc.args, r.code, r.stderr, tc.stderr)
		}
	}

	// Opened again, the comment is gone.
	c.must("", "badmin", "hopen", hostName())
	if out := c.must("", "bhosts", "-l"); strings.Contains(out, "ADMIN ACTION COMMENT") {
		t.Errorf("bhosts -l after hopen:\n%s", out)
	}
}

// lshosts -l and -R; lsload -l, -I, -n and -R.
func TestHostsQueuesLsCommands(t *testing.T) {
	c := newCluster(t, "--config", hostsQueuesConfig(t))
	var out strings.Builder
	for _, cmd := range [][]string{
		{"lshosts", "-l"},
		{"lshosts", "-l", hostName()},
		{"lsload", "-l"},
		{"lsload", "-I", "r15s:mem:swap:io"},
		{"lsload", "-l", "-I", "ut:it"},
		{"lsload", "-n", "1", "-R", "mem > 0 order[mem]"},
		{"lsload", "-n", "5"},
	} {
		out.WriteString("$ " + strings.Join(cmd, " ") + "\n" + c.must("", cmd[0], cmd[1:]...))
	}
	// The static description and the load vary from host to host.
	golden(t, "ls_long", maskLoad(hqNormalize(out.String()), "X86_64", "HOST"))

	if r := c.must("", "lshosts", "-R", "fast && ncpus > 0"); !strings.Contains(r, "(fast)") {
		t.Errorf("lshosts -R fast:\n%s", r)
	}
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"lshosts", "-R", "!fast"}, "lshosts: No host is eligible\n"},
		{[]string{"lsload", "-R", "type == nosuchtype"}, "lsload: No host is eligible\n"},
		{[]string{"lsload", "-I", "r1m:bogus"}, "lsload: bogus: Bad index name list (the load indices are r15s r1m r15m ut pg io ls it tmp swp mem)\n"},
		{[]string{"lsload", "-n", "0"}, "lsload: 0: the number of hosts must be positive\n"},
		{[]string{"lsload", "-R", "1 +"}, "1 +: column 4:"},
	} {
		r := c.run("", tc.args[0], tc.args[1:]...)
		if r.code != 255 || !strings.HasPrefix(r.stderr, tc.stderr) {
			t.Errorf("%v: exit %d, %q; want 255, %q", tc.args, r.code, r.stderr, tc.stderr)
		}
	}
}

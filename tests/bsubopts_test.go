package tests

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bsub's groups, login shell, CPU limit and the environment variables
// LSF's bsub reads, each checked as a user's shell sees them.
func TestBsubGroupsAndDefaults(t *testing.T) {
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	path := filepath.Join(t.TempDir(), "xce.toml")
	conf := "[user_groups.chem]\nmembers = [\"" + me + "\", \"bob\"]\n\n[user_groups.phys]\nmembers = [\"alice\"]\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	field := func(id, name string) string {
		return strings.TrimSpace(c.must("", "bjobs", "-a", "-noheader", "-o", name, id))
	}
	refused := func(want string, args ...string) {
		t.Helper()
		r := c.run("", "bsub", args...)
		if r.code != 255 || r.stderr != want+". Job not submitted.\n" {
			t.Errorf("bsub %s: exit %d, stderr %q, want %q", strings.Join(args, " "), r.code, r.stderr, want)
		}
	}

	// -G: a configured group the user is in.
	id := c.submit("", "-H", "-G", "chem", "true")
	if g := field(id, "user_group"); g != "chem" {
		t.Errorf("user_group = %q", g)
	}
	if l := c.must("", "bjobs", "-l", id); !strings.Contains(l, "User Group <chem>") {
		t.Errorf("bjobs -l:\n%s", l)
	}
	refused("nosuch: Bad user group name", "-G", "nosuch", "true")
	refused("phys: User not in the specified user group", "-G", "phys", "true")

	// -g: job group paths as LSF writes them.
	id = c.submit("", "-H", "-g", "/risk/daily", "true")
	if g := field(id, "job_group"); g != "/risk/daily" {
		t.Errorf("job_group = %q", g)
	}
	for _, bad := range []string{"risk", "/risk/", "/a//b", "/a b"} {
		refused(bad+": Bad/empty job group name", "-g", bad, "true")
	}

	// LSB_DEFAULT_JOBGROUP (with %p and %u) and LSB_DEFAULT_USERGROUP
	// stand in for -g and -G.
	t.Setenv("LSB_DEFAULT_JOBGROUP", "/proj/%p/%u")
	t.Setenv("LSB_DEFAULT_USERGROUP", "chem")
	id = c.submit("", "-H", "-P", "p1", "true")
	if g, ug := field(id, "job_group"), field(id, "user_group"); g != "/proj/p1/"+me || ug != "chem" {
		t.Errorf("defaults: job_group %q user_group %q", g, ug)
	}
	id = c.submit("", "-H", "-g", "/mine", "-G", "chem", "true")
	if g := field(id, "job_group"); g != "/mine" {
		t.Errorf("-g did not win over LSB_DEFAULT_JOBGROUP: %q", g)
	}
	os.Unsetenv("LSB_DEFAULT_JOBGROUP")
	os.Unsetenv("LSB_DEFAULT_USERGROUP")

	// -L: the login shell builds the environment; the submission's
	// variables stay behind.
	t.Setenv("XCE_TEST_MARK", "from-submission")
	id = c.submit("", "-L", "/bin/sh", "-o", "login.out", `echo "mark=$XCE_TEST_MARK shell=$SHELL"`)
	c.waitState(id, "DONE")
	if b, _ := os.ReadFile(filepath.Join(c.work, "login.out")); !strings.HasPrefix(jobOutput(t, string(b)), "mark= shell=/bin/sh\n") {
		t.Errorf("-L job wrote %q", b)
	}
	refused("sh: The login shell must be an absolute path", "-L", "sh", "true")

	// -c: the CPU time limit, shown by bjobs -l.
	id = c.submit("", "-H", "-c", "1:30", "true")
	if l := c.must("", "bjobs", "-l", id); !strings.Contains(l, "CPULIMIT") || !strings.Contains(l, "90.0 min") {
		t.Errorf("bjobs -l of -c 1:30:\n%s", l)
	}
	refused("1:75: Bad CPULIMIT specification", "-c", "1:75", "true")

	// Interactive jobs cannot be rerunnable; a pseudo-terminal takes no
	// input file (lsb.err's texts).
	refused("Interactive job cannot be rerunnable", "-I", "-r", "true")
	refused("Input file not allowed with pseudo-terminal", "-Ip", "-i", "/dev/null", "true")

	// BSUB_CHK_RESREQ: check the requirement, submit nothing.
	before := c.must("", "bjobs", "-a", "-noheader", "-o", "jobid")
	t.Setenv("BSUB_CHK_RESREQ", "1")
	if r := c.run("", "bsub", "-R", "select[mem > 100] rusage[mem=10]", "true"); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("BSUB_CHK_RESREQ with a good string: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := c.run("", "bsub", "-R", "select[mem >", "true"); r.code != 255 || !strings.Contains(r.stderr, "Bad resource requirement syntax") {
		t.Errorf("BSUB_CHK_RESREQ with a bad string: %d %q", r.code, r.stderr)
	}
	os.Unsetenv("BSUB_CHK_RESREQ")
	if after := c.must("", "bjobs", "-a", "-noheader", "-o", "jobid"); after != before {
		t.Errorf("BSUB_CHK_RESREQ submitted a job:\n%s\nthen\n%s", before, after)
	}

	// BSUB_QUIET2: no <<Job is finished>> after -K.
	t.Setenv("BSUB_QUIET2", "1")
	if r := c.run("", "bsub", "-K", "true"); r.code != 0 || r.stderr != "<<Waiting for dispatch ...>>\n" {
		t.Errorf("BSUB_QUIET2 -K: %d %q", r.code, r.stderr)
	}
}

// After the clean period a finished job is gone: bjobs answers as LSF
// does for an unknown job (exit 0 for a single id, as IBM's examples).
func TestBjobsAfterCleanPeriod(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte("[cluster]\nclean_period = \"2s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	id := c.submit("", "true")
	c.waitState(id, "DONE")
	if r := c.run("", "bjobs", id); r.code != 0 || !strings.Contains(r.stdout, "DONE") {
		t.Fatalf("within the clean period: %d %q %q", r.code, r.stdout, r.stderr)
	}
	var r result
	for i := 0; i < 100; i++ {
		if r = c.run("", "bjobs", id); strings.Contains(r.stderr, "is not found") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.code != 0 || r.stdout != "" || r.stderr != "Job <"+id+"> is not found\n" {
		t.Fatalf("after the clean period: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := c.run("", "bjobs", "-a"); r.code != 0 || r.stderr != "No job found\n" {
		t.Fatalf("bjobs -a after the clean period: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// bjgroup lists the groups jobs were submitted to, with the groups above
// them, counting subgroups' jobs.
func TestBjgroup(t *testing.T) {
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	c := newCluster(t)
	if r := c.run("", "bjgroup"); r.code != 0 || r.stderr != "No job group found\n" {
		t.Fatalf("bjgroup with no groups: %d %q %q", r.code, r.stdout, r.stderr)
	}
	c.submit("", "-H", "-g", "/risk/daily", "true")
	c.submit("", "-H", "-g", "/risk/daily", "true")
	run := c.submit("", "-g", "/risk/weekly", "sleep 60")
	c.submit("", "-H", "-g", "/ops", "true")
	c.waitState(run, "RUN")
	row := func(name string, njobs, pend, running int) string {
		return fmt.Sprintf("%-18s %-7d %-7d %-6d %-6d %-6d %-7d %-5s %7s  %s\n", name, njobs, pend, running, 0, 0, 0, "()", fmt.Sprintf("%d/-", running), me)
	}
	head := "GROUP_NAME         NJOBS   PEND    RUN    SSUSP  USUSP  FINISH  SLA    JLIMIT  OWNER\n"
	if out := c.must("", "bjgroup"); out != head+row("/ops", 1, 1, 0)+row("/risk", 3, 2, 1)+row("/risk/daily", 2, 2, 0)+row("/risk/weekly", 1, 0, 1) {
		t.Errorf("bjgroup:\n%s", out)
	}
	if out := c.must("", "bjgroup", "-s", "/risk/"); out != head+row("/risk", 3, 2, 1) {
		t.Errorf("bjgroup -s /risk/:\n%s", out)
	}
	if r := c.run("", "bjgroup", "-s", "/nosuch"); r.code != 255 || r.stderr != "/nosuch: Job group does not exist\n" {
		t.Errorf("bjgroup -s /nosuch: %d %q", r.code, r.stderr)
	}
	c.must("", "bkill", run)
}

// -Q and the queue's requeue_exit_values send a job that exits with one
// of the codes back to pending; -F, -p and -v limit it as LSF does.
func TestRequeueExitAndLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	conf := "[cluster]\ndefault_queue = \"normal\"\n\n[queues.normal]\nrequeue_exit_values = \"4\"\n\n[queues.plain]\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	// Fails once with the code, then succeeds: requeued, then DONE.
	once := func(marker string, code int) string {
		return fmt.Sprintf("if [ -f %s ]; then exit 0; fi; touch %s; exit %d", marker, marker, code)
	}
	q := c.submit("", "-q", "plain", "-Q", "3 EXCLUDE(9)", once("m1", 3))
	c.waitState(q, "DONE")
	if h := c.must("", "bhist", "-l", q); !strings.Contains(strings.ReplaceAll(h, "\n                     ", ""), "requeued") {
		t.Errorf("bhist -l does not show the requeue:\n%s", h)
	}
	qq := c.submit("", once("m2", 4)) // the queue's values
	c.waitState(qq, "DONE")
	other := c.submit("", "-q", "plain", once("m3", 5)) // no values: EXIT
	c.waitState(other, "EXIT")
	if r := c.run("", "bsub", "-Q", "all ~x", "true"); r.code != 255 || !strings.Contains(r.stderr, "Bad requeue exit value") {
		t.Errorf("bsub -Q 'all ~x': %d %q", r.code, r.stderr)
	}

	// -F: the file stops at the limit; -p: too many processes end the job.
	f := c.submit("", "-F", "8", "-o", "f.out", "head -c 20000 /dev/zero > big; wc -c < big")
	c.waitState(f, "DONE", "EXIT")
	if b, _ := os.ReadFile(filepath.Join(c.work, "f.out")); !strings.Contains(string(b), "\n8192\n") {
		t.Errorf("-F 8 job wrote %q", b)
	}
	p := c.submit("", "-p", "2", "sleep 30 & sleep 30 & sleep 30 & wait")
	c.waitState(p, "EXIT")
	l := c.must("", "bjobs", "-l", p)
	if !strings.Contains(l, "TERM_PROCESSLIMIT") || !strings.Contains(l, "PROCESSLIMIT") {
		t.Errorf("bjobs -l of a -p job:\n%s", l)
	}
	if l := c.must("", "bjobs", "-l", f); !strings.Contains(l, "FILELIMIT") {
		t.Errorf("bjobs -l of a -F job:\n%s", l)
	}
}

// -wa/-wt are checked as bsub reads them and shown by bjobs -l's
// submission (the warning itself is exercised in lib/exec, whose run
// limits can be seconds).
func TestBsubWarningAction(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "-H", "-W", "10", "-wa", "USR1", "-wt", "2", "true")
	if got := strings.Fields(c.must("", "bjobs", "-noheader", "-o", "stat warn_act warn_time", id)); strings.Join(got, " ") != "PSUSP USR1 2.0" {
		t.Fatalf("bjobs -o stat warn_act warn_time: %v", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-wa", "NOPE", "-wt", "2", "true"}, "NOPE: Bad job warning action"},
		{[]string{"-wa", "USR1", "-wt", "1:99", "true"}, "1:99: Bad job warning time"},
		{[]string{"-wa", "USR1", "true"}, "-wa and -wt must be given together"},
	} {
		if r := c.run("", "bsub", tc.args...); r.code != 255 || r.stderr != tc.want+". Job not submitted.\n" {
			t.Errorf("bsub %v: %d %q", tc.args, r.code, r.stderr)
		}
	}
	c.must("", "bkill", id)
}

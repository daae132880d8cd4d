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
	if b, _ := os.ReadFile(filepath.Join(c.work, "login.out")); !strings.HasPrefix(string(b), "mark= shell=/bin/sh\n") {
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

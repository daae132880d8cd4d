package tests

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The commands of issue 6 that need no more than the existing RPCs: lsid,
// lshosts, lsload, busers, bacct and bjobs -sum, -A, -W, -hms.

func TestCmdsLsid(t *testing.T) {
	c := newCluster(t)
	out := normalize(c.must("", "lsid"))
	banner, rest, _ := strings.Cut(out, "\n")
	want := "\nMy cluster name is xce\nMy master name is HOST\n"
	if !strings.HasPrefix(banner, "XCE "+testRelease+", revision ") || rest != want {
		t.Errorf("lsid:\n%q\nwant\n%q", out, want)
	}
	if r := c.run("", "lsid", "extra"); r.code != 255 || !strings.Contains(r.stderr, "Usage: lsid") {
		t.Errorf("lsid extra: exit %d, %q", r.code, r.stderr)
	}
	if r := c.run("", "lsid", "-V"); r.code != 0 || !strings.HasPrefix(r.stderr, "XCE ") {
		t.Errorf("lsid -V: exit %d, %q", r.code, r.stderr)
	}
}

func TestCmdsLshostsLsload(t *testing.T) {
	c := newCluster(t)
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	out := c.must("", "lshosts")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "HOST_NAME      type    model  cpuf ncpus maxmem maxswp server RESOURCES" {
		t.Fatalf("lshosts:\n%s", out)
	}
	// The row: name, type, model, cpuf, ncpus, maxmem, maxswp, Yes, (resources).
	if !regexp.MustCompile(`^\S+ +\S+ +\S+ +\S+ +\d+ +(\d+M|[\d.]+[GT]|-) +\S+ +Yes \(.*\)$`).MatchString(lines[1]) {
		t.Errorf("lshosts row %q", lines[1])
	}
	if wide := c.must("", "lshosts", "-w"); !strings.HasPrefix(wide, "HOST_NAME                 ") || !strings.Contains(wide, "\n"+host+" ") {
		t.Errorf("lshosts -w:\n%s", wide)
	}
	out = c.must("", "lsload")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "HOST_NAME       status  r15s   r1m  r15m   ut    pg  ls    it   tmp   swp   mem" {
		t.Fatalf("lsload:\n%s", out)
	}
	if f := strings.Fields(lines[1]); len(f) != 12 || f[1] != "ok" || !strings.HasSuffix(f[5], "%") {
		t.Errorf("lsload row %q", lines[1])
	}
	if wide := c.must("", "lsload", "-w", host); !strings.HasPrefix(wide, "HOST_NAME                 status") {
		t.Errorf("lsload -w:\n%s", wide)
	}
	for _, cmd := range []string{"lshosts", "lsload"} {
		r := c.run("", cmd, "nosuchhost")
		if r.code != 255 || !strings.Contains(r.stderr, "nosuchhost: Bad host name") {
			t.Errorf("%s nosuchhost: exit %d, %q", cmd, r.code, r.stderr)
		}
	}
}

func TestCmdsBusers(t *testing.T) {
	c := newCluster(t)
	c.submit("", "-n", "2", "sleep 30")
	held := c.submit("", "-H", "sleep 30")
	c.waitState(held, "PSUSP")
	header := "USER/GROUP          JL/P    MAX  NJOBS   PEND    RUN  SSUSP  USUSP    RSV \n"
	row := regexp.MustCompile(`(?m)^USER +- +- +3 +1 +2 +0 +0 +0$`)
	deadline := 0
	for {
		out := normalize(c.must("", "busers"))
		if strings.HasPrefix(out, header) && row.MatchString(out) && strings.Count(out, "\n") == 2 {
			break
		}
		if deadline++; deadline > 100 {
			t.Fatalf("busers:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond) // the first job is starting
	}
	if out := normalize(c.must("", "busers", "all")); !row.MatchString(out) {
		t.Errorf("busers all:\n%s", out)
	}
	if out := normalize(c.must("", "busers", "-w")); !regexp.MustCompile(`(?m)^USER +- +- +3 +1 +2 +0 +0 +0 +- +1 +-$`).MatchString(out) {
		t.Errorf("busers -w:\n%s", out)
	}
	// A user without jobs gets a line of zeros (one the system does not
	// know is refused: tests/badinput_test.go).
	for _, name := range []string{"nobody", "daemon", "bin"} {
		if _, err := user.Lookup(name); err != nil {
			continue
		}
		out := c.must("", "busers", name, "-w")
		if !strings.HasSuffix(out, fmt.Sprintf("\n%-18s     -      -      0      0      0      0      0      0      -      0      -\n", name)) {
			t.Errorf("busers %s:\n%q", name, out)
		}
		break
	}
	c.must("", "bkill", "0")
}

func TestCmdsBjobsSumArraysWide(t *testing.T) {
	c := newCluster(t)
	arr := c.submit("", "-J", "sweep[1-3]", "sleep 30")
	held := c.submit("", "-H", "-n", "2", "sleep 30")
	c.waitState(arr, "RUN")
	c.waitState(held, "PSUSP")

	sum := c.must("", "bjobs", "-sum")
	want := "RUN        SSUSP       USUSP      UNKNOWN    PEND       FWD_PEND  PSUSP    \n" +
		"3          0           0          0          0          0         2        \n"
	if sum != want {
		t.Errorf("bjobs -sum:\n%q\nwant\n%q", sum, want)
	}

	arrays := normalize(c.must("", "bjobs", "-A"))
	want = "JOBID    ARRAY_SPEC  OWNER   NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP\n" +
		padID(arr, 7) + "  sweep[1-     USER       3    0    0    3    0     0     0     0\n"
	if arrays != want {
		t.Errorf("bjobs -A:\n%q\nwant\n%q", arrays, want)
	}
	if r := c.run("", "bjobs", "-A", "999999"); r.code != 0 || r.stderr != "Job array <999999> is not found\n" {
		t.Errorf("bjobs -A 999999: exit %d, %q", r.code, r.stderr)
	}

	wide := c.must("", "bjobs", "-W", held)
	lines := strings.Split(strings.TrimSuffix(wide, "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "SUBMIT_TIME  PROJ_NAME CPU_USED MEM SWAP PIDS START_TIME FINISH_TIME") {
		t.Fatalf("bjobs -W:\n%s", wide)
	}
	f := strings.Fields(lines[1])
	// JOB_NAME "sleep 30" is two words.
	if len(f) != 16 || f[2] != "PSUSP" || !regexp.MustCompile(`^\d\d/\d\d-\d\d:\d\d:\d\d$`).MatchString(f[8]) || f[9] != "default" || f[15] != "-" {
		t.Errorf("bjobs -W row %q", lines[1])
	}
	running := strings.Fields(strings.Split(c.must("", "bjobs", "-W", "-noheader", arr+"[1]"), "\n")[0])
	if len(running) != 15 || !regexp.MustCompile(`^\d{3}:\d\d:\d\d\.\d\d$`).MatchString(running[9]) || running[14] != "-" {
		t.Errorf("bjobs -W running element %q", running)
	}

	hms := c.must("", "bjobs", "-noheader", "-hms", "-o", "run_time", arr+"[1]")
	if !regexp.MustCompile(`^\d\d:\d\d:\d\d\n$`).MatchString(hms) {
		t.Errorf("bjobs -hms -o run_time: %q", hms)
	}
	c.must("", "bkill", "0")
}

func TestCmdsBacct(t *testing.T) {
	c := newCluster(t)
	done := c.submit("", "true")
	failed := c.submit("", "exit 3")
	c.waitState(done, "DONE")
	c.waitState(failed, "EXIT")

	out := normalize(c.must("", "bacct"))
	for _, want := range []string{
		"Accounting information about jobs that are: \n  - submitted by users USER, \n  - accounted on all projects.\n" +
			"  - completed normally or exited\n  - executed on all hosts.\n  - submitted to all queues.\n" +
			"  - accounted on all service classes.\n" + strings.Repeat("-", 78) + "\n\nSUMMARY:      ( time unit: second ) \n",
		" Total number of done jobs:       1      Total number of exited jobs:     1\n",
		" Average turnaround time:",
		" Beginning time:       Mmm dd hh:mm      Ending time:          Mmm dd hh:mm\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bacct lacks %q:\n%s", want, out)
		}
	}
	long := c.must("", "bacct", "-l", "-u", "all", "-q", "normal", failed)
	for _, want := range []string{
		"  - submitted by all users.\n",
		"  - submitted to queues normal, \n",
		"Job <" + failed + ">, User <",
		"Completed <exit>.\n",
		"\nAccounting information about this job:\n     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP\n",
		" Total number of done jobs:       0      Total number of exited jobs:     1\n",
	} {
		if !strings.Contains(long, want) {
			t.Errorf("bacct -l lacks %q:\n%s", want, long)
		}
	}
	if !regexp.MustCompile(`\n +\d+\.\d\d +\d+ +\d+ +exit +\d+\.\d{4} +\d+M +\d+M\n`).MatchString(long) {
		t.Errorf("bacct -l job line:\n%s", long)
	}
	if r := c.run("", "bacct", "-q", "nosuchqueue"); r.code != 255 || !strings.Contains(r.stderr, "No matching job found") {
		t.Errorf("bacct -q nosuchqueue: exit %d, %q", r.code, r.stderr)
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	out = c.must("", "bacct", "-m", host, "-P", "default")
	for _, want := range []string{"  - accounted on projects default, \n", "  - executed on hosts " + host + ", \n", "done jobs:       1      Total number of exited jobs:     1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("bacct -m -P lacks %q:\n%s", want, out)
		}
	}
	if r := c.run("", "bacct", "-P", "nosuchproject"); r.code != 255 {
		t.Errorf("bacct -P nosuchproject: exit %d, %q", r.code, r.stderr)
	}
}

// padID is a job id as "%-Nd" prints it.
func padID(id string, n int) string {
	for len(id) < n {
		id += " "
	}
	return id
}

// bparams, bugroup and bmgroup read the cluster's configuration.
func TestCmdsParamsGroups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	os.WriteFile(path, []byte("[cluster]\ndefault_queue = \"normal\"\nclean_period = \"2h\"\n\n[hosts."+host+"]\n\n[host_groups.mine]\nmembers = [\""+host+"\"]\n\n[user_groups.chem]\nmembers = [\"alice\", \"bob\"]\n\n[queues.normal]\n"), 0o644)
	c := newCluster(t, "--config", path)
	if out := c.must("", "bparams"); !strings.HasPrefix(out, "Default Queues:  normal\n") || !strings.Contains(out, "CLEAN_PERIOD:  7200 seconds") {
		t.Errorf("bparams:\n%s", out)
	}
	if out := c.must("", "bugroup"); out != "GROUP_NAME    USERS\nchem          alice bob\n" {
		t.Errorf("bugroup:\n%q", out)
	}
	if out := c.must("", "bmgroup", "mine"); out != "GROUP_NAME    HOSTS\nmine          "+host+"\n" {
		t.Errorf("bmgroup:\n%q", out)
	}
	if r := c.run("", "bugroup", "nosuch"); r.code != 255 || r.stderr != "nosuch: No such user/host group\n" {
		t.Errorf("bugroup nosuch: %d %q", r.code, r.stderr)
	}
}

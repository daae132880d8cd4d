package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// Finding: a job stopped its shepherd (same user), wrote its own usage
// and status files, and killed the shepherd: bjobs and bacct showed
// negative CPU time (which raised its user's fairshare priority) and 93 TB
// of memory, a fake POST_DONE satisfied post_done() dependencies, and a
// fake pre-exec failure sent the job back to pending. Now the shepherd is
// out of the job's reach and records the end and usage in root's files;
// the job's files are not read, and every value is range-checked.
func TestTrustForgedStatus(t *testing.T) {
	uid := testUser(t, "xcetest1")
	c := trustCluster(t)
	const lie = -9_000_000_000_000 // ms of CPU
	const huge = 93_000_000_000    // KB: 93 TB
	write := func(name string, m proto.Message) {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.work, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	usage := &api.ResourceUsage{CpuTimeMs: lie, MemKb: huge, MaxMemKb: huge, AvgMemKb: huge, Nprocs: -3}
	write("fake-usage", usage)
	write("fake-done", &api.Event{Type: api.EventType_FINISH, State: api.JobState_DONE, Time: time.Now().UnixNano(),
		CpuTimeMs: lie, Usage: usage, Detail: "POST_DONE: post-exec command done successfully"})
	write("fake-preexec", &api.Event{Type: api.EventType_PEND_AGAIN, State: api.JobState_PEND, ExitStatus: 1,
		Time: time.Now().UnixNano(), Detail: "The job's pre-exec command exited with non-zero status (exit code 1)"})

	// The job: stop the shepherd (the session leader), forge the usage
	// file, wait for the test's go, forge the status file, kill the
	// shepherd.
	w := c.work
	forge := func(status string) string {
		return `set -- $(cat /proc/$$/stat); sid=$6; d=$(dirname "$LSB_JOBFILENAME"); kill -STOP $sid; ` +
			`cp ` + w + `/fake-usage "$d/u.new" && mv -f "$d/u.new" "$d/status.usage"; touch ` + w + `/forged.$LSB_JOBID; ` +
			`while [ ! -e ` + w + `/go.$LSB_JOBID ]; do sleep 0.2; done; ` +
			`cp ` + w + `/` + status + ` "$d/s.new" && mv -f "$d/s.new" "$d/status"; kill -KILL $sid; sleep 300`
	}
	// With a post-exec that the job keeps from running by killing its
	// shepherd.
	a := submitAs(t, c, uid, "-o", "/dev/null", "-Ep", "true", forge("fake-done"))
	dep := submitAs(t, c, uid, "-o", "/dev/null", "-w", "post_done("+a+")", "true")
	c.waitState(a, "RUN")
	waitFile(t, filepath.Join(w, "forged."+a))
	memTotal := hostMemKb(t)
	for i := 0; i < 5; i++ {
		out := c.must("", "bjobs", "-noheader", "-o", "cpu_used max_mem mem", a)
		checkUsageOut(t, "bjobs while the usage file is forged", out, memTotal)
		time.Sleep(200 * time.Millisecond)
	}
	os.WriteFile(filepath.Join(w, "go."+a), nil, 0o644)
	c.waitState(a, "EXIT")
	out := c.must("", "bjobs", "-noheader", "-o", "stat exit_reason cpu_used max_mem", a)
	if !strings.Contains(out, "TERM_CTRL_PID") {
		t.Errorf("the job that killed its shepherd: bjobs says %q, want EXIT with TERM_CTRL_PID", out)
	}
	checkUsageOut(t, "bjobs of the ended job", out, memTotal)
	long := c.must("", "bjobs", "-l", a)
	hist := c.must("", "bhist", "-l", a)
	acct := c.must("", "bacct", "-l", a)
	for name, s := range map[string]string{"bjobs -l": long, "bhist -l": hist, "bacct -l": acct} {
		if strings.Contains(s, "POST_DONE") {
			t.Errorf("%s shows the job's forged POST_DONE:\n%s", name, s)
		}
		// Unwrapped first: a wrapped line can start with a "-" that is
		// part of a path (/tmp/xce-123...), not a number.
		if regexp.MustCompile(`(^|\s)-[0-9]`).MatchString(strings.ReplaceAll(s, "\n                     ", "")) {
			t.Errorf("%s shows a negative number:\n%s", name, s)
		}
	}
	// A job after it that runs and ends: by then the dependent job would
	// have been dispatched had the forged POST_DONE counted.
	after := submitAs(t, c, uid, "-o", "/dev/null", "true")
	c.waitState(after, "DONE")
	if s := c.stat(dep); s != "PEND" {
		t.Errorf("post_done(%s) was satisfied by the job's forged POST_DONE: the dependent job is %s", a, s)
	}

	// A forged pre-exec failure does not send the job back to pending.
	b := submitAs(t, c, uid, "-o", "/dev/null", forge("fake-preexec"))
	c.waitState(b, "RUN")
	waitFile(t, filepath.Join(w, "forged."+b))
	os.WriteFile(filepath.Join(w, "go."+b), nil, 0o644)
	c.waitState(b, "EXIT")
	if h := c.must("", "bhist", "-l", b); strings.Contains(h, "pre-exec") {
		t.Errorf("the job's forged pre-exec failure was taken:\n%s", h)
	}
}

// hostMemKb is this host's memory, from /proc/meminfo.
func hostMemKb(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`MemTotal:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no MemTotal in /proc/meminfo")
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// checkUsageOut checks bjobs -o output for negative numbers and memory
// sizes above the host's.
func checkUsageOut(t *testing.T, what, out string, memKb int64) {
	t.Helper()
	if regexp.MustCompile(`(^|\s)-[0-9]`).MatchString(out) {
		t.Errorf("%s: negative value in %q", what, out)
	}
	units := map[string]float64{"K": 1, "M": 1 << 10, "G": 1 << 20, "T": 1 << 30, "P": 1 << 40, "E": 1 << 50}
	for _, m := range regexp.MustCompile(`([0-9.]+) ?([KMGTPE])bytes`).FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		if kb := v * units[m[2]]; kb > float64(memKb)*1.01 {
			t.Errorf("%s: %s is more than the host's memory (%d KB) in %q", what, m[0], memKb, out)
		}
	}
}

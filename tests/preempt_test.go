package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// preemptConfig: one host of 4 slots (the harness's --slots), an urgent queue that preempts the
// lower ones; extra is appended to the low queue.
func preemptConfig(t *testing.T, low string) string {
	t.Helper()
	conf := `[cluster]
default_queue = "low"

[queues.urgent]
priority = 70
preemptive = ["lower"]

[queues.low]
priority = 10
` + low
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// preemptWait is a job command that waits for a file, then exits with code.
func preemptWait(dir, file, code string) string {
	return "while [ ! -f " + filepath.Join(dir, file) + " ]; do sleep 0.1; done; exit " + code
}

func touchFile(t *testing.T, dir, file string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func exitCode(c *cluster, id string) string {
	return strings.TrimSpace(c.must("", "bjobs", "-a", "-noheader", "-o", "exit_code", id))
}

// A job of the urgent queue suspends a low job that holds the slots
// (SSUSP, with LSF's reason in bjobs -l and the preemptor in bhist); the
// low job resumes when the urgent one ends, and both end with their own
// exit codes.
func TestPreemptSuspendResume(t *testing.T) {
	c := newCluster(t, "--config", preemptConfig(t, ""))
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	low := c.submit("", "-q", "low", "-n", "4", "sh", "-c", preemptWait(dir, "low", "3"))
	c.waitState(low, "RUN")
	urgent := c.submit("", "-q", "urgent", "sh", "-c", preemptWait(dir, "urgent", "5"))
	c.waitState(urgent, "RUN")
	c.waitState(low, "SSUSP")
	if out := c.must("", "bjobs", "-l", low); !strings.Contains(out, "The job was preempted by mbatchd because of a higher priority job") {
		t.Errorf("bjobs -l of the preempted job:\n%s", out)
	}
	if out := c.must("", "bjobs", "-s", low); !strings.Contains(out, "preempted") {
		t.Errorf("bjobs -s:\n%s", out)
	}
	if out := c.must("", "bhist", "-l", low); !strings.Contains(out, "Preempted by job <"+urgent+">") {
		t.Errorf("bhist -l of the preempted job:\n%s", out)
	}
	touchFile(t, dir, "urgent")
	c.waitState(urgent, "EXIT")
	c.waitState(low, "RUN")
	touchFile(t, dir, "low")
	c.waitState(low, "EXIT")
	if a, b := exitCode(c, urgent), exitCode(c, low); a != "5" || b != "3" {
		t.Errorf("exit codes %q and %q, want 5 and 3", a, b)
	}
	if out := c.must("", "bqueues", "-l", "urgent"); !strings.Contains(out, "PREEMPTION = PREEMPTIVE[lower]") && !strings.Contains(out, "PREEMPTIVE") {
		t.Errorf("bqueues -l urgent:\n%s", out)
	}
}

// terminate_when = ["preempt"] in a rerunnable queue: the victim is ended
// once (TERM_PREEMPT) and goes back to pending, runs again when the slots
// are back, and keeps its history.
func TestPreemptRequeue(t *testing.T) {
	c := newCluster(t, "--config", preemptConfig(t, "terminate_when = [\"preempt\"]\nrerunnable = true\n"))
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	low := c.submit("", "-q", "low", "-n", "4", "sh", "-c", preemptWait(dir, "low", "3"))
	c.waitState(low, "RUN")
	urgent := c.submit("", "-q", "urgent", "sh", "-c", preemptWait(dir, "urgent", "0"))
	c.waitState(urgent, "RUN")
	c.waitState(low, "PEND")
	touchFile(t, dir, "urgent")
	c.waitState(urgent, "DONE")
	c.waitState(low, "RUN")
	touchFile(t, dir, "low")
	c.waitState(low, "EXIT")
	if b := exitCode(c, low); b != "3" {
		t.Errorf("exit code %q, want 3", b)
	}
	out := c.must("", "bhist", "-l", low)
	if strings.Count(out, "Dispatched") < 2 || !strings.Contains(out, "Preempted by job <"+urgent+">") {
		t.Errorf("bhist -l of the requeued job:\n%s", out)
	}
}

// max_job_preempt = 1: a job preempted once runs to completion; the next
// urgent job pends instead of preempting it again.
func TestPreemptMaxJobPreempt(t *testing.T) {
	c := newCluster(t, "--config", preemptConfig(t, "max_job_preempt = 1\n"))
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	low := c.submit("", "-q", "low", "-n", "4", "sh", "-c", preemptWait(dir, "low", "0"))
	c.waitState(low, "RUN")
	u1 := c.submit("", "-q", "urgent", "sh", "-c", preemptWait(dir, "u1", "0"))
	c.waitState(low, "SSUSP")
	touchFile(t, dir, "u1")
	c.waitState(u1, "DONE")
	c.waitState(low, "RUN")
	u2 := c.submit("", "-q", "urgent", "sh", "-c", preemptWait(dir, "u2", "0"))
	// The cycle that could have preempted has run once bjobs shows a
	// reason other than the new job's.
	for i := 0; i < 200; i++ {
		if out := c.must("", "bjobs", "-p", u2); !strings.Contains(out, "New job is waiting for scheduling") {
			break
		}
	}
	if s := c.stat(low); s != "RUN" {
		t.Errorf("job preempted past max_job_preempt: %s", s)
	}
	if s := c.stat(u2); s != "PEND" {
		t.Errorf("second urgent job: %s, want PEND", s)
	}
	touchFile(t, dir, "low")
	c.waitState(low, "DONE")
	c.waitState(u2, "RUN")
	touchFile(t, dir, "u2")
	c.waitState(u2, "DONE")
}

// preemptable_resources = ["mem"]: the urgent job needs memory the low
// job reserves (the slots are free): the low job is suspended and gives
// its reservation back.
func TestPreemptMemory(t *testing.T) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo")
	}
	var availKB int64
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemAvailable:" {
			availKB, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	if availKB == 0 {
		t.Skip("no MemAvailable")
	}
	path := preemptConfig(t, "")
	conf, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(conf), "[cluster]\n", "[cluster]\npreemptable_resources = [\"mem\"]\n", 1)), 0o644)
	c := newCluster(t, "--config", path)
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	mem := "rusage[mem=" + strconv.FormatInt(availKB/1024*6/10, 10) + "]"
	low := c.submit("", "-q", "low", "-R", mem, "sh", "-c", preemptWait(dir, "low", "3"))
	c.waitState(low, "RUN")
	urgent := c.submit("", "-q", "urgent", "-R", mem, "sh", "-c", preemptWait(dir, "urgent", "5"))
	c.waitState(urgent, "RUN")
	c.waitState(low, "SSUSP")
	touchFile(t, dir, "urgent")
	c.waitState(urgent, "EXIT")
	c.waitState(low, "RUN")
	touchFile(t, dir, "low")
	c.waitState(low, "EXIT")
	if a, b := exitCode(c, urgent), exitCode(c, low); a != "5" || b != "3" {
		t.Errorf("exit codes %q and %q, want 5 and 3", a, b)
	}
}

// A preempted job its user stops (USUSP) and resumes goes back to SSUSP,
// as LSF's bresume makes it, not to RUN beside its preemptor; the
// scheduler resumes it once the preemptor has ended.
func TestPreemptUserStopResume(t *testing.T) {
	c := newCluster(t, "--config", preemptConfig(t, ""))
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	low := c.submit("", "-q", "low", "-n", "4", "sh", "-c", preemptWait(dir, "low", "3"))
	c.waitState(low, "RUN")
	urgent := c.submit("", "-q", "urgent", "sh", "-c", preemptWait(dir, "urgent", "5"))
	c.waitState(urgent, "RUN")
	c.waitState(low, "SSUSP")
	c.must("", "bstop", low)
	if s := c.stat(low); s != "USUSP" {
		t.Fatalf("after bstop: %s, want USUSP", s)
	}
	if out := c.must("", "bresume", low); !strings.Contains(out, "is being resumed") {
		t.Errorf("bresume said %q", out)
	}
	if s := c.stat(low); s != "SSUSP" {
		t.Fatalf("after bresume with its preemptor running: %s, want SSUSP", s)
	}
	// A job dispatched after the bresume: a cycle has run since.
	probe := c.submit("", "-q", "urgent", "true")
	c.waitState(probe, "DONE")
	if s := c.stat(low); s != "SSUSP" {
		t.Errorf("resumed beside its preemptor: %s", s)
	}
	if out := c.must("", "bjobs", "-s", low); !strings.Contains(out, "preempted") {
		t.Errorf("bjobs -s:\n%s", out)
	}
	// bkill -s CONT is bresume: it does not continue the job either.
	c.run("", "bkill", "-s", "CONT", low)
	if s := c.stat(low); s != "SSUSP" {
		t.Errorf("after bkill -s CONT: %s, want SSUSP", s)
	}
	touchFile(t, dir, "urgent")
	c.waitState(urgent, "EXIT")
	c.waitState(low, "RUN")
	touchFile(t, dir, "low")
	c.waitState(low, "EXIT")
	if b := exitCode(c, low); b != "3" {
		t.Errorf("exit code %q, want 3", b)
	}
}

// A GPU-bound preemption (preemptable_resources = ["ngpus_physical"],
// four fake GPUs): a low job holds every GPU exclusively while slots are
// free; an urgent GPU job suspends it and gets its devices, and the low
// job resumes when the urgent one ends.
func TestPreemptGPU(t *testing.T) {
	path := preemptConfig(t, "")
	conf, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(conf), "[cluster]\n", "[cluster]\npreemptable_resources = [\"ngpus_physical\"]\n", 1)), 0o644)
	c := newGPUCluster(t, "4", "--config", path)
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	low := c.submit("", "-q", "low", "-gpu", "num=4:mode=exclusive_process", "sh", "-c", preemptWait(dir, "low", "3"))
	c.waitState(low, "RUN")
	out := filepath.Join(dir, "urgent.cvd")
	urgent := c.submit("", "-q", "urgent", "-gpu", "num=2:mode=exclusive_process", "-o", "/dev/null",
		"sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES > "+out+"; "+preemptWait(dir, "urgent", "5"))
	c.waitState(urgent, "RUN")
	c.waitState(low, "SSUSP")
	if v := cvd(c.waitFile(out)); len(strings.Split(v, ",")) != 2 {
		t.Errorf("urgent job's devices %q, want two", v)
	}
	touchFile(t, dir, "urgent")
	c.waitState(urgent, "EXIT")
	c.waitState(low, "RUN")
	touchFile(t, dir, "low")
	c.waitState(low, "EXIT")
	if a, b := exitCode(c, urgent), exitCode(c, low); a != "5" || b != "3" {
		t.Errorf("exit codes %q and %q, want 5 and 3", a, b)
	}
}

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Formats that differed from LSF 10.1 (issue 15, item 8), checked against
// the real binaries.

// bjobs -l's RESOURCE REQUIREMENT DETAILS show LSF's defaults filled in and
// rusage amounts with two decimals, for a job with -R and for one without;
// Effective is "-" while the job pends and the same string once it runs.
func TestFormatsResReqDetails(t *testing.T) {
	c := newCluster(t, "--slots", "1")
	run := c.submit("", "-R", "rusage[mem=100]", "sleep", "30")
	c.waitState(run, "RUN")
	pend := c.submit("", "sleep", "30")
	out := c.must("", "bjobs", "-l", run)
	want := "\n RESOURCE REQUIREMENT DETAILS:\n Combined: select[type == local] order[r15s:pg] rusage[mem=100.00]\n Effective: select[type == local] order[r15s:pg] rusage[mem=100.00]\n"
	if !strings.Contains(out, want) {
		t.Errorf("running job: want %q in\n%s", want, out)
	}
	out = c.must("", "bjobs", "-l", pend)
	want = "\n RESOURCE REQUIREMENT DETAILS:\n Combined: select[type == local] order[r15s:pg]\n Effective: -\n"
	if !strings.Contains(out, want) {
		t.Errorf("pending job: want %q in\n%s", want, out)
	}
}

// bqueues -l says "This is the default queue." once, even when the
// description says it already (the shipped default queue's does), and
// prints the job accept interval under the statistics row.
func TestFormatsQueueLong(t *testing.T) {
	c := newCluster(t)
	out := c.must("", "bqueues", "-l", "normal")
	if n := strings.Count(out, "This is the default queue."); n != 1 {
		t.Errorf(`"This is the default queue." %d times:\n%s`, n, out)
	}
	if !strings.Contains(out, "    0\nInterval for a host to accept two jobs is 0 seconds\n\n") {
		t.Errorf("no accept interval line under the statistics:\n%s", out)
	}
}

// The lsf.conf xced writes starts with a line of its own.
func TestFormatsLSFConfFirstLine(t *testing.T) {
	c := newCluster(t)
	b, err := os.ReadFile(filepath.Join(c.dir, "state", "conf", "lsf.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(b), "\n"); first != "# Written by xced at every start." {
		t.Errorf("first line %q", first)
	}
}

// A job that waits because the host's job slots are all taken pends with
// LSF's "Job slot limit reached" (PEND_HOST_JOB_LIMIT), not "Not enough job
// slot(s)", which LSF keeps for a host with fewer free slots than the job
// needs.
func TestFormatsFullHostReason(t *testing.T) {
	c := newCluster(t, "--slots", "1")
	c.waitState(c.submit("", "sleep", "30"), "RUN")
	pend := c.submit("", "sleep", "30")
	// Until the scheduler has looked at it, the job is new.
	var out string
	for i := 0; i < 100; i++ {
		if out = c.must("", "bjobs", "-p", pend); !strings.Contains(out, "New job is waiting for scheduling") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(out, "\n Job slot limit reached: 1 host;\n") {
		t.Errorf("bjobs -p:\n%s", out)
	}
}

// With no shared resources, bhosts -s says so as OpenLava's bhosts does
// (lsb_perror of LSBE_NO_RESOURCE) and exits 255.
func TestFormatsNoSharedResources(t *testing.T) {
	c := newCluster(t)
	r := c.run("", "bhosts", "-s")
	if r.code != 255 || r.stdout != "" || r.stderr != "lsb_sharedresourceinfo: No resource defined\n" {
		t.Errorf("bhosts -s: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// bjobs -a lists finished jobs in the order they finished, not by id.
func TestFormatsFinishedOrder(t *testing.T) {
	c := newCluster(t)
	slow := c.submit("", "sleep", "2")
	c.waitState(slow, "RUN")
	fast := c.submit("", "true")
	c.waitState(fast, "DONE")
	c.waitState(slow, "DONE")
	out := c.must("", "bjobs", "-a", "-noheader", "-o", "jobid")
	if got, want := strings.Fields(out), []string{fast, slow}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("bjobs -a order %v, want %v (the order they finished)", got, want)
	}
}

// bsub -Is on a terminal whose input ended before the job started (an
// end-of-file typed while it waited; script(1) sends one when its own
// input ends) prints the job's output and no stray "^@": Linux keeps such
// an end-of-file as a NUL that raw mode hands over as data.
func TestFormatsInteractiveNoStrayNUL(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed: this test needs a terminal for bsub -Is")
	}
	c := newCluster(t)
	cmd := exec.Command("script", "-qc", filepath.Join(binDir, "bsub")+" -Is echo hello", "/dev/null")
	cmd.Dir = c.work
	cmd.Env = append(os.Environ(), "XCE_DIR="+filepath.Join(c.dir, "state"))
	out, err := cmd.Output() // stdin: /dev/null
	if err != nil {
		t.Fatalf("script: %v\n%q", err, out)
	}
	if !strings.Contains(string(out), "hello") || strings.Contains(string(out), "^@") || strings.Contains(string(out), "\x00") {
		t.Errorf("bsub -Is output %q", out)
	}
}

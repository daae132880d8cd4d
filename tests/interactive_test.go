package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bsub -I: the job's output and exit status come back to bsub, its
// input goes to the job, and the waiting lines go to stderr as LSF's.
func TestBsubInteractive(t *testing.T) {
	c := newCluster(t)
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")

	r := c.run("", "bsub", "-I", "echo out; echo err >&2; exit 3")
	if r.code != 3 {
		t.Fatalf("exit %d, want the job's 3\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`^Job <\d+> is submitted to default queue <normal>\.\nout\n$`).MatchString(r.stdout) {
		t.Fatalf("stdout %q", r.stdout)
	}
	if want := "<<Waiting for dispatch ...>>\n<<Starting on " + host + ">>\nerr\n"; r.stderr != want {
		t.Fatalf("stderr %q, want %q", r.stderr, want)
	}
	id := submittedRE.FindStringSubmatch(strings.SplitAfter(r.stdout, "\n")[0])[1]
	c.waitState(id, "EXIT")
	if l := c.must("", "bjobs", "-l", id); !strings.Contains(strings.ReplaceAll(l, "\n                     ", ""), "Interactive mode, Command <") {
		t.Fatalf("bjobs -l does not say the job is interactive:\n%s", l)
	}

	// Input reaches the job; the job sees LSB_INTERACTIVE.
	r = c.run("line one\nline two\n", "bsub", "-I", "cat; echo LSB_INTERACTIVE=$LSB_INTERACTIVE")
	if r.code != 0 || !strings.HasSuffix(r.stdout, "line one\nline two\nLSB_INTERACTIVE=Y\n") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}

	// -Ip: the job runs on a pseudo-terminal.
	r = c.run("", "bsub", "-Ip", "tty; test -t 1 && echo on-a-terminal")
	out := strings.ReplaceAll(r.stdout, "\r\n", "\n")
	if r.code != 0 || !regexp.MustCompile(`\n/dev/pts/\d+\non-a-terminal\n$`).MatchString(out) {
		t.Fatalf("-Ip: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}

	// -I with -K, or with an array, is refused.
	r = c.run("", "bsub", "-I", "-K", "true")
	if r.code != 255 || r.stderr != "The -I, -Ip, -Is and -K options are mutually exclusive. Job not submitted.\n" {
		t.Fatalf("-I -K: exit %d stderr %q", r.code, r.stderr)
	}
	r = c.run("", "bsub", "-Is", "-J", "a[1-2]", "true")
	if r.code != 255 || r.stderr != "An interactive job cannot be a job array. Job not submitted.\n" {
		t.Fatalf("-Is array: exit %d stderr %q", r.code, r.stderr)
	}
}

// A job killed before it starts: bsub says so and exits 126, like -K.
func TestBsubInteractiveKilledPending(t *testing.T) {
	c := newCluster(t)
	cmd := exec.Command(filepath.Join(binDir, "bsub"), "-I", "-H", "-J", "held", "true")
	cmd.Dir = c.work
	cmd.Env = append(os.Environ(), "XCE_DIR="+filepath.Join(c.dir, "state"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	for id == "" {
		id = strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "jobid", "-J", "held"))
	}
	c.waitState(id, "PSUSP")
	c.must("", "bkill", id)
	err := cmd.Wait()
	ee, _ := err.(*exec.ExitError)
	if ee == nil || ee.ExitCode() != 126 {
		t.Fatalf("bsub ended with %v, want exit 126\nstderr %q", err, errb.String())
	}
	if want := "<<Waiting for dispatch ...>>\n<<Terminated while pending>>\n"; errb.String() != want {
		t.Fatalf("stderr %q, want %q", errb.String(), want)
	}
}

// bsub -Is in a real terminal: a shell on a pseudo-terminal, typed at as a
// person would, its window size passed on; exit's status is bsub's.
func TestBsubInteractiveShellInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: this end-to-end test of bsub -Is needs it (apt-get install tmux)")
	}
	c := newCluster(t)
	s := &tmuxScreen{t: t, sock: filepath.Join(c.dir, "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	cmd := "env XCE_DIR=" + filepath.Join(c.dir, "state") + " PS1='job$ ' " + filepath.Join(binDir, "bsub") +
		" -Is /bin/sh; echo bsub-exited-$?; sleep 600"
	s.tmux("new-session", "-d", "-s", "top", "-x", "100", "-y", "30", "-c", c.work, cmd)
	s.waitText("<<Starting on")
	s.keys(`tty; echo "I=$LSB_INTERACTIVE"; stty size`, "Enter")
	scr := s.waitText("I=Y", "30 100")
	if !regexp.MustCompile(`/dev/pts/\d+`).MatchString(scr) {
		t.Fatalf("the job's shell is not on a pseudo-terminal:\n%s", scr)
	}
	// Its output is the terminal's, not a file's: bpeek says so.
	id := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "jobid"))
	if r := c.run("", "bpeek", id); r.code != 255 || r.stderr != "Job <"+id+"> : Cannot bpeek an interactive job.\n" {
		t.Errorf("bpeek of an interactive job: %d %q", r.code, r.stderr)
	}
	s.keys("exit 5", "Enter")
	s.waitText("bsub-exited-5")
}

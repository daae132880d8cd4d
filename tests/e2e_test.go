package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A #BSUB script on stdin: directives become options, the command line
// wins over them, the output file gets the output and LSF's job report.
func TestScriptOnStdin(t *testing.T) {
	c := newCluster(t)
	script := "#!/bin/sh\n#BSUB -J scripted\n#BSUB -o out.%J\n#BSUB -q nosuch\necho hello from $LSB_JOBNAME $LSB_JOBID\n"
	id := c.submit(script, "-q", "normal")
	c.waitState(id, "DONE")
	out, err := os.ReadFile(filepath.Join(c.work, "out."+id))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hello from scripted " + id, "Successfully completed.", "Subject: Job " + id + ": <scripted> in cluster <xce> Done", "# LSBATCH: User input"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output file lacks %q:\n%s", want, out)
		}
	}
	if q := strings.TrimSpace(c.must("", "bjobs", "-a", "-noheader", "-o", "queue job_name", id)); q != "normal scripted" {
		t.Errorf("queue and name = %q, want the command line's queue and the directive's name", q)
	}
}

// A job array with a running limit: every element runs once, with its own
// index in %I and LSB_JOBINDEX.
func TestArray(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "-J", "arr[1-6]%2", "-o", "o.%J.%I", "echo index $LSB_JOBINDEX")
	states := c.waitState(id, "DONE")
	if n := len(strings.Split(states, "\n")); n != 6 {
		t.Fatalf("%d elements, want 6", n)
	}
	for i := 1; i <= 6; i++ {
		b, err := os.ReadFile(filepath.Join(c.work, "o."+id+"."+string(rune('0'+i))))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(jobOutput(t, string(b)), "index "+string(rune('0'+i))+"\n") {
			t.Errorf("element %d wrote %q", i, b)
		}
	}
	names := c.must("", "bjobs", "-a", "-noheader", "-o", "job_name", id+"[3]")
	if strings.TrimSpace(names) != "arr[3]" {
		t.Errorf("element name %q", names)
	}
}

// A failing job ends EXIT with its exit code in bjobs -l.
func TestFailingJob(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "exit 3")
	c.waitState(id, "EXIT")
	long := c.must("", "bjobs", "-l", id)
	if !strings.Contains(long, "Exited with exit code 3") {
		t.Errorf("bjobs -l lacks the exit code:\n%s", long)
	}
	if code := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exit_code", id)); code != "3" {
		t.Errorf("exit_code %q", code)
	}
}

// bkill of a running sleep: the job ends EXIT, killed by its owner.
func TestKillRunning(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "sleep 60")
	c.waitState(id, "RUN")
	time.Sleep(200 * time.Millisecond)
	if out := c.must("", "bkill", id); out != "Job <"+id+"> is being terminated\n" {
		t.Errorf("bkill said %q", out)
	}
	c.waitState(id, "EXIT")
	long := c.must("", "bjobs", "-l", id)
	if !strings.Contains(long, "TERM_OWNER") {
		t.Errorf("bjobs -l does not say the owner killed it:\n%s", long)
	}
	if r := c.run("", "bkill", id); r.code == 0 || r.stderr != "Job <"+id+">: Job has already finished\n" {
		t.Errorf("second bkill: %d %q", r.code, r.stderr)
	}
}

// bstop and bresume of a running job, and of a held one.
func TestStopResume(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "sleep 60")
	c.waitState(id, "RUN")
	time.Sleep(200 * time.Millisecond)
	if out := c.must("", "bstop", id); out != "Job <"+id+"> is being stopped\n" {
		t.Errorf("bstop said %q", out)
	}
	c.waitState(id, "USUSP")
	c.must("", "bresume", id)
	c.waitState(id, "RUN")
	held := c.submit("", "-H", "true")
	c.waitState(held, "PSUSP")
	c.must("", "bresume", held)
	c.waitState(held, "DONE")
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
}

// bsub -K waits and exits with the job's exit code.
func TestBlockingSubmit(t *testing.T) {
	c := newCluster(t)
	r := c.run("", "bsub", "-K", "exit 5")
	if r.code != 5 {
		t.Fatalf("bsub -K exited %d, want 5; stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "<<Waiting for dispatch ...>>") || !strings.Contains(r.stderr, "<<Job is finished>>") {
		t.Errorf("bsub -K said %q", r.stderr)
	}
}

// Output and error files: %J/%I, append versus overwrite, -e apart.
func TestOutputFiles(t *testing.T) {
	c := newCluster(t)
	os.WriteFile(filepath.Join(c.work, "keep.out"), []byte("before\n"), 0o644)
	os.WriteFile(filepath.Join(c.work, "gone.out"), []byte("before\n"), 0o644)
	a := c.submit("", "-o", "keep.out", "echo appended")
	b := c.submit("", "-oo", "gone.out", "-e", "err.%J", "echo fresh; echo oops >&2")
	c.waitState(a, "DONE")
	c.waitState(b, "DONE")
	// The job's report and output are appended to what -o had, and -oo
	// replaced it (output spooled, LSF's default).
	keep, _ := os.ReadFile(filepath.Join(c.work, "keep.out"))
	if rest, ok := strings.CutPrefix(string(keep), "before\n"); !ok || jobOutput(t, rest) != "appended\n" {
		t.Errorf("-o did not append: %q", keep)
	}
	gone, _ := os.ReadFile(filepath.Join(c.work, "gone.out"))
	if strings.Contains(string(gone), "before") || jobOutput(t, string(gone)) != "fresh\n" {
		t.Errorf("-oo did not overwrite: %q", gone)
	}
	errf, _ := os.ReadFile(filepath.Join(c.work, "err."+b))
	if string(errf) != "oops\n" {
		t.Errorf("-e file %q", errf)
	}
}

// The default bjobs table and -o / -json output, against golden files.
func TestBjobsFormats(t *testing.T) {
	c := newCluster(t)
	c.submit("", "-J", "first", "true")
	c.waitState("1", "DONE")
	c.submit("", "-H", "-J", "verylongjobname_abc", "sleep 1")
	c.submit("", "-H", "-q", "normal", "-n", "2", "sleep 2")
	golden(t, "bjobs_default", normalizeTable(c.must("", "bjobs")))
	golden(t, "bjobs_all", normalizeTable(c.must("", "bjobs", "-a")))
	golden(t, "bjobs_o", normalize(c.must("", "bjobs", "-a", "-o", "jobid stat queue job_name:8 slots exit_code")))
	js := c.must("", "bjobs", "-a", "-o", "jobid stat job_name queue", "-json")
	var parsed map[string]any
	if err := json.Unmarshal([]byte(js), &parsed); err != nil {
		t.Fatalf("bjobs -json is not JSON: %v\n%s", err, js)
	}
	golden(t, "bjobs_json", normalize(js))
	golden(t, "bqueues", c.must("", "bqueues"))
}

// Mistakes: LSF's messages and exit codes, and nothing stored.
func TestBadInput(t *testing.T) {
	c := newCluster(t)
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"-q", "nosuch", "true"}, "nosuch: No such queue. Job not submitted.\n"},
		{[]string{"-W", "abc", "true"}, "abc: Bad RUNLIMIT specification. Job not submitted.\n"},
		{[]string{"-M", "lots", "true"}, "lots: Bad MEMLIMIT specification. Job not submitted.\n"},
		{[]string{"-J", "a[0-3]", "true"}, "Job array index error. Job not submitted.\n"},
		{[]string{"-J", "a[1-5000]", "true"}, "Job array index too large. Job not submitted.\n"},
		{[]string{"-w", "done(999)", "true"}, "999: No matching job found. Job not submitted.\n"},
	}
	for _, tc := range cases {
		r := c.run("", "bsub", tc.args...)
		if r.code != 255 || r.stderr != tc.msg || r.stdout != "" {
			t.Errorf("bsub %v: exit %d, stderr %q, want 255 and %q", tc.args, r.code, r.stderr, tc.msg)
		}
	}
	r := c.run("", "bsub", "-Y", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "illegal option -- Y") {
		t.Errorf("bad option: %d %q", r.code, r.stderr)
	}
	if r := c.run("", "bjobs", "-a"); r.stderr != "No job found\n" || r.code != 0 {
		t.Errorf("nothing was stored, yet bjobs -a says %q (exit %d)", r.stderr, r.code)
	}
	if r := c.run("", "bjobs", "42"); r.stderr != "Job <42> is not found\n" || r.code != 0 {
		t.Errorf("bjobs 42: %d %q", r.code, r.stderr)
	}
	if r := c.run("", "bkill", "42"); r.stderr != "Job <42>: No matching job found\n" || r.code == 0 {
		t.Errorf("bkill 42: %d %q", r.code, r.stderr)
	}
	if r := c.run("", "bkill"); !strings.Contains(r.stderr, "Job ID or one of '-m', '-u' '-q' and '-J' must be specified.") {
		t.Errorf("bkill with nothing: %q", r.stderr)
	}
}

// The commands say where they looked when no controller runs.
func TestNotRunning(t *testing.T) {
	c := newCluster(t)
	c.stop()
	r := c.run("", "bjobs")
	want := regexp.MustCompile(`no xced socket at .*/state/xced.sock; start the controller with`)
	if r.code == 0 || !want.MatchString(r.stderr) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("bjobs without xced: %d %q", r.code, r.stderr)
	}
}

// A running job survives kill -9 of xced: after the restart its real exit
// status is recorded.
func TestRestartReattach(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "sleep 2; exit 7")
	c.waitState(id, "RUN")
	time.Sleep(300 * time.Millisecond)
	c.crash()
	c.start()
	c.waitState(id, "EXIT")
	if code := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exit_code", id)); code != "7" {
		t.Errorf("exit code after restart %q, want 7", code)
	}
	next := c.submit("", "true")
	if next <= id && len(next) <= len(id) {
		t.Errorf("job id %s after restart is not above %s", next, id)
	}
}

// After a clean stop, job ids continue where they were; the state is all
// there.
func TestCleanRestart(t *testing.T) {
	c := newCluster(t)
	a := c.submit("", "-H", "true")
	c.stop()
	c.start()
	if s := c.stat(a); s != "PSUSP" {
		t.Errorf("held job is %q after the restart", s)
	}
	if b := c.submit("", "true"); b != "2" || a != "1" {
		t.Errorf("ids %s then %s, want 1 then 2", a, b)
	}
}

// bsub -E and -Ep: the pre-exec runs before the job, the post-exec after
// it, both into the job's output; exit 99 makes the job exit at once.
func TestPrePostExec(t *testing.T) {
	c := newCluster(t)
	ok := c.submit("", "-E", "echo pre", "-Ep", "echo post", "-o", "out.%J", "echo job")
	abort := c.submit("", "-E", "exit 99", "true")
	c.waitState(ok, "DONE")
	out, _ := os.ReadFile(filepath.Join(c.work, "out."+ok))
	if !strings.HasPrefix(jobOutput(t, string(out)), "pre\njob\npost\n") {
		t.Errorf("output %q", out)
	}
	c.waitState(abort, "EXIT")
	if code := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exit_code", abort)); code != "99" {
		t.Errorf("pre-exec abort: exit code %q", code)
	}
}

// A failing pre-exec sends the job back to PEND with LSF's reason and is
// tried again after the retry interval (later scheduling cycles, not
// several times a second), up to local_max_preexec_retry; then the job is
// suspended (LSF's default action) or ends (action "exit"). Without a
// limit (LSF's default) it keeps pending and retrying.
func TestPreExecRetry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	conf := "[cluster]\nlocal_max_preexec_retry = 3\npreexec_retry_interval = \"1s\"\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	start := time.Now()
	susp := c.submit("", "-E", "exit 3", "true")
	c.waitState(susp, "PSUSP")
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("3 attempts 1 s apart took %v: retried without waiting", took)
	}
	if r := c.must("", "bjobs", "-p", susp); !strings.Contains(r, "Job pre-exec retry limit") {
		t.Errorf("suspended at the retry limit, bjobs -p says:\n%s", r)
	}
	if h := c.must("", "bhist", "-l", susp); strings.Count(h, "pre-exec command exited") != 3 {
		t.Errorf("want 3 failed attempts in bhist -l:\n%s", h)
	}

	conf += "local_max_preexec_retry_action = \"exit\"\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.must("", "badmin", "reconfig")
	ended := c.submit("", "-E", "exit 4", "true")
	c.waitState(ended, "EXIT")
	if code := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exit_code", ended)); code != "4" {
		t.Errorf("ended at the retry limit: exit code %q, want the pre-exec's 4", code)
	}

	// No limit, the default: pending with the reason between attempts.
	if err := os.WriteFile(path, []byte("[cluster]\npreexec_retry_interval = \"30s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.must("", "badmin", "reconfig")
	pend := c.submit("", "-E", "exit 5", "true")
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := c.must("", "bjobs", "-p", pend)
		if strings.Contains(r, "The job's pre-exec command exited with non-zero status") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pre-exec reason after a failure:\n%s", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if h := c.must("", "bhist", "-l", pend); strings.Count(h, "pre-exec command exited") != 1 {
		t.Errorf("dispatched again within the 30 s retry interval:\n%s", h)
	}
}

// With xced running as root, a job runs as the user who submitted it, that
// user is known by the socket's credentials, and may not touch another
// user's jobs.
func TestRunsAsSubmitter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to submit as another user")
	}
	const nobody = 65534
	c := newCluster(t)
	os.Chmod(c.dir, 0o755)
	os.Chmod(c.work, 0o777)
	r := c.runAs(nobody, "", "bsub", "-o", "as.%J", "id -u; id -g")
	m := submittedRE.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("bsub as nobody: %d %q %q", r.code, r.stdout, r.stderr)
	}
	id := m[1]
	c.waitState(id, "DONE")
	out, err := os.ReadFile(filepath.Join(c.work, "as."+id))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(jobOutput(t, string(out)), "65534\n65534\n") {
		t.Errorf("the job ran as %q, want uid 65534", strings.SplitN(string(out), "\n", 3)[:2])
	}
	fi, _ := os.Stat(filepath.Join(c.work, "as."+id))
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody {
		t.Errorf("output file owned by uid %d", st.Uid)
	}
	mine := c.submit("", "-H", "true")
	if r := c.runAs(nobody, "", "bkill", mine); r.code == 0 || r.stderr != "Job <"+mine+">: User permission denied\n" {
		t.Errorf("nobody killed root's job: %d %q", r.code, r.stderr)
	}
	// Compare the JOBID column: a date ("Dec  2") may hold the id too.
	ids := map[string]bool{}
	r = c.runAs(nobody, "", "bjobs", "-a")
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			ids[f[0]] = true
		}
	}
	if !ids[id] || ids[mine] {
		t.Errorf("nobody's bjobs -a:\n%s", r.stdout)
	}
	if r := c.runAs(nobody, "", "badmin", "reconfig"); r.code != 255 || !strings.Contains(r.stderr, "User permission denied") {
		t.Errorf("nobody's badmin reconfig: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// The other bsub options of the foundation: -i, -cwd, -env, -n with the
// LSB_* variables, -x, -m, -P and -sp.
func TestBsubOptions(t *testing.T) {
	c := newCluster(t)
	os.WriteFile(filepath.Join(c.work, "in.txt"), []byte("from stdin\n"), 0o644)
	sub := filepath.Join(c.work, "sub")
	os.Mkdir(sub, 0o755)
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	id := c.submit("", "-i", filepath.Join(c.work, "in.txt"), "-cwd", sub, "-env", "all, ~HOME_AWAY, XCE_T=42", "-n", "2", "-x", "-m", host,
		"-P", "proj1", "-sp", "5", "-o", filepath.Join(c.work, "o.%J"),
		`cat; pwd; echo $XCE_T $LSB_JOBID $LSB_DJOB_NUMPROC "$LSB_MCPU_HOSTS" $LSB_QUEUE $LSB_PROJECT_NAME`)
	c.waitState(id, "DONE")
	out, _ := os.ReadFile(filepath.Join(c.work, "o."+id))
	want := "from stdin\n" + sub + "\n42 " + id + " 2 " + host + " 2 normal proj1\n"
	if !strings.HasPrefix(jobOutput(t, string(out)), want) {
		t.Errorf("output %q, want it to start with %q", out, want)
	}
	got := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "proj_name slots exec_host", id))
	if got != "proj1 2 2*"+host {
		t.Errorf("bjobs -o: %q", got)
	}
	if r := c.run("", "bsub", "-m", "nosuchhost", "true"); r.code != 255 || !strings.Contains(r.stderr, "nosuchhost: Bad host name, host group name or cluster name. Job not submitted.") {
		t.Errorf("-m nosuchhost: %d %q", r.code, r.stderr)
	}
	if r := c.run("", "bsub", "-n", "99", "true"); r.code != 255 || r.stderr != "Too many processors requested. Job not submitted.\n" {
		t.Errorf("-n 99: %d %q", r.code, r.stderr)
	}
}

// bkill -s sends just that signal; bkill 0 ends all of the user's jobs.
// A job without -o spools its output where bjobs -l says.
func TestSignalAndSpool(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "trap 'echo got USR1; exit 9' USR1; echo ready; while :; do sleep 0.1; done")
	c.waitState(id, "RUN")
	var spool string
	spoolRE := regexp.MustCompile(`Output spooled to <([^>]+)>`)
	for i := 0; i < 100; i++ {
		long := strings.ReplaceAll(c.must("", "bjobs", "-UF", id), "\n", "")
		if m := spoolRE.FindStringSubmatch(long); m != nil {
			if b, _ := os.ReadFile(m[1]); strings.Contains(string(b), "ready") {
				spool = m[1]
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if spool == "" {
		t.Fatalf("bjobs -l names no spool file holding the output:\n%s", c.must("", "bjobs", "-l", id))
	}
	if out := c.must("", "bkill", "-s", "USR1", id); out != "Job <"+id+"> is being signaled\n" {
		t.Errorf("bkill -s said %q", out)
	}
	c.waitState(id, "EXIT")
	if code := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exit_code", id)); code != "9" {
		t.Errorf("exit code %q, want 9 from the trap", code)
	}
	b, _ := os.ReadFile(spool)
	if !strings.Contains(string(b), "got USR1") || !strings.Contains(string(b), "Exited with exit code 9.") {
		t.Errorf("spool file:\n%s", b)
	}

	a := c.submit("", "sleep 60")
	h := c.submit("", "-H", "sleep 60")
	c.waitState(a, "RUN")
	out := c.must("", "bkill", "0")
	if !strings.Contains(out, "Job <"+a+"> is being terminated") || !strings.Contains(out, "Job <"+h+"> is being terminated") {
		t.Errorf("bkill 0 said %q", out)
	}
	c.waitState(a, "EXIT")
	c.waitState(h, "EXIT")
}

// bpeek shows a running job's output so far (and -f follows it to the
// end, without the job report); bhist shows its history from the event log.
func TestPeekAndHistory(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "-J", "hist", "echo first; sleep 1; echo second; exit 3")
	c.waitState(id, "RUN")
	var out string
	for i := 0; i < 50 && !strings.Contains(out, "first"); i++ {
		time.Sleep(50 * time.Millisecond)
		out = c.run("", "bpeek", id).stdout
	}
	if out != "<< output from stdout >>\nfirst\n" {
		t.Errorf("bpeek: %q", out)
	}
	if f := c.must("", "bpeek", "-f", id); f != "<< output from stdout >>\nfirst\nsecond\n" {
		t.Errorf("bpeek -f: %q", f)
	}
	c.waitState(id, "EXIT")
	if r := c.run("", "bpeek", id); r.code == 0 || r.stderr != "Job <"+id+"> : Already finished.\n" {
		t.Errorf("bpeek of a finished job: %d %q", r.code, r.stderr)
	}
	long := c.must("", "bhist", "-l", id)
	for _, want := range []string{"Job <" + id + ">, Job Name <hist>", "Submitted from host", "Dispatched 1 Task(s)", "Starting (Pid ",
		"Exited with exit code 3.", "Summary of time in seconds spent in various states by"} {
		if !strings.Contains(strings.ReplaceAll(long, "\n                     ", ""), want) {
			t.Errorf("bhist -l lacks %q:\n%s", want, long)
		}
	}
	short := c.must("", "bhist", "-a")
	if !regexp.MustCompile(`(?m)^` + id + `\s+\S+\s+hist\s+0\s+0\s+[12]\s+0\s+0\s+0\s+[12]\s*$`).MatchString(short) {
		t.Errorf("bhist -a:\n%s", short)
	}
}

// bsub -b: the job waits for its begin time, and bsub says when.
func TestBeginTime(t *testing.T) {
	c := newCluster(t)
	at := time.Now().Add(2 * time.Hour)
	out := c.must("", "bsub", "-b", at.Format("15:04"), "true")
	if !strings.Contains(out, "Job will be scheduled after "+at.Format("Mon Jan 02 15:04:00 2006")) {
		t.Errorf("bsub -b said %q", out)
	}
	id := submittedRE.FindStringSubmatch(strings.SplitN(out, "\n", 2)[0] + "\n")[1]
	var why string
	for i := 0; i < 100 && !strings.Contains(why, "start time"); i++ {
		time.Sleep(20 * time.Millisecond)
		why = c.must("", "bjobs", "-p", id)
	}
	if !strings.Contains(why, " The job has a specified start time;") {
		t.Errorf("bjobs -p:\n%s", why)
	}
	if r := c.run("", "bsub", "-t", "2001:1:1:0:0", "true"); r.code != 255 || !strings.Contains(r.stderr, "Bad time specification") {
		t.Errorf("bsub -t in the past: %d %q", r.code, r.stderr)
	}
}

// bkill -r ends a running job at once.
func TestForceKill(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "trap '' INT TERM; sleep 60")
	c.waitState(id, "RUN")
	time.Sleep(200 * time.Millisecond)
	if out := c.must("", "bkill", "-r", id); out != "Job <"+id+"> is being terminated\n" {
		t.Errorf("bkill -r said %q", out)
	}
	if s := c.stat(id); s != "EXIT" {
		t.Errorf("after bkill -r the job is %s", s)
	}
	if long := c.must("", "bjobs", "-l", id); !strings.Contains(strings.ReplaceAll(long, "\n                     ", ""), "TERM_FORCE_OWNER") {
		t.Errorf("bjobs -l:\n%s", long)
	}
}

// bsub job_script reads the script's #BSUB lines when
// LSB_BSUB_PARSE_SCRIPT=Y (else the file is just the command); BSUB_QUIET
// silences the acknowledgement.
func TestBsubScriptArgument(t *testing.T) {
	c := newCluster(t)
	os.WriteFile(filepath.Join(c.work, "job.sh"), []byte("#!/bin/sh\n#BSUB -J fromfile\n#BSUB -o parsed.out\necho parsed\n"), 0o755)
	bsub := func(env ...string) string {
		cmd := exec.Command(filepath.Join(binDir, "bsub"), "job.sh")
		cmd.Dir = c.work
		cmd.Env = append(append(os.Environ(), "XCE_DIR="+filepath.Join(c.dir, "state")), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bsub job.sh %v: %v %s", env, err, out)
		}
		return string(out)
	}
	m := submittedRE.FindStringSubmatch(bsub("LSB_BSUB_PARSE_SCRIPT=Y"))
	if m == nil {
		t.Fatal("no acknowledgement")
	}
	c.waitState(m[1], "DONE")
	if name := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "job_name", m[1])); name != "fromfile" {
		t.Errorf("with LSB_BSUB_PARSE_SCRIPT=Y the name is %q", name)
	}
	if b, _ := os.ReadFile(filepath.Join(c.work, "parsed.out")); !strings.HasPrefix(jobOutput(t, string(b)), "parsed\n") {
		t.Errorf("parsed.out: %q", b)
	}
	m = submittedRE.FindStringSubmatch(bsub())
	if name := strings.TrimSpace(c.must("", "bjobs", "-a", "-noheader", "-o", "job_name", m[1])); name != "job.sh" {
		t.Errorf("without it the job is the command: name %q", name)
	}
	if out := bsub("BSUB_QUIET=1"); out != "" {
		t.Errorf("BSUB_QUIET: %q", out)
	}
}

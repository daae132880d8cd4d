package exec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// The test binary doubles as the programs some tests need: a shepherd
// process (as xced would run it) and a job that allocates memory.
const helperEnv = "XCE_EXEC_TEST_HELPER"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == RlimitArg {
		os.Exit(RlimitMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == TaskArg {
		os.Exit(TaskMain())
	}
	switch os.Getenv(helperEnv) {
	case "shepherd":
		os.Exit(ShepherdMain(os.Args[len(os.Args)-1]))
	case "alloc":
		mb, _ := strconv.Atoi(os.Getenv("XCE_EXEC_TEST_MB"))
		b := make([]byte, mb<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		d, err := time.ParseDuration(os.Getenv("XCE_EXEC_TEST_SLEEP"))
		if err != nil {
			d = 30 * time.Second
		}
		time.Sleep(d)
		os.Exit(int(b[0]) - 1)
	}
	os.Exit(m.Run())
}

// newLaunch is a launch for job 748 running command, in a fresh directory
// that is also the submission directory.
func newLaunch(t *testing.T, command string) *api.Launch {
	t.Helper()
	dir := t.TempDir()
	return &api.Launch{
		Job: &api.Job{
			JobId:      748,
			SubmitTime: time.Now().Add(-time.Second).UnixNano(),
			Spec: &api.JobSpec{
				Command:    command,
				SubmitCwd:  dir,
				SubmitHost: "subhost",
				User:       "alice",
				Home:       dir,
				Env: []string{
					"PATH=" + os.Getenv("PATH"), "FOO=bar baz",
					"HOME=/submission/home", "LSB_JOBID=999", "LSB_JOBINDEX_END=9", "LSB_DEFAULTQUEUE=keepme",
				},
			},
			Effective:   &api.JobSpec{Queue: "normal"},
			SpoolOutput: filepath.Join(dir, "run", "output"),
		},
		ClusterName: "cluster1",
		Host:        "hostA",
		JobFile:     filepath.Join(dir, "run", "1700000000.748"),
		StartFile:   filepath.Join(dir, "run", "start"),
		StatusFile:  filepath.Join(dir, "run", "status"),
		KillGraceMs: 1000,
		// Most tests read the -o file while it is written directly
		// (LSB_STDOUT_DIRECT=Y); TestSpooledOutput covers the default.
		StdoutDirect: true,
	}
}

func dirOf(l *api.Launch) string { return l.Job.Spec.SubmitCwd }

// runJob runs the job and checks that the status file holds the event Run
// returned.
func runJob(t *testing.T, l *api.Launch) *api.Event {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(l.StatusFile), 0o700); err != nil {
		t.Fatal(err)
	}
	ev, err := Run(l)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := readEvent(t, l.StatusFile)
	if !proto.Equal(got, ev) {
		t.Errorf("status file holds %v, Run returned %v", got, ev)
	}
	if ev.Type != api.EventType_FINISH || ev.JobId != l.Job.JobId || ev.ArrayIndex != l.Job.ArrayIndex {
		t.Errorf("event = %v, want a FINISH event of the job", ev)
	}
	return ev
}

func readEvent(t *testing.T, path string) *api.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ev := &api.Event{}
	if err := proto.Unmarshal(b, ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// output splits a file into the job's own output and the report after it.
func output(t *testing.T, path string) (jobOut, report string) {
	t.Helper()
	s := readFile(t, path)
	sep := "\n" + strings.Repeat("-", 60) + "\nSender: LSF System <lsfadmin@"
	i := strings.LastIndex(s, sep)
	if i < 0 {
		t.Fatalf("%s has no job report:\n%s", path, s)
	}
	return s[:i], s[i+1:]
}

func wantDone(t *testing.T, ev *api.Event) {
	t.Helper()
	if ev.State != api.JobState_DONE || ev.ExitStatus != 0 {
		t.Fatalf("job ended %v exit %d (%s), want DONE", ev.State, ev.ExitStatus, ev.Detail)
	}
}

func parseEnv(s string) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(l *api.Launch)
		want  map[string]string // "" value: must be absent
	}{
		{
			name: "single",
			setup: func(l *api.Launch) {
				l.Job.Spec.JobName = "envjob"
				l.Job.Spec.Project = "proj1"
				l.Job.Effective.ResReq = []string{"rusage[mem=100]"}
				l.Job.ExecHosts = []*api.HostSlots{{Host: "hostA", Slots: 2}, {Host: "hostB", Slots: 1}}
				l.Job.Spec.MaxTasks = 4
			},
			want: map[string]string{
				"LSB_JOBID": "748", "LSB_BATCH_JID": "748", "LSB_JOBINDEX": "0", "LSB_JOBINDEX_END": "",
				"LSB_JOBNAME": "envjob", "LSB_QUEUE": "normal",
				"LSB_HOSTS": "hostA hostA hostB", "LSB_MCPU_HOSTS": "hostA 2 hostB 1",
				"LSB_DJOB_NUMPROC": "3", "LSB_MAX_NUM_PROCESSORS": "4",
				"LSB_SUB_HOST": "subhost", "LSB_EXEC_CLUSTER": "cluster1",
				"LSB_PROJECT_NAME": "proj1", "LSB_EFFECTIVE_RSRCREQ": "rusage[mem=100]",
				"LSB_OUTPUTFILE": "", "LSB_ERRORFILE": "",
				"LSB_EXIT_PRE_ABORT": "99", "LSF_INVOKE_CMD": "bsub", "LS_EXEC_T": "START",
				"LSFUSER": "alice", "USER": "alice", "LOGNAME": "alice", "LSB_JOB_EXECUSER": "alice",
				"FOO": "bar baz", "LSB_DEFAULTQUEUE": "keepme",
				"LS_JOBPID": strconv.Itoa(os.Getpid()),
			},
		},
		{
			name: "bound to cores",
			setup: func(l *api.Launch) {
				l.Job.ExecHosts = []*api.HostSlots{{Host: "hostA", Slots: 2, Cpus: []int32{5, 4}}, {Host: "hostB", Slots: 1, Cpus: []int32{0}}}
			},
			want: map[string]string{"LSB_BIND_CPU_LIST": "4,5"},
		},
		{
			name: "array element",
			setup: func(l *api.Launch) {
				l.Job.ArrayIndex = 3
				l.Job.ArrayEnd = 7
				l.Job.ArrayStep = 2
				l.Job.Spec.JobName = "arr"
				l.Job.Spec.ArraySpec = "[1-7:2]"
			},
			want: map[string]string{
				"LSB_JOBID": "748", "LSB_JOBINDEX": "3", "LSB_JOBINDEX_END": "7", "LSB_JOBINDEX_STEP": "2",
				"LSB_JOBNAME": "arr[3]", "LSB_HOSTS": "hostA", "LSB_MCPU_HOSTS": "hostA 1",
				"LSB_DJOB_NUMPROC": "1", "LSB_MAX_NUM_PROCESSORS": "1", "LSB_PROJECT_NAME": "",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := newLaunch(t, `env > env.txt`)
			c.setup(l)
			wantDone(t, runJob(t, l))
			dir := dirOf(l)
			env := parseEnv(readFile(t, filepath.Join(dir, "env.txt")))
			for k, v := range c.want {
				got, ok := env[k]
				if v == "" && ok {
					t.Errorf("%s=%q is set, want it absent", k, got)
				} else if v != "" && got != v {
					t.Errorf("%s=%q, want %q", k, got, v)
				}
			}
			for k, v := range map[string]string{
				"HOME": dir, "LS_SUBCWD": dir, "LS_EXECCWD": dir, "PWD": dir,
				"LSB_JOBFILENAME": l.JobFile, "LSB_CHKFILENAME": l.JobFile,
				"LSB_DJOB_HOSTFILE": l.JobFile + ".hostfile",
			} {
				if env[k] != v {
					t.Errorf("%s=%q, want %q", k, env[k], v)
				}
			}
			if c.want["LSB_BIND_CPU_LIST"] != "" {
				if env["LSB_AFFINITY_HOSTFILE"] != l.JobFile+".affinity" {
					t.Errorf("LSB_AFFINITY_HOSTFILE=%q, want %q", env["LSB_AFFINITY_HOSTFILE"], l.JobFile+".affinity")
				}
				if got := readFile(t, l.JobFile+".affinity"); got != "hostA 4\nhostA 5\nhostB 0\n" {
					t.Errorf("affinity host file %q", got)
				}
			} else if v, ok := env["LSB_AFFINITY_HOSTFILE"]; ok {
				t.Errorf("LSB_AFFINITY_HOSTFILE=%q for a job without cores", v)
			}
			hosts := strings.Fields(readFile(t, l.JobFile+".hostfile"))
			if strings.Join(hosts, " ") != env["LSB_HOSTS"] {
				t.Errorf("host file lists %v, LSB_HOSTS is %q", hosts, env["LSB_HOSTS"])
			}
			if fi, err := os.Stat(l.JobFile); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("job file: %v, mode %v; want mode 0700", err, fi.Mode())
			}
		})
	}
}

func TestOutputAppendAndOverwrite(t *testing.T) {
	t.Parallel()
	for _, overwrite := range []bool{false, true} {
		t.Run("overwrite="+strconv.FormatBool(overwrite), func(t *testing.T) {
			t.Parallel()
			l := newLaunch(t, `echo hello; echo oops >&2; echo "$LSB_OUTPUTFILE"`)
			l.Job.ArrayIndex = 2
			l.Job.Spec.OutputFile = "out.%J.%I"
			l.Job.Spec.OutputOverwrite = overwrite
			path := filepath.Join(dirOf(l), "out.748.2")
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			wantDone(t, runJob(t, l))
			jobOut, report := output(t, path)
			want := "hello\noops\n" + path + "\n"
			if !overwrite {
				want = "old\n" + want
			}
			if jobOut != want {
				t.Errorf("output = %q, want %q", jobOut, want)
			}
			for _, s := range []string{
				"Subject: Job 748[2]: <echo hello; echo oops >&2; echo \"$LSB_OUTPUTFILE\"> in cluster <cluster1> Done\n",
				"in queue <normal>, as user <alice> in cluster <cluster1>",
				"\n# LSBATCH: User input\necho hello;",
				"\nSuccessfully completed.\n",
				"The output (if any) is above this job summary.\n\n",
			} {
				if !strings.Contains(report, s) {
					t.Errorf("report lacks %q:\n%s", s, report)
				}
			}
			if strings.Contains(report, "PS:") {
				t.Errorf("report has a PS note without -e:\n%s", report)
			}
			if _, err := os.Stat(l.Job.SpoolOutput); err == nil {
				t.Errorf("spool file written for a job with -o")
			}
		})
	}
}

func TestErrorFile(t *testing.T) {
	t.Parallel()
	t.Run("separate", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo to-out; echo to-err >&2; echo "$LSB_ERRORFILE"`)
		l.Job.Spec.OutputFile = "out"
		l.Job.Spec.ErrorFile = "err.%J"
		wantDone(t, runJob(t, l))
		dir := dirOf(l)
		jobOut, report := output(t, filepath.Join(dir, "out"))
		if want := "to-out\n" + filepath.Join(dir, "err.748") + "\n"; jobOut != want {
			t.Errorf("output = %q, want %q", jobOut, want)
		}
		if got := readFile(t, filepath.Join(dir, "err.748")); got != "to-err\n" {
			t.Errorf("error file = %q, want %q", got, "to-err\n")
		}
		if !strings.HasSuffix(report, "\n\nPS:\n\nRead file <err.748> for stderr output of this job.\n\n") {
			t.Errorf("report lacks the PS note:\n%s", report)
		}
	})
	t.Run("same as output", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo to-out; echo to-err >&2`)
		l.Job.Spec.OutputFile = "both"
		l.Job.Spec.ErrorFile = "./both"
		wantDone(t, runJob(t, l))
		jobOut, report := output(t, filepath.Join(dirOf(l), "both"))
		if jobOut != "to-out\nto-err\n" {
			t.Errorf("output = %q", jobOut)
		}
		if strings.Contains(report, "PS:") {
			t.Errorf("PS note for a shared file:\n%s", report)
		}
	})
	t.Run("overwrite", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo new >&2`)
		l.Job.Spec.OutputFile = "out"
		l.Job.Spec.ErrorFile = "err"
		l.Job.Spec.ErrorOverwrite = true
		errPath := filepath.Join(dirOf(l), "err")
		os.WriteFile(errPath, []byte("old old old\n"), 0o644)
		wantDone(t, runJob(t, l))
		if got := readFile(t, errPath); got != "new\n" {
			t.Errorf("error file = %q, want %q", got, "new\n")
		}
	})
}

func TestOutputDirectory(t *testing.T) {
	t.Parallel()
	for _, idx := range []int32{0, 4} {
		t.Run("index="+strconv.Itoa(int(idx)), func(t *testing.T) {
			t.Parallel()
			l := newLaunch(t, `echo out; echo err >&2`)
			l.Job.ArrayIndex = idx
			l.Job.Spec.OutputFile = "logs/%J/"
			l.Job.Spec.ErrorFile = "logs/%J/"
			wantDone(t, runJob(t, l))
			name := "748"
			if idx > 0 {
				name += "_" + strconv.Itoa(int(idx))
			}
			dir := filepath.Join(dirOf(l), "logs", "748")
			jobOut, report := output(t, filepath.Join(dir, name+".out"))
			if jobOut != "out\n" {
				t.Errorf("output = %q", jobOut)
			}
			if got := readFile(t, filepath.Join(dir, name+".err")); got != "err\n" {
				t.Errorf("error file = %q", got)
			}
			if want := "Read file <logs/748/" + name + ".err> for stderr"; !strings.Contains(report, want) {
				t.Errorf("report lacks %q:\n%s", want, report)
			}
		})
	}
}

func TestInputFile(t *testing.T) {
	t.Parallel()
	l := newLaunch(t, `tr a-z A-Z; echo end`)
	l.Job.ArrayIndex = 5
	l.Job.Spec.InputFile = "in.%I"
	l.Job.Spec.OutputFile = "out"
	os.WriteFile(filepath.Join(dirOf(l), "in.5"), []byte("line one\nline two\n"), 0o644)
	wantDone(t, runJob(t, l))
	if jobOut, _ := output(t, filepath.Join(dirOf(l), "out")); jobOut != "LINE ONE\nLINE TWO\nend\n" {
		t.Errorf("output = %q", jobOut)
	}

	// Without -i, stdin is /dev/null: cat ends at once.
	l = newLaunch(t, `cat; echo done`)
	l.Job.Spec.OutputFile = "out"
	wantDone(t, runJob(t, l))
	if jobOut, _ := output(t, filepath.Join(dirOf(l), "out")); jobOut != "done\n" {
		t.Errorf("output = %q", jobOut)
	}
}

func TestSetupFailures(t *testing.T) {
	t.Parallel()
	t.Run("missing input", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo ran`)
		l.Job.Spec.InputFile = "nothere"
		l.Job.Spec.OutputFile = "out"
		ev := runJob(t, l)
		if ev.State != api.JobState_EXIT || ev.ExitStatus != 2 || !strings.Contains(ev.Detail, "cannot open the input file nothere") {
			t.Errorf("event = %v, want EXIT 2 naming the input file", ev)
		}
		jobOut, report := output(t, filepath.Join(dirOf(l), "out"))
		if !strings.Contains(jobOut, "nothere") || strings.Contains(jobOut, "ran") {
			t.Errorf("output = %q, want the error and not the job's output", jobOut)
		}
		if !strings.Contains(report, "Exited with exit code 2.") {
			t.Errorf("report:\n%s", report)
		}
		if _, err := os.Stat(l.StartFile); err == nil {
			t.Errorf("start file written for a job that did not start")
		}
	})
	t.Run("output directory missing", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo ran`)
		l.Job.Spec.OutputFile = "no/such/dir/out"
		ev := runJob(t, l)
		if ev.State != api.JobState_EXIT || ev.ExitStatus != 2 || !strings.Contains(ev.Detail, "cannot open the output file no/such/dir/out") {
			t.Errorf("event = %v, want EXIT 2 naming the output file", ev)
		}
		// The message and the report go to the spool file instead.
		jobOut, _ := output(t, l.Job.SpoolOutput)
		if !strings.Contains(jobOut, "no/such/dir/out") {
			t.Errorf("spool = %q", jobOut)
		}
	})
	t.Run("interpreter missing", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, "#!/no/such/interpreter\necho hi\n")
		l.Job.Spec.CommandIsScript = true
		ev := runJob(t, l)
		if ev.State != api.JobState_EXIT || ev.ExitStatus != 127 {
			t.Errorf("event = %v, want EXIT 127", ev)
		}
	})
}

func TestScripts(t *testing.T) {
	t.Parallel()
	t.Run("shebang sh", func(t *testing.T) {
		t.Parallel()
		script := "#!/bin/sh\n#BSUB -J myjob\n#BSUB -o ignored.out\necho \"index=$LSB_JOBINDEX\"\nexit 0\n"
		l := newLaunch(t, script)
		l.Job.Spec.CommandIsScript = true
		l.Job.Spec.OutputFile = "out"
		wantDone(t, runJob(t, l))
		jobOut, report := output(t, filepath.Join(dirOf(l), "out"))
		if jobOut != "index=0\n" {
			t.Errorf("output = %q", jobOut)
		}
		if !strings.Contains(report, "# LSBATCH: User input\n"+script+strings.Repeat("-", 60)+"\n") {
			t.Errorf("report does not show the script:\n%s", report)
		}
		if got := readFile(t, l.JobFile); got != script {
			t.Errorf("job file = %q, want the script as given", got)
		}
	})
	t.Run("interpreter", func(t *testing.T) {
		t.Parallel()
		// The kernel runs the #! interpreter with the job file: cat prints it.
		script := "#!/bin/cat\nthis is not shell\n"
		l := newLaunch(t, script)
		l.Job.Spec.CommandIsScript = true
		l.Job.Spec.OutputFile = "out"
		wantDone(t, runJob(t, l))
		if jobOut, _ := output(t, filepath.Join(dirOf(l), "out")); jobOut != script {
			t.Errorf("output = %q, want the script printed by cat", jobOut)
		}
	})
	t.Run("no shebang", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, "#BSUB -q normal\nx=1\necho \"x=$x $0\"\n")
		l.Job.Spec.CommandIsScript = true
		l.Job.Spec.OutputFile = "out"
		wantDone(t, runJob(t, l))
		if jobOut, _ := output(t, filepath.Join(dirOf(l), "out")); jobOut != "x=1 "+l.JobFile+"\n" {
			t.Errorf("output = %q", jobOut)
		}
	})
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	l := newLaunch(t, `echo before; exit 3`)
	l.Job.Spec.OutputFile = "out"
	ev := runJob(t, l)
	if ev.State != api.JobState_EXIT || ev.ExitStatus != 3 || ev.Signal != 0 || ev.TermReason != api.TermReason_TERM_UNKNOWN {
		t.Errorf("event = %v, want EXIT 3", ev)
	}
	jobOut, report := output(t, filepath.Join(dirOf(l), "out"))
	if jobOut != "before\n" {
		t.Errorf("output = %q", jobOut)
	}
	if !strings.Contains(report, "\n\nExited with exit code 3.\n\nResource usage summary:") ||
		!strings.Contains(report, "in cluster <cluster1> Exited\n") {
		t.Errorf("report:\n%s", report)
	}
}

func TestSignalExit(t *testing.T) {
	t.Parallel()
	l := newLaunch(t, `kill -TERM $$; sleep 5`)
	ev := runJob(t, l)
	if ev.State != api.JobState_EXIT || ev.ExitStatus != 143 || ev.Signal != int32(syscall.SIGTERM) {
		t.Errorf("event = %v, want EXIT 143 by SIGTERM", ev)
	}
	if ev.TermReason != api.TermReason_TERM_UNKNOWN {
		t.Errorf("term reason %v for a signal the shepherd did not send", ev.TermReason)
	}
}

func TestRunLimit(t *testing.T) {
	t.Parallel()
	t.Run("SIGUSR2", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `sleep 30`)
		l.Job.Spec.OutputFile = "out"
		l.Job.Effective.RunLimitSec = 1
		began := time.Now()
		ev := runJob(t, l)
		if ev.State != api.JobState_EXIT || ev.ExitStatus != 140 || ev.Signal != int32(syscall.SIGUSR2) ||
			ev.TermReason != api.TermReason_TERM_RUNLIMIT || !strings.HasPrefix(ev.Detail, "TERM_RUNLIMIT") {
			t.Errorf("event = %v, want EXIT 140 by SIGUSR2, TERM_RUNLIMIT", ev)
		}
		if d := time.Since(began); d < time.Second {
			t.Errorf("killed after %v, before the limit", d)
		}
		_, report := output(t, filepath.Join(dirOf(l), "out"))
		if !strings.Contains(report, "\nTERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.\n") {
			t.Errorf("report:\n%s", report)
		}
	})
	t.Run("SIGKILL after grace", func(t *testing.T) {
		t.Parallel()
		// The job ignores SIGUSR2 (and so does sleep, which inherits it).
		l := newLaunch(t, `trap "" USR2; sleep 30`)
		l.Job.Spec.RunLimitSec = 1
		l.KillGraceMs = 500
		ev := runJob(t, l)
		if ev.ExitStatus != 137 || ev.Signal != int32(syscall.SIGKILL) || ev.TermReason != api.TermReason_TERM_RUNLIMIT {
			t.Errorf("event = %v, want EXIT 137 by SIGKILL, TERM_RUNLIMIT", ev)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `sleep 30`)
		l.Job.Spec.TermTime = time.Now().Add(-time.Second).Unix() // already passed
		ev := runJob(t, l)
		if ev.ExitStatus != 140 || ev.TermReason != api.TermReason_TERM_DEADLINE || !strings.HasPrefix(ev.Detail, "TERM_DEADLINE") {
			t.Errorf("event = %v, want EXIT 140, TERM_DEADLINE", ev)
		}
	})
}

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// memLaunch is a job that holds 64 MB for a while, over its 16 MB -M.
	memLaunch := func(t *testing.T, sleep string) *api.Launch {
		l := newLaunch(t, "exec "+exe)
		l.Job.Spec.Env = append(l.Job.Spec.Env, helperEnv+"=alloc", "XCE_EXEC_TEST_MB=64", "XCE_EXEC_TEST_SLEEP="+sleep)
		l.Job.Spec.MemLimitKb = 16 << 10
		l.KillGraceMs = 300
		return l
	}
	wantKilled := func(t *testing.T, l *api.Launch, ev *api.Event) {
		t.Helper()
		if ev.State != api.JobState_EXIT || ev.TermReason != api.TermReason_TERM_MEMLIMIT || !strings.HasPrefix(ev.Detail, "TERM_MEMLIMIT") {
			t.Errorf("event = %v, want EXIT with TERM_MEMLIMIT", ev)
		}
		if ev.Usage.GetMaxMemKb() <= l.Job.Spec.MemLimitKb {
			t.Errorf("max memory %d KB, want over the limit", ev.Usage.GetMaxMemKb())
		}
	}
	for _, key := range []string{"LSB_MEMLIMIT_ENFORCE", "LSB_JOB_MEMLIMIT"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			l := memLaunch(t, "30s")
			l.MemlimitEnforce, l.JobMemlimit = key == "LSB_MEMLIMIT_ENFORCE", key == "LSB_JOB_MEMLIMIT"
			ev := runJob(t, l)
			wantKilled(t, l, ev)
			if ev.ExitStatus != 130 && ev.ExitStatus != 143 && ev.ExitStatus != 137 {
				t.Errorf("exit status %d, want death by SIGINT, SIGTERM or SIGKILL", ev.ExitStatus)
			}
		})
	}
	t.Run("hard", func(t *testing.T) {
		t.Parallel()
		l := memLaunch(t, "30s")
		l.Job.Spec.MemLimitHard = true
		ev := runJob(t, l)
		wantKilled(t, l, ev)
		if ev.ExitStatus != 137 {
			t.Errorf("exit status %d, want 137 (SIGKILL at once)", ev.ExitStatus)
		}
	})
	t.Run("default: not killed", func(t *testing.T) {
		t.Parallel()
		// Over the limit for several samples, and still it ends by itself.
		l := memLaunch(t, "3s")
		ev := runJob(t, l)
		wantDone(t, ev)
		if ev.Usage.GetMaxMemKb() <= l.Job.Spec.MemLimitKb {
			t.Errorf("max memory %d KB, want over the limit", ev.Usage.GetMaxMemKb())
		}
	})
}

// TestMemoryRlimit: -M is the job's soft RLIMIT_RSS, as LSF sets it,
// except with LSB_JOB_MEMLIMIT.
func TestMemoryRlimit(t *testing.T) {
	t.Parallel()
	for _, jobMemlimit := range []bool{false, true} {
		t.Run(fmt.Sprint("job_memlimit=", jobMemlimit), func(t *testing.T) {
			t.Parallel()
			l := newLaunch(t, `grep "Max resident set" /proc/self/limits`)
			l.Job.Spec.OutputFile = "out"
			l.Job.Spec.MemLimitKb = 4096
			l.JobMemlimit = jobMemlimit
			wantDone(t, runJob(t, l))
			jobOut, _ := output(t, filepath.Join(dirOf(l), "out"))
			f := strings.Fields(jobOut)
			if len(f) < 5 {
				t.Fatalf("output %q", jobOut)
			}
			want := "4194304"
			if jobMemlimit {
				want = "unlimited"
			}
			if f[3] != want {
				t.Errorf("soft RLIMIT_RSS %s, want %s (%q)", f[3], want, jobOut)
			}
		})
	}
}

func TestCwd(t *testing.T) {
	t.Parallel()
	t.Run("fallback to /tmp", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `pwd; echo "$LS_EXECCWD"`)
		l.Job.Spec.Cwd = "/no/such/directory"
		l.Job.Spec.OutputFile = filepath.Join(dirOf(l), "out")
		ev := runJob(t, l)
		wantDone(t, ev)
		if ev.ExecCwd != "/tmp" || !strings.Contains(ev.Detail, "/no/such/directory") {
			t.Errorf("exec cwd %q, detail %q; want /tmp and a note", ev.ExecCwd, ev.Detail)
		}
		jobOut, report := output(t, filepath.Join(dirOf(l), "out"))
		if jobOut != "/tmp\n/tmp\n" {
			t.Errorf("output = %q", jobOut)
		}
		if !strings.Contains(report, "</tmp> was used as the working directory.") {
			t.Errorf("report:\n%s", report)
		}
	})
	t.Run("pattern created", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `pwd`)
		l.Job.ArrayIndex = 2
		l.Job.Spec.Cwd = "work/%J_%I"
		l.Job.Spec.OutputFile = "out"
		ev := runJob(t, l)
		wantDone(t, ev)
		want := filepath.Join(dirOf(l), "work", "748_2")
		if ev.ExecCwd != want {
			t.Errorf("exec cwd %q, want %q", ev.ExecCwd, want)
		}
		// -o is relative to the execution directory.
		if jobOut, _ := output(t, filepath.Join(want, "out")); jobOut != want+"\n" {
			t.Errorf("output = %q", jobOut)
		}
	})
}

func TestStartFileBeforeEnd(t *testing.T) {
	t.Parallel()
	l := newLaunch(t, `while [ ! -e go ]; do sleep 0.02; done`)
	done := make(chan *api.Event, 1)
	os.MkdirAll(filepath.Dir(l.StatusFile), 0o700)
	go func() {
		ev, err := Run(l)
		if err != nil {
			t.Error(err)
		}
		done <- ev
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(l.StartFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no start file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := readEvent(t, l.StartFile)
	if start.Type != api.EventType_START || start.State != api.JobState_RUN || start.Pid <= 0 ||
		start.ExecCwd != dirOf(l) || start.ExecHome != dirOf(l) || start.Time == 0 {
		t.Errorf("start event = %v", start)
	}
	if pgid, err := syscall.Getpgid(int(start.Pid)); err != nil || pgid != int(start.Pid) {
		t.Errorf("job pgid = %d (%v), want its pid %d", pgid, err, start.Pid)
	}
	if _, err := os.Stat(l.StatusFile); err == nil {
		t.Errorf("status file written while the job runs")
	}
	os.WriteFile(filepath.Join(dirOf(l), "go"), nil, 0o644)
	ev := <-done
	wantDone(t, ev)
	if ev.Pid != start.Pid {
		t.Errorf("FINISH pid %d, START pid %d", ev.Pid, start.Pid)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	l := newLaunch(t, `sleep 0.4 & sleep 0.5; wait`)
	ev := runJob(t, l)
	wantDone(t, ev)
	u := &api.ResourceUsage{}
	b, err := os.ReadFile(l.StatusFile + ".usage")
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, u); err != nil {
		t.Fatal(err)
	}
	if u.Pgid != ev.Pid || !slices.Contains(u.Pids, ev.Pid) || u.Nprocs < 3 || u.Nthreads < u.Nprocs ||
		u.MemKb <= 0 || u.MaxMemKb < u.MemKb || u.CollectedTime == 0 {
		t.Errorf("usage sample = %v, want the shell and its two sleeps", u)
	}
	if ev.Usage.GetNprocs() < 3 || ev.Usage.GetMaxMemKb() <= 0 || ev.Usage.GetAvgMemKb() <= 0 {
		t.Errorf("final usage = %v", ev.Usage)
	}
}

func TestNotifyEndAndSpool(t *testing.T) {
	t.Parallel()
	t.Run("spool", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo out; echo err >&2`)
		os.MkdirAll(filepath.Dir(l.Job.SpoolOutput), 0o700)
		os.WriteFile(l.Job.SpoolOutput, []byte("stale\n"), 0o600)
		wantDone(t, runJob(t, l))
		if jobOut, _ := output(t, l.Job.SpoolOutput); jobOut != "out\nerr\n" {
			t.Errorf("spool = %q", jobOut)
		}
	})
}

func TestUmask(t *testing.T) {
	t.Parallel()
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprint("stdout_direct=", direct), func(t *testing.T) {
			t.Parallel()
			l := newLaunch(t, `umask > mask; echo x > made`)
			l.StdoutDirect = direct
			l.Job.Spec.Umask = 0o027
			l.Job.Spec.OutputFile = "out"
			wantDone(t, runJob(t, l))
			dir := dirOf(l)
			if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "mask"))); got != "0027" {
				t.Errorf("job's umask = %q, want 0027", got)
			}
			for _, f := range []string{"made", "out"} {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o640 {
					t.Errorf("%s: mode %v (%v), want 0640", f, fi.Mode(), err)
				}
			}
		})
	}
}

// startShepherd writes l's launch file and starts the shepherd on it as
// xced does: a separate process in its own session, with fd3 as its file
// descriptor 3 (closed here once passed on). It returns the process and
// its log (stderr).
// writeLaunch writes l into "launch" beside its status file, as the
// worker does, and returns the file's path.
func writeLaunch(t *testing.T, l *api.Launch) string {
	t.Helper()
	runDir := filepath.Dir(l.StatusFile)
	os.MkdirAll(runDir, 0o700)
	launchFile := filepath.Join(runDir, "launch")
	b, _ := proto.Marshal(l)
	if err := os.WriteFile(launchFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return launchFile
}

func startShepherd(t *testing.T, l *api.Launch, fd3 *os.File) (*osexec.Cmd, *bytes.Buffer) {
	t.Helper()
	launchFile := writeLaunch(t, l)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	cmd := osexec.Command(exe, "shepherd", launchFile)
	cmd.Env = append(os.Environ(), helperEnv+"=shepherd")
	cmd.ExtraFiles = []*os.File{fd3}
	cmd.Stderr = logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fd3.Close()
	return cmd, logs
}

// TestShepherdMain runs the shepherd as xced does: a separate process given
// a launch file and a "started" pipe on file descriptor 3.
func TestShepherdMain(t *testing.T) {
	t.Parallel()
	l := newLaunch(t, `echo "job $LSB_JOBID"; exit 4`)
	l.Job.Spec.OutputFile = "out"
	started, ready, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd, logs := startShepherd(t, l, ready)
	said, _ := io.ReadAll(started)
	started.Close()
	pid, err := strconv.Atoi(strings.TrimSuffix(string(said), "\n"))
	if err != nil || !strings.HasSuffix(string(said), "\n") {
		t.Errorf("the started pipe said %q, want the job's pid and a newline", said)
	}
	if start := readEvent(t, l.StartFile); int(start.Pid) != pid {
		t.Errorf("the started pipe said pid %d, the start file %d", pid, start.Pid)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("shepherd: %v\n%s", err, logs.String())
	}
	ev := readEvent(t, l.StatusFile)
	if ev.Type != api.EventType_FINISH || ev.State != api.JobState_EXIT || ev.ExitStatus != 4 {
		t.Errorf("status = %v, want EXIT 4", ev)
	}
	jobOut, report := output(t, filepath.Join(dirOf(l), "out"))
	if jobOut != "job 748\n" || !strings.Contains(report, "Exited with exit code 4.") {
		t.Errorf("output %q, report:\n%s", jobOut, report)
	}

	// An unreadable launch file: exit code 2 and nothing else.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd = osexec.Command(exe, "shepherd", filepath.Join(filepath.Dir(l.StatusFile), "missing"))
	cmd.Env = append(os.Environ(), helperEnv+"=shepherd")
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("missing launch file: %v, want exit code 2", err)
	}
}

// TestShepherdGate: on a socket (the worker's) the shepherd waits for its
// go before it does anything: when the socket closes instead, it exits
// with code 3 and the job never starts; after the go it runs the job and
// reports the pid on the same socket.
func TestShepherdGate(t *testing.T) {
	t.Parallel()
	for _, goes := range []bool{false, true} {
		l := newLaunch(t, "touch ran")
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		worker, ready := os.NewFile(uintptr(fds[0]), "worker"), os.NewFile(uintptr(fds[1]), "ready")
		cmd, logs := startShepherd(t, l, ready)
		ran := filepath.Join(dirOf(l), "ran")
		if !goes {
			// Nothing happens until the go: the job has not run.
			time.Sleep(100 * time.Millisecond)
			if _, err := os.Stat(ran); err == nil {
				t.Error("the job ran before its go")
			}
			worker.Close()
			err := cmd.Wait()
			if cmd.ProcessState.ExitCode() != 3 {
				t.Errorf("without its go the shepherd ended with %v, want exit code 3\n%s", err, logs.String())
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the job ran without its go")
			}
			if _, err := os.Lstat(l.StartFile); err == nil {
				t.Error("a start file was written without the go")
			}
			continue
		}
		if _, err := worker.Write([]byte{GoByte}); err != nil {
			t.Fatal(err)
		}
		said := readLines(t, worker, 2)
		worker.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shepherd: %v\n%s", err, logs.String())
		}
		if pid, err := strconv.Atoi(said[0]); err != nil || int(readEvent(t, l.StartFile).Pid) != pid || said[1] != IdleWord {
			t.Errorf("the socket said %q, want the job's pid, then %q", said, IdleWord)
		}
		if ev := readEvent(t, l.StatusFile); ev.State != api.JobState_DONE {
			t.Errorf("status = %v, want DONE", ev)
		}
		if _, err := os.Stat(ran); err != nil {
			t.Errorf("the job did not run after its go: %v", err)
		}
	}
}

func TestExpandPattern(t *testing.T) {
	for _, c := range []struct {
		in   string
		id   int64
		idx  int32
		want string
	}{
		{"out.%J", 12, 0, "out.12"},
		{"out.%J.%I", 12, 3, "out.12.3"},
		{"%I/%J/%I", 7, 0, "0/7/0"},
		{"plain", 7, 1, "plain"},
		{"100%", 7, 1, "100%"},
		{"%U", 7, 1, "%U"},
	} {
		if got := ExpandPattern(c.in, c.id, c.idx); got != c.want {
			t.Errorf("ExpandPattern(%q, %d, %d) = %q, want %q", c.in, c.id, c.idx, got, c.want)
		}
	}
	v := pathVars{jobID: 5, index: 2, user: "al", group: "g", host: "h", project: "p", jobGroup: "/a/b"}
	if got, want := expandFull("%U/%JG/%J_%I/%P/%H/%G/%EJ.%EI", v), "al/a/b/5_2/p/h/g/5.2"; got != want {
		t.Errorf("expandFull = %q, want %q", got, want)
	}
}

func TestArrayBounds(t *testing.T) {
	for _, c := range []struct {
		job       *api.Job
		spec      string
		end, step int32
	}{
		{&api.Job{ArrayIndex: 3, ArrayEnd: 9, ArrayStep: 3}, "[1-100:7]", 9, 3},
		{&api.Job{ArrayIndex: 3}, "[1-10:2,15]", 15, 2},
		{&api.Job{ArrayIndex: 3}, "[1,3,7-9]", 9, 1},
		{&api.Job{ArrayIndex: 3}, "", 3, 1},
	} {
		if end, step := arrayBounds(c.job, c.spec); end != c.end || step != c.step {
			t.Errorf("arrayBounds(%v, %q) = %d, %d; want %d, %d", c.job, c.spec, end, step, c.end, c.step)
		}
	}
}

func TestParseStat(t *testing.T) {
	line := "4242 (we (ird) name) S 1 4240 4239 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 3 0 12345 10000000 256 18446744073709551615\n"
	st, ok := parseStat([]byte(line))
	if !ok || st.state != 'S' || st.ppid != 1 || st.pgrp != 4240 || st.session != 4239 || st.cpuTicks != 210 || st.threads != 3 || st.rssPages != 256 {
		t.Errorf("parseStat = %+v, %v", st, ok)
	}
	if _, ok := parseStat([]byte("4242 (short) S 1 2")); ok {
		t.Errorf("a truncated line parsed")
	}
}

// -N mails the report and -B the start through sendmail; without a
// sendmail the report goes to the output file, as LSF does.
func TestMail(t *testing.T) {
	dir := t.TempDir()
	box := filepath.Join(dir, "mailbox")
	fake := filepath.Join(dir, "sendmail")
	os.WriteFile(fake, []byte("#!/bin/sh\necho \"ARGS $*\" >> "+box+"\ncat >> "+box+"\necho .END >> "+box+"\n"), 0o755)
	t.Setenv("XCE_SENDMAIL", fake)

	l := newLaunch(t, `echo hi`)
	l.Job.Spec.OutputFile = "out"
	l.Job.Spec.NotifyEnd, l.Job.Spec.NotifyBegin = true, true
	l.Job.Spec.MailUser = "someone@example.org"
	wantDone(t, runJob(t, l))
	if got := readFile(t, filepath.Join(dirOf(l), "out")); got != "hi\n" {
		t.Errorf("output = %q, want the report mailed, not appended", got)
	}
	var mail string
	for i := 0; i < 100 && strings.Count(mail, ".END") < 2; i++ { // -B's note is sent in the background
		time.Sleep(20 * time.Millisecond)
		b, _ := os.ReadFile(box)
		mail = string(b)
	}
	for _, want := range []string{"ARGS -t -oi", "To: someone@example.org", "Subject: Job 748: <echo hi> in cluster <cluster1> Done",
		"Successfully completed.", "started on <hostA>"} {
		if !strings.Contains(mail, want) {
			t.Errorf("mail lacks %q:\n%s", want, mail)
		}
	}

	// -Ne: a job that succeeds keeps its report in the output file.
	os.Remove(box)
	l = newLaunch(t, `echo ok`)
	l.Job.Spec.OutputFile = "out"
	l.Job.Spec.NotifyEnd, l.Job.Spec.NotifyExitOnly = true, true
	wantDone(t, runJob(t, l))
	if got := readFile(t, filepath.Join(dirOf(l), "out")); !strings.Contains(got, "Successfully completed.") {
		t.Errorf("-Ne of a job that succeeded: %q", got)
	}
	if _, err := os.Stat(box); err == nil {
		t.Error("-Ne mailed the report of a job that succeeded")
	}

	t.Setenv("XCE_SENDMAIL", filepath.Join(dir, "none"))
	l = newLaunch(t, `echo hi`)
	l.Job.Spec.OutputFile = "out"
	l.Job.Spec.NotifyEnd = true
	wantDone(t, runJob(t, l))
	if got := readFile(t, filepath.Join(dirOf(l), "out")); !strings.Contains(got, "Successfully completed.") {
		t.Errorf("without sendmail the report is lost: %q", got)
	}
}

// readLines reads n lines from the shepherd's socket.
func readLines(t *testing.T, r io.Reader, n int) []string {
	t.Helper()
	var lines []string
	var b [1]byte
	line := ""
	for len(lines) < n {
		if _, err := r.Read(b[:]); err != nil {
			t.Fatalf("after %q: %v", lines, err)
		}
		if b[0] == '\n' {
			lines, line = append(lines, line), ""
			continue
		}
		line += string(b[:])
	}
	return lines
}

// TestShepherdTakesNextJob: a shepherd on the worker's socket says it is
// idle once the job's end is recorded, and runs the job handed over next
// (SendJob) with that job's launch, log and records, and nothing of the
// last job's: not its umask, directory, environment or processes. A
// handover that is not one ends it with code 2; a closed socket, 0.
func TestShepherdTakesNextJob(t *testing.T) {
	t.Parallel()
	l := newLaunch(t, "sleep 300 & echo $! > bg; touch ran")
	l.Job.Spec.Umask = 0o077
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	worker, ready := os.NewFile(uintptr(fds[0]), "worker"), os.NewFile(uintptr(fds[1]), "ready")
	defer worker.Close()
	cmd, _ := startShepherd(t, l, ready)
	defer cmd.Process.Kill()
	if _, err := worker.Write([]byte{GoByte}); err != nil {
		t.Fatal(err)
	}
	if said := readLines(t, worker, 2); said[1] != IdleWord {
		t.Fatalf("the socket said %q, want a pid, then %q", said, IdleWord)
	}
	bg, _ := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dirOf(l), "bg"))))
	if bg <= 0 || syscall.Kill(bg, 0) == nil {
		t.Errorf("the first job's background process %d lives on into the idle shepherd", bg)
	}

	// The next job: its own directory, files and records.
	l2 := newLaunch(t, `umask; pwd; echo "FOO=$FOO"; ls -l /proc/self/fd`)
	l2.Job.JobId = 749
	l2.Job.Spec.Env = []string{"PATH=" + os.Getenv("PATH")}
	launchFile := writeLaunch(t, l2)
	run2 := filepath.Dir(launchFile)
	launch, err := os.Open(launchFile)
	if err != nil {
		t.Fatal(err)
	}
	open := func(name string) *os.File {
		f, err := os.OpenFile(filepath.Join(run2, name), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	logf, result, usage := open("log"), open("result"), open("usage")
	if err := SendJob(worker, GoByte, launchFile, launch, logf, result, usage); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*os.File{launch, logf, usage} {
		f.Close()
	}
	said := readLines(t, worker, 2)
	if pid, err := strconv.Atoi(said[0]); err != nil || int(readEvent(t, l2.StartFile).Pid) != pid || said[1] != IdleWord {
		t.Errorf("the socket said %q for the next job, want its pid, then %q", said, IdleWord)
	}
	raw, _ := os.ReadFile(result.Name())
	result.Close()
	rec, err := ParseRecord(raw)
	ev := &api.Event{}
	if err != nil || ev.UnmarshalVT(rec) != nil || ev.JobId != 749 || ev.State != api.JobState_DONE {
		t.Errorf("the next job's result record: %v, %v", ev, err)
	}
	out, _ := output(t, l2.Job.SpoolOutput)
	want := fmt.Sprintf("0022\n%s\nFOO=\n", dirOf(l2))
	if !strings.HasPrefix(out, want) {
		t.Errorf("the next job saw\n%s\nwant it to begin\n%s", out, want)
	}
	// Nothing of the shepherd's reaches it: not its socket, nor a record
	// or log handed to it.
	if strings.Contains(out, "socket:") || strings.Contains(out, run2) {
		t.Errorf("the next job inherited the shepherd's descriptors:\n%s", out)
	}

	// Something that is no handover: the shepherd gives up (2).
	if _, err := worker.Write([]byte("nonsense\n")); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Errorf("after a bad handover the shepherd ended with %d, want 2", code)
	}
}

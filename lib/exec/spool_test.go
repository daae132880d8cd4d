package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// spooledOutput splits a spooled -o file: the report at the top, then the
// output after "The output (if any) follows:".
func spooledOutput(t *testing.T, path string) (report, jobOut string) {
	t.Helper()
	s := readFile(t, path)
	if !strings.HasPrefix(s, "Sender: LSF System <lsfadmin@") {
		t.Fatalf("%s does not start with the job report:\n%s", path, s)
	}
	report, jobOut, ok := strings.Cut(s, "\n"+spooledSentence)
	if !ok {
		t.Fatalf("%s has no %q:\n%s", path, spooledSentence, s)
	}
	return report, jobOut
}

// Without LSB_STDOUT_DIRECT the output is spooled and copied to -o at the
// end, under the report: a job may create the -o file's directory itself.
func TestSpooledOutput(t *testing.T) {
	t.Parallel()
	t.Run("mkdir -p then -o in it", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `mkdir -p logs; echo hello; echo oops >&2; echo "$LSB_OUTPUTFILE"`)
		l.StdoutDirect = false
		l.Job.Spec.OutputFile = "logs/%J.out"
		wantDone(t, runJob(t, l))
		out := filepath.Join(dirOf(l), "logs", "748.out")
		report, jobOut := spooledOutput(t, out)
		if jobOut != "hello\noops\n"+out+"\n" {
			t.Errorf("output %q", jobOut)
		}
		if !strings.Contains(report, "Successfully completed.") || strings.Contains(report, "PS:") {
			t.Errorf("report:\n%s", report)
		}
		if _, err := os.Stat(l.Job.SpoolOutput); !os.IsNotExist(err) {
			t.Errorf("spool file left after the copy: %v", err)
		}
	})
	t.Run("separate -e, appended -o", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo out; echo err >&2`)
		l.StdoutDirect = false
		l.Job.Spec.OutputFile, l.Job.Spec.ErrorFile = "o.txt", "errs/"
		os.WriteFile(filepath.Join(dirOf(l), "o.txt"), []byte("before\n"), 0o644)
		wantDone(t, runJob(t, l))
		s := readFile(t, filepath.Join(dirOf(l), "o.txt"))
		if !strings.HasPrefix(s, "before\nSender: LSF System") ||
			!strings.HasSuffix(s, spooledSentence+"out\n\n\nPS:\n\nRead file <errs/748.err> for stderr output of this job.\n\n") {
			t.Errorf("-o file:\n%s", s)
		}
		if e := readFile(t, filepath.Join(dirOf(l), "errs", "748.err")); e != "err\n" {
			t.Errorf("-e file %q", e)
		}
	})
	t.Run("-o cannot be written: kept in ~/.lsbatch", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo lost`)
		l.StdoutDirect = false
		l.Job.Spec.OutputFile = "nodir/out"
		ev := runJob(t, l)
		wantDone(t, ev)
		kept := filepath.Join(dirOf(l), ".lsbatch", "1700000000.748.out")
		if !strings.Contains(ev.Detail, "<nodir/out> could not be written") || !strings.Contains(ev.Detail, kept) {
			t.Errorf("detail %q", ev.Detail)
		}
		report, jobOut := spooledOutput(t, kept)
		if jobOut != "lost\n" || !strings.Contains(report, "The output is kept in <"+kept+">.") {
			t.Errorf("kept file: report\n%s\noutput %q", report, jobOut)
		}
	})
	t.Run("-o and -e /dev/null: spools removed uncopied", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo gone; echo gone too >&2`)
		l.StdoutDirect = false
		l.Job.Spec.OutputFile, l.Job.Spec.ErrorFile = os.DevNull, os.DevNull
		wantDone(t, runJob(t, l))
		for _, p := range []string{l.Job.SpoolOutput, l.Job.SpoolOutput + ".err"} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s left behind: %v", p, err)
			}
		}
	})
	t.Run("LSB_STDOUT_DIRECT", func(t *testing.T) {
		t.Parallel()
		l := newLaunch(t, `echo direct`)
		l.Job.Spec.OutputFile = "nodir/out"
		if ev := runJob(t, l); ev.ExitStatus != exitSetup {
			t.Errorf("direct -o into a missing directory: %v, want exit %d", ev, exitSetup)
		}
	})
}

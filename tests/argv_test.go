package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bsub keeps the command's words: sh -c "exit 3" runs sh with the one
// argument "exit 3" (not sh -c exit 3, which exits 0), and bjobs shows
// the command as LSF does.
func TestArgvBsubKeepsCommandWords(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "sh", "-c", "exit 3")
	c.waitState(id, "EXIT")
	if code := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exit_code", id)); code != "3" {
		t.Errorf("exit_code %q, want 3", code)
	}
	if long := c.must("", "bjobs", "-UF", id); !strings.Contains(long, `Command <sh -c "exit 3">`) {
		t.Errorf("bjobs -UF:\n%s", long)
	}

	// Words with spaces, quotes, $, ;, globs and redirections reach the
	// job as the user gave them, one per printf line.
	words := []string{"a b", `say "hi"`, "it's", "a;b", "$HOME x", "*", ">x", "|", "", "{a,b}", `back\slash`, "-n"}
	id = c.submit("", append([]string{"-o", "words.out", "printf", `[%s]\n`}, words...)...)
	c.waitState(id, "DONE")
	out, err := os.ReadFile(filepath.Join(c.work, "words.out"))
	if err != nil {
		t.Fatal(err)
	}
	want := "[" + strings.Join(words, "]\n[") + "]\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("the job printed\n%s\nwant the lines\n%s", out, want)
	}
	if _, err := os.Stat(filepath.Join(c.work, "x")); err == nil {
		t.Error("the word >x redirected the job's output")
	}

	// One quoted word is a command line for the shell, as LSF runs it.
	id = c.submit("", "-o", "line.out", "echo one; echo two")
	c.waitState(id, "DONE")
	if out, _ := os.ReadFile(filepath.Join(c.work, "line.out")); !strings.Contains(string(out), "one\ntwo\n") {
		t.Errorf("bsub \"echo one; echo two\" printed %q", out)
	}

	// A variable in a word is expanded when the job runs: LSF's job array
	// idiom (bsub ./myJob input.\$LSB_JOBINDEX).
	id = c.submit("", "-J", "arr[1-2]", "-o", "arr.%I", "echo", "input.$LSB_JOBINDEX")
	c.waitState(id, "DONE")
	for _, i := range []string{"1", "2"} {
		if out, _ := os.ReadFile(filepath.Join(c.work, "arr."+i)); !strings.Contains(string(out), "input."+i+"\n") {
			t.Errorf("element %s printed %q", i, out)
		}
	}
}

// LSF's getopt forms: bundled switches, values attached to one-letter
// options, the multi-letter words; --word is an error, never a command.
func TestArgvOptionForms(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "-n2", "-qnormal", "-Hx", "-Jattached", "sleep", "30")
	if got := strings.Join(strings.Fields(c.must("", "bjobs", "-noheader", "-o", "slots queue stat job_name exclusive", id)), " "); got != "2 normal PSUSP attached Y" {
		t.Errorf("bsub -n2 -qnormal -Hx -Jattached: %q", got)
	}
	for _, args := range [][]string{{"-aw"}, {"-lw"}, {"-ap"}, {"-uall"}, {"-awuall"}, {"-uall", "-noheader"}} {
		if r := c.run("", "bjobs", append(args, id)...); r.code != 0 || !strings.Contains(r.stdout, id) {
			t.Errorf("bjobs %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	for _, sig := range []string{"-s9", "-sKILL"} {
		id := c.submit("", "sleep", "30")
		c.waitState(id, "RUN")
		c.must("", "bkill", sig, id)
		c.waitState(id, "EXIT")
	}

	before := c.must("", "bjobs", "-a", "-noheader", "-o", "jobid")
	for _, tc := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"bsub", []string{"--foo", "true"}, "bsub: illegal option -- -foo\nUsage: bsub [options] command [arguments]\n"},
		{"bsub", []string{"--q", "normal", "true"}, "bsub: illegal option -- -q\n"},
		{"bjobs", []string{"--l"}, "bjobs: illegal option -- -l\n"},
		{"bjobs", []string{"-aZ"}, "bjobs: illegal option -- aZ\n"},
		{"bkill", []string{"-s"}, "bkill: option requires an argument -- s\n"},
	} {
		r := c.run("", tc.cmd, tc.args...)
		if r.code != 255 || !strings.HasPrefix(r.stderr, tc.want) || !strings.Contains(r.stderr, "Usage: ") {
			t.Errorf("%s %s: exit %d, stderr %q, want 255 and %q", tc.cmd, strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
	if after := c.must("", "bjobs", "-a", "-noheader", "-o", "jobid"); after != before {
		t.Errorf("a refused bsub submitted a job:\nbefore %q\nafter %q", before, after)
	}

	// Options end at bsub's first command word; what follows is the
	// job's, dashes and all.
	id = c.submit("", "-o", "dash.out", "printf", `%s\n`, "-q", "--x")
	c.waitState(id, "DONE")
	if out, _ := os.ReadFile(filepath.Join(c.work, "dash.out")); !strings.Contains(string(out), "-q\n--x\n") {
		t.Errorf("the job printed %q", out)
	}

	// -h spells the options as LSF does.
	r := c.run("", "bjobs", "-h")
	if r.code != 0 || !strings.Contains(r.stderr, "\n  -noheader ") || !strings.Contains(r.stderr, "\n  -l ") || strings.Contains(r.stderr, "--") {
		t.Errorf("bjobs -h: exit %d\n%s", r.code, r.stderr)
	}
}

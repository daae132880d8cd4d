package cli

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Every option of every command, as LSF's getopt reads it: each one-letter
// switch alone and bundled with every other; each one-letter value option
// with its value attached or in the next word, alone and after a switch;
// each multi-letter word as it is, never as a bundle; --name refused. A
// word that is itself an option wins over reading it as a bundle (bjobs
// -pl is -pl, not -p -l). What the translation gives must parse, with the
// values given. New commands and options are covered as they are added.
func TestArgvEveryCommandsOptions(t *testing.T) {
	cmds := Commands()
	if len(cmds) == 0 {
		t.Fatal("no commands")
	}
	for _, c := range cmds {
		fs := c.Flags()
		var switches, valued, long []*pflag.Flag
		fs.VisitAll(func(f *pflag.Flag) {
			switch {
			case len(OptionName(f)) > 1:
				long = append(long, f)
			case takesValue(f):
				valued = append(valued, f)
			default:
				switches = append(switches, f)
			}
		})
		value := func(f *pflag.Flag) string {
			if f.Value.Type() == "int" {
				return "7"
			}
			return "val"
		}
		check := func(in []string, want ...string) {
			t.Helper()
			got, err := lsfArgs(fs, in, false)
			if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s %s: %q %v, want %q", c.Name(), strings.Join(in, " "), got, err, want)
				return
			}
			if err := fs.Parse(got); err != nil {
				t.Errorf("%s %s: %q does not parse: %v", c.Name(), strings.Join(in, " "), got, err)
			}
		}
		refused := func(in []string, want string) {
			t.Helper()
			if got, err := lsfArgs(fs, in, false); err == nil || err.Error() != want {
				t.Errorf("%s %s: %q %v, want the error %q", c.Name(), strings.Join(in, " "), got, err, want)
			}
		}
		// exact reports whether a word is an option of its own, which
		// then wins over the bundle.
		exact := func(word string) bool { return lsfFlag(fs, word) != nil }
		on := func(f *pflag.Flag) string { return "--" + f.Name }
		set := func(f *pflag.Flag, v string) string { return "--" + f.Name + "=" + v }

		for _, a := range switches {
			check([]string{"-" + OptionName(a)}, on(a))
			for _, b := range switches {
				if w := OptionName(a) + OptionName(b); !exact(w) {
					check([]string{"-" + w}, on(a), on(b))
				}
			}
		}
		for _, v := range valued {
			n, x := OptionName(v), value(v)
			check([]string{"-" + n, x}, set(v, x))
			check([]string{"-" + n, "-" + x}, set(v, "-"+x)) // a value may start with -
			if !exact(n + x) {
				check([]string{"-" + n + x}, set(v, x))
			}
			refused([]string{"-" + n}, "option requires an argument -- "+n)
			for _, s := range switches {
				w := OptionName(s) + n
				if exact(w) {
					continue
				}
				check([]string{"-" + w, x}, on(s), set(v, x))
				if !exact(w + x) {
					check([]string{"-" + w + x}, on(s), set(v, x))
				}
				refused([]string{"-" + w}, "option requires an argument -- "+n)
			}
		}
		for _, f := range long {
			n := OptionName(f)
			if takesValue(f) {
				check([]string{"-" + n, value(f)}, set(f, value(f)))
				refused([]string{"-" + n}, "option requires an argument -- "+n)
			} else {
				check([]string{"-" + n}, on(f))
			}
			refused([]string{"--" + n}, "illegal option -- -"+n)
		}
		refused([]string{"--nosuch"}, "illegal option -- -nosuch")
		refused([]string{"-\x01"}, "illegal option -- \x01")
	}
}

// translate is what cmd's argv becomes.
func translate(t *testing.T, cmd string, args ...string) string {
	t.Helper()
	for _, c := range Commands() {
		if c.Name() == cmd {
			got, err := lsfArgs(c.Flags(), args, cmd == "bsub")
			if err != nil {
				return "error: " + err.Error()
			}
			return strings.Join(got, " ")
		}
	}
	t.Fatalf("no command %s", cmd)
	return ""
}

// The forms LSF users type, on the commands they type them to.
func TestArgvAsUsersTypeThem(t *testing.T) {
	for _, tc := range []struct {
		cmd, in, want string
	}{
		{"bjobs", "-aw", "--a --w"},
		{"bjobs", "-lw 12", "--l --w 12"},
		{"bjobs", "-ap", "--a --p"},
		{"bjobs", "-app prof", "--app=prof"},
		{"bjobs", "-uall -noheader", "--u=all --noheader"},
		{"bjobs", "-pl", "--pl"},
		{"bjobs", "-UF", "--UF"},
		{"bjobs", "-json -o jobid", "--json --o=jobid"},
		{"bjobs", "-awu bob", "--a --w --u=bob"},
		{"bjobs", "--l", "error: illegal option -- -l"},
		{"bkill", "-s9 12", "--s=9 12"},
		{"bkill", "-sKILL 12", "--s=KILL 12"},
		{"bkill", "-stat run 0", "--stat=run 0"},
		{"bsub", "-n2 -qnormal sleep 1", "--n=2 --q=normal -- sleep 1"},
		{"bsub", "-Is bash", "--Is -- bash"},
		{"bsub", "-n 2 mpirun -np 2 ./a.out", "--n=2 -- mpirun -np 2 ./a.out"},
		{"bsub", "true --foo", "-- true --foo"},
		{"bsub", "--foo true", "error: illegal option -- -foo"},
		{"bsub", "-x -- -weird", "--x -- -weird"},
	} {
		if got := translate(t, tc.cmd, strings.Fields(tc.in)...); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.cmd, tc.in, got, tc.want)
		}
	}
}

// -h lists every option as LSF spells it (-l, -noheader), never --l; a
// bad option gives the usage line and 255.
func TestHelpSpellsOptionsAsLSF(t *testing.T) {
	var errb bytes.Buffer
	old := sys
	defer func() { sys = old }()
	sys.stderr, sys.stdout = &errb, &errb
	doubleDash := regexp.MustCompile(`(^|\s)--\w`)
	for _, c := range Commands() {
		errb.Reset()
		if rc := Main(c.Name(), []string{"-h"}); rc != 0 {
			t.Errorf("%s -h: exit %d", c.Name(), rc)
		}
		help := errb.String()
		if doubleDash.MatchString(help) {
			t.Errorf("%s -h spells an option with --:\n%s", c.Name(), help)
		}
		if !strings.Contains(help, "Usage:\n  "+c.UseLine()+"\n") {
			t.Errorf("%s -h has no usage line:\n%s", c.Name(), help)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			tag := "\n  -" + OptionName(f)
			if takesValue(f) {
				tag += " " + ArgName(f)
			}
			if !strings.Contains(help, tag+" ") {
				t.Errorf("%s -h lacks %q:\n%s", c.Name(), tag[1:], help)
			}
		})
		errb.Reset()
		if rc := Main(c.Name(), []string{"--nosuch"}); rc != 255 ||
			errb.String() != c.Name()+": illegal option -- -nosuch\nUsage: "+c.UseLine()+"\n" {
			t.Errorf("%s --nosuch: exit %d, %q", c.Name(), rc, errb.String())
		}
	}
}

// The job's shell sees each word as the user gave it: the words are joined
// as jobCommand joins them, run by /bin/sh, and printed one per line.
func TestJobCommandKeepsWords(t *testing.T) {
	shells := []string{"/bin/sh"}
	if _, err := os.Stat("/bin/bash"); err == nil {
		shells = append(shells, "/bin/bash") // brace expansion, as /bin/sh is on some systems
	}
	for _, tc := range []struct {
		words []string
		line  string // what bjobs -l shows as the command
	}{
		{[]string{"sh", "-c", "exit 3"}, `sh -c "exit 3"`},
		{[]string{"echo a b"}, `echo a b`}, // one word: the shell reads it
		{[]string{"printf", `%s\n`, "a b", `say "hi"`, "it's", "$HOME x"}, `printf %s\\n "a b" 'say "hi"' it\'s '$HOME x'`},
		{[]string{"printf", `%s\n`, "a;b", "|", "&&", ">out", "*", "~", "#x", "(y)", "a\tb", "", "x\ny", "`id`", `back\slash`, "it's \"both\""},
			`printf %s\\n a\;b \| \&\& \>out \* \~ \#x \(y\) "a	b" "" "x` + "\n" + `y" \` + "`id\\`" + ` back\\slash 'it'\''s "both"'`},
		{[]string{"printf", `%s\n`, "{a,b}", "€uro", "-n", "--x", "a=b"}, `printf %s\\n \{a,b\} €uro -n --x a=b`},
	} {
		line := jobCommand(tc.words)
		if line != tc.line {
			t.Errorf("%q: %s, want %s", tc.words, line, tc.line)
		}
		if tc.words[0] != "printf" {
			continue
		}
		for _, shell := range shells {
			out, err := exec.Command(shell, "-c", line).Output()
			if err != nil {
				t.Fatalf("%s: %s: %v", shell, line, err)
			}
			if want := strings.Join(tc.words[2:], "\n") + "\n"; string(out) != want {
				t.Errorf("%s: %s printed %q, want %q", shell, line, out, want)
			}
		}
	}
	// A variable in a word is the job's to expand (bsub -J "a[1-3]"
	// ./myJob input.\$LSB_JOBINDEX), in words without whitespace.
	line := jobCommand([]string{"printf", `%s\n`, "in.$X", "$X", "${X}.d", "${X"})
	if line != `printf %s\\n in.$X $X ${X}.d $\{X` {
		t.Errorf("variables: %s", line)
	}
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = []string{"X=7"}
	if out, err := cmd.Output(); err != nil || string(out) != "in.7\n7\n7.d\n${X\n" {
		t.Errorf("%s printed %q %v", line, out, err)
	}
}

// Package cli owns the user commands (bsub, bjobs, bkill, ...): their
// options, LSF's argv rules, #BSUB directives, messages and exit rpcstatus.
// Each command's main.go is one call to Main.
//
// LSF options are single-dash words (-app, -noheader, -json), which pflag
// would read as bundles of one-letter flags. Every LSF option is therefore
// defined as a pflag long flag named exactly like the LSF option, and
// lsfArgs rewrites argv into pflag's form (-app X → --app=X) before cobra
// parses it, by LSF's getopt rules, for every command alike:
//
//   - A word that is an option's whole name is that option, its value the
//     next word: -noheader, -app X, -Is, -UF, -pl, -stat run. This always
//     wins over the two readings below (bjobs -pl is -pl, not -p -l;
//     bkill -stat is -stat, not -s tat).
//   - Otherwise the word is a bundle of one-letter options, read left to
//     right as getopt reads them: switches bundle (bjobs -aw, -lw, -ap),
//     and a one-letter option that takes a value takes the rest of the
//     word (bsub -n2, -qnormal, bjobs -uall, bkill -s9, -sKILL) or, at
//     the word's end, the next word (bjobs -awu bob). Multi-letter options
//     neither bundle nor take an attached value (bsub -Jdx is -J dx).
//   - A value is the next word whatever it starts with (bsub -E -x).
//   - "--" ends the options. Any other --word (--foo, --l) is an illegal
//     option, with the usage line and exit status 255 (--help aside).
//   - For bsub the first word that is not an option ends the options: it
//     and every word after it, "-" words too, are the job's command (bsub
//     -n 2 mpirun -np 2 ./a.out). The other commands take operands among
//     their options (bkill 12 -s KILL).
//
// A word that fits none of these is named whole in the message (bjobs:
// illegal option -- aZ), where getopt would name the letter. -h prints
// the options as LSF spells them (-l, -q queue_name), as the man pages do.
//
// bsub joins the command's words into the line the job's shell runs as
// OpenLava's bsub does (jobCommand): the first word as given, each later
// word quoted so that the shell sees it as the one word the user gave.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
	"xce/lib/rpcstatus"
	"xce/lib/version"
)

// Version is printed by -V (lib/version owns it).
var Version = version.Banner()

// env is what a command reads from its surroundings; tests replace it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

var sys = env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}

// Main runs the named command with its arguments and returns its exit code.
func Main(name string, args []string) int {
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: not an XCE command\n", name)
		return 2
	}
	// Every command's output escapes control characters (lsfout.
	// EscapingWriter): it holds other users' job names, commands, paths
	// and reasons. Not what relays a job's own output to its user, which
	// is the job's to shape: bpeek's output, bsub -I's and blaunch's.
	saved := sys
	defer func() { sys = saved }()
	if !rawStdout[name] {
		sys.stdout = lsfout.EscapingWriter(sys.stdout)
	}
	if !rawStderr[name] {
		sys.stderr = lsfout.EscapingWriter(sys.stderr)
	}
	return cmd(args)
}

// The commands whose standard output or error is a job's own (see Main).
var (
	rawStdout = map[string]bool{"bpeek": true, "bsub": true, "blaunch": true, "battach": true}
	rawStderr = map[string]bool{"bsub": true, "blaunch": true, "battach": true}
)

var commands = map[string]func([]string) int{
	"bsub":     bsub,
	"bjobs":    bjobs,
	"bkill":    bkill,
	"bstop":    bstop,
	"bresume":  bresume,
	"bqueues":  bqueues,
	"bhosts":   bhosts,
	"bhist":    bhist,
	"bpeek":    bpeek,
	"badmin":   badmin,
	"bswitch":  bswitch,
	"brequeue": brequeue,
	"btop":     btop,
	"bbot":     bbot,
	"bwait":    bwait,
	"bjgroup":  bjgroup,
	"bparams":  bparams,
	"bugroup":  bugroup,
	"bmgroup":  bmgroup,
	"bmod":     bmod,
	"lsid":     lsid,
	"lshosts":  lshosts,
	"lsload":   lsload,
	"lsadmin":  lsadmin,
	"lsinfo":   lsinfo,
	"busers":   busers,
	"bacct":    bacct,
	"bapp":     bapp,
	"blimits":  blimits,
	"blaunch":  blaunch,
	"brsvadd":  brsvadd,
	"brsvdel":  brsvdel,
	"brsvs":    brsvs,
	"brsvjob":  brsvjob,
	"brsvmod":  brsvmod,
	"bgadd":    bgadd,
	"bgdel":    bgdel,
	"bgmod":    bgmod,
	"bclaim":   bclaim,
	"battach":  battach,
}

// lsfArgs rewrites LSF argv into pflag's long form (-app X → --app=X,
// -aw → --a --w, -n2 → --n=2) by the rules in the package doc, and words
// a mistake as LSF's getopt does. With stopAtCommand, the first word that
// is not an option ends the options ("--" is inserted before it).
func lsfArgs(fs *pflag.FlagSet, args []string, stopAtCommand bool) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...), nil
		case a == "--help":
			out = append(out, a)
			continue
		case strings.HasPrefix(a, "--"):
			return nil, argvError("illegal option -- " + a[1:])
		case len(a) < 2 || a[0] != '-':
			if stopAtCommand {
				return append(append(out, "--"), args[i:]...), nil
			}
			out = append(out, a)
			continue
		}
		name := a[1:]
		if f := lsfFlag(fs, name); f != nil {
			// The whole word is an option: a multi-letter LSF word
			// (-noheader, -app, -Is) is never read as a bundle.
			if !takesValue(f) {
				out = append(out, "--"+f.Name)
				continue
			}
			if i+1 >= len(args) {
				return nil, argvError("option requires an argument -- " + name)
			}
			out = append(out, "--"+f.Name+"="+args[i+1])
			i++
			continue
		}
		// getopt: one-letter switches bundle (-aw); a one-letter option
		// with a value takes the rest of the word (-n2, -uall) or, at its
		// end, the next word.
		var bundle []string
		for j := 0; j < len(name); j++ {
			f := lsfFlag(fs, name[j:j+1])
			if f == nil {
				return nil, argvError("illegal option -- " + name)
			}
			if !takesValue(f) {
				bundle = append(bundle, "--"+f.Name)
				continue
			}
			switch {
			case j+1 < len(name):
				bundle = append(bundle, "--"+f.Name+"="+name[j+1:])
			case i+1 < len(args):
				bundle = append(bundle, "--"+f.Name+"="+args[i+1])
				i++
			default:
				return nil, argvError("option requires an argument -- " + name[j:j+1])
			}
			break
		}
		out = append(out, bundle...)
	}
	return out, nil
}

// lsfFlag is the option LSF's word -name stands for: the flag of that
// name, or -h (pflag's shorthand of help).
func lsfFlag(fs *pflag.FlagSet, name string) *pflag.Flag {
	if f := fs.Lookup(name); f != nil {
		return f
	}
	if len(name) == 1 {
		return fs.ShorthandLookup(name)
	}
	return nil
}

// takesValue says whether an option reads a value word.
func takesValue(f *pflag.Flag) bool {
	return f.Value.Type() != "bool" && f.NoOptDefVal == ""
}

// argvError is a mistake on the command line, already in getopt's words.
type argvError string

func (e argvError) Error() string { return string(e) }

// newCommand builds a cobra command whose flags are LSF's options.
func newCommand(use, short string, run func(args []string) int) (*cobra.Command, *int) {
	code := new(int)
	c := &cobra.Command{
		Use:                   use,
		Short:                 short,
		SilenceErrors:         true,
		SilenceUsage:          true,
		DisableFlagsInUseLine: true,
		RunE: func(_ *cobra.Command, args []string) error {
			*code = run(args)
			return nil
		},
	}
	c.SetOut(sys.stderr)
	c.SetErr(sys.stderr)
	c.SetHelpFunc(printHelp)
	c.Flags().BoolP("help", "h", false, "print this help and exit")
	c.Flags().Bool("V", false, "print the version and exit")
	return c, code
}

// execute parses LSF argv and runs c; it handles -h, -V and bad options
// the way LSF's commands do (usage on stderr, non-zero exit). done says the
// command has nothing more to do (help, version, a bad option), rc is then
// its exit code.
func execute(c *cobra.Command, code *int, args []string, stopAtCommand bool) (rc int, done bool) {
	if building != nil { // Commands (doc.go) collects c; nothing is parsed or run
		building(c)
		return 0, true
	}
	for _, a := range args {
		if a == "-V" {
			fmt.Fprint(sys.stderr, Version)
			return 0, true
		}
		if a == "--" || (stopAtCommand && !strings.HasPrefix(a, "-")) {
			break
		}
	}
	c.Flags().SetInterspersed(!stopAtCommand)
	argv, err := lsfArgs(c.Flags(), args, stopAtCommand)
	if err != nil {
		fmt.Fprintf(sys.stderr, "%s: %v\n", c.Name(), err)
		fmt.Fprintf(sys.stderr, "Usage: %s\n", c.UseLine())
		return 255, true
	}
	c.SetArgs(argv)
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err}
	})
	if err := c.Execute(); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(sys.stderr, "%s: %s\n", c.Name(), lsfFlagError(ue.err))
			fmt.Fprintf(sys.stderr, "Usage: %s\n", c.UseLine())
			return 255, true
		}
		fmt.Fprintf(sys.stderr, "%s: %v\n", c.Name(), err)
		return 255, true
	}
	if help, _ := c.Flags().GetBool("help"); help {
		return 0, true
	}
	return *code, false
}

type usageError struct{ err error }

var badFlagValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?--([\w-]+)" flag`)
})

func (u usageError) Error() string { return u.err.Error() }

// lsfFlagError words pflag's errors as LSF's getopt does.
func lsfFlagError(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		return "illegal option -- " + rest
	}
	if rest, ok := strings.CutPrefix(msg, "flag needs an argument: --"); ok {
		return "option requires an argument -- " + rest
	}
	// invalid argument "x" for "--t" flag: strconv.ParseInt: ...
	if m := badFlagValue().FindStringSubmatch(msg); m != nil {
		return m[1] + ": Bad argument for option -" + m[2]
	}
	return strings.ReplaceAll(msg, "--", "-")
}

// connect dials the controller (printing where it looked when none
// answers) and gives the context for the calls; done releases both.
func connect() (c *client.Client, cx context.Context, done func(), ok bool) {
	c, err := client.Dial()
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return nil, nil, nil, false
	}
	cx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	return c, cx, func() { cancel(); c.Close() }, true
}

// connectTimeout is the context of one more call on an open connection.
func connectTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

// rpcError prints a failed call: the controller's own text for a refused
// request, or where the command looked when nothing answered.
func rpcError(c *client.Client, err error) string {
	st, ok := rpcstatus.FromError(err)
	if !ok {
		return err.Error()
	}
	switch st.Code() {
	case rpcstatus.Unavailable:
		return c.NotRunningError().Error()
	case rpcstatus.InvalidArgument, rpcstatus.PermissionDenied:
		return st.Message()
	}
	return st.Message()
}

// parseJobIDs reads job id arguments: 123, "123[4]", "123[1-3,7]" and
// "123[1-9:2]". Index -1 stands for every element of a job. Mistakes get
// LSF's messages (OpenLava's getJobIdIndexList): "12x: Illegal job ID.",
// "0[1]: Job ID out of valid range.", "1[2: Bad job array index list.",
// "0: Job Array index out of valid range.", "5-3: Job Array index invalid
// range.".
func parseJobIDs(args []string) ([]*api.JobRef, error) {
	var refs []*api.JobRef
	for _, a := range args {
		base, list, hasIdx := strings.Cut(a, "[")
		id, err := strconv.ParseInt(base, 10, 64)
		if err != nil || id < 0 || strings.HasPrefix(base, "+") {
			return nil, fmt.Errorf("%s: Illegal job ID.", a)
		}
		if !hasIdx {
			refs = append(refs, &api.JobRef{JobId: id, ArrayIndex: -1})
			continue
		}
		if id == 0 {
			return nil, fmt.Errorf("%s: Job ID out of valid range.", a)
		}
		idx, err := parseIndexList(a, list)
		if err != nil {
			return nil, err
		}
		if len(refs)+len(idx) > maxExpandedRefs {
			return nil, fmt.Errorf("%s: Job array index too large.", a)
		}
		for _, i := range idx {
			refs = append(refs, &api.JobRef{JobId: id, ArrayIndex: i})
		}
	}
	return refs, nil
}

// maxExpandedRefs bounds how many elements a command line may name: the
// commands send each element (XCE's choice; LSF sends the index list).
const maxExpandedRefs = 1 << 20

// parseIndexList reads an index list "1-3,7,10-20:2]" (the text after the
// "[" of arg).
func parseIndexList(arg, list string) ([]int32, error) {
	bad := fmt.Errorf("%s: Bad job array index list.", arg)
	list, ok := strings.CutSuffix(list, "]")
	if !ok || list == "" || strings.ContainsAny(list, "[]") {
		return nil, bad
	}
	num := func(s string) (int64, bool) {
		if s == "" || strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	const maxIndex = 2147483646
	var out []int32
	seen := map[int64]bool{}
	for _, part := range strings.Split(list, ",") {
		rng, stepS, hasStep := strings.Cut(part, ":")
		loS, hiS, isRange := strings.Cut(rng, "-")
		lo, ok1 := num(loS)
		hi, ok2 := lo, true
		if isRange {
			hi, ok2 = num(hiS)
		}
		step, ok3 := int64(1), true
		if hasStep {
			step, ok3 = num(stepS)
		}
		if !ok1 || !ok2 || !ok3 {
			return nil, bad
		}
		switch {
		case lo > hi:
			return nil, fmt.Errorf("%d-%d: Job Array index invalid range.", lo, hi)
		case lo <= 0 || lo > maxIndex:
			return nil, fmt.Errorf("%d: Job Array index out of valid range.", lo)
		case hi > maxIndex:
			return nil, fmt.Errorf("%d: Job Array index out of valid range.", hi)
		case step <= 0 || step > maxIndex:
			return nil, fmt.Errorf("%d: Job Array index step out of valid range.", step)
		}
		for i := lo; i <= hi; i += step {
			if len(out) >= maxExpandedRefs {
				return nil, fmt.Errorf("%s: Job array index too large.", arg)
			}
			if !seen[i] {
				seen[i] = true
				out = append(out, int32(i))
			}
		}
	}
	return out, nil
}

func refString(r *api.JobRef) string {
	if r.ArrayIndex > 0 {
		return fmt.Sprintf("%d[%d]", r.JobId, r.ArrayIndex)
	}
	return strconv.FormatInt(r.JobId, 10)
}

// acceptAlloc takes LSF's -alloc (bqueues, bhosts, busers, bapp), which
// asks for the counters in slots rather than jobs: XCE's counters are
// slots already, so it changes nothing, and scripts that pass it work.
func acceptAlloc(fs *pflag.FlagSet) {
	fs.Bool("alloc", false, "counters in slots (XCE's always are)")
}

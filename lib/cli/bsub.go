package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-shellwords"
	"github.com/spf13/pflag"

	"xce/lib/api"
	"xce/lib/interactive"
	"xce/lib/lsfenv"
	"xce/lib/requeue"
	"xce/lib/resreq"
)

// bsubOpts holds bsub's options as given.
type bsubOpts struct {
	queue, name, tasks, output, outputO, errorF, errorO, input, cwd string
	runLimit, memLimit, project, app, preExec, postExec, envSpec    string
	hosts, depend, mailUser, desc, group, jobGroup, loginShell      string
	begin, term, estimate, outdir, gpu, cpuLimit                    string
	fileLimit, dataLimit, stackLimit, coreLimit, swapLimit, requeue string
	warnAction, warnTime                                            string
	procLimit, threadLimit                                          int
	nodes                                                           int // -nnodes
	resReq                                                          []string
	userPrio                                                        int
	rsv                                                             string // -U
	hold, block, exclusive, notifyBegin, notifyEnd, rerun, noRerun  bool
	notifyExit, interactive, interPty, interShell, terminateOrphan  bool
	claim                                                           string // -claim
}

func bsubFlags(fs *pflag.FlagSet, o *bsubOpts) {
	fs.StringVar(&o.queue, "q", "", "submit to this queue")
	fs.StringVar(&o.name, "J", "", `job name, or job array "name[index_list]%limit"`)
	fs.StringVar(&o.desc, "Jd", "", "job description")
	fs.StringVar(&o.rsv, "U", "", "run in this advance reservation (brsvadd)")
	fs.StringVar(&o.tasks, "n", "", "number of tasks: min[,max]")
	fs.IntVar(&o.nodes, "nnodes", 0, "number of whole hosts (as -n N -x -R \"span[ptile=1]\")")
	fs.StringArrayVar(&o.resReq, "R", nil, "resource requirement (may be repeated)")
	fs.StringVar(&o.output, "o", "", "append the job's output to this file (%J, %I expand)")
	fs.StringVar(&o.outputO, "oo", "", "write the job's output to this file, overwriting it")
	fs.StringVar(&o.errorF, "e", "", "append the job's error output to this file")
	fs.StringVar(&o.errorO, "eo", "", "write the job's error output to this file, overwriting it")
	fs.StringVar(&o.input, "i", "", "the job's standard input file")
	fs.StringVar(&o.cwd, "cwd", "", "the job's working directory")
	fs.StringVar(&o.runLimit, "W", "", "run limit: [hour:]minute")
	fs.StringVar(&o.cpuLimit, "c", "", "CPU time limit of the whole job: [hour:]minute")
	fs.StringVar(&o.fileLimit, "F", "", "per-process file size limit (units as -M)")
	fs.StringVar(&o.dataLimit, "D", "", "per-process data segment size limit (units as -M)")
	fs.StringVar(&o.stackLimit, "S", "", "per-process stack size limit (units as -M)")
	fs.StringVar(&o.coreLimit, "C", "", "per-process core file size limit (units as -M)")
	setArgName(fs, "C", "core_limit") // not bkill's -C reason
	fs.StringVar(&o.swapLimit, "v", "", "the job's total virtual memory limit (units as -M)")
	fs.IntVar(&o.procLimit, "p", 0, "the most processes the job may run at once")
	fs.IntVar(&o.threadLimit, "T", 0, "the most threads the job may run at once")
	fs.StringVar(&o.warnAction, "wa", "", "signal sent to the job -wt before its run limit or deadline")
	fs.StringVar(&o.warnTime, "wt", "", "how long before the run limit or deadline -wa is sent: [hour:]minute")
	fs.StringVar(&o.requeue, "Q", "", `exit codes that requeue the job: "code ... [EXCLUDE(code ...)]", "all [~code ...]"`)
	fs.StringVar(&o.memLimit, "M", "", "memory limit, in LSF_UNIT_FOR_LIMITS (KB by default) unless a unit is given; ! = hard")
	fs.StringVar(&o.project, "P", "", "project name")
	fs.StringVar(&o.app, "app", "", "application profile")
	fs.BoolVar(&o.hold, "H", false, "submit on hold (PSUSP) until bresume")
	fs.BoolVar(&o.block, "K", false, "wait for the job to finish and exit with its exit code")
	fs.BoolVar(&o.interactive, "I", false, "interactive job: its input and output are this terminal's")
	fs.BoolVar(&o.interPty, "Ip", false, "interactive job on a pseudo-terminal")
	fs.BoolVar(&o.interShell, "Is", false, "interactive job on a pseudo-terminal in shell mode (this terminal in raw mode)")
	fs.StringVar(&o.preExec, "E", "", "pre-execution command")
	fs.StringVar(&o.postExec, "Ep", "", "post-execution command")
	fs.StringVar(&o.envSpec, "env", "", `environment to pass: "all", "none", "all, ~VAR, VAR=value" or "VAR[=value], ..."`)
	fs.BoolVar(&o.exclusive, "x", false, "run exclusively on the host")
	fs.StringVar(&o.hosts, "m", "", "candidate hosts")
	fs.StringVar(&o.depend, "w", "", "dependency expression")
	fs.BoolVar(&o.terminateOrphan, "ti", false, "end the job at once when its -w dependency can never be met")
	fs.IntVar(&o.userPrio, "sp", 0, "user-assigned job priority")
	fs.StringVar(&o.mailUser, "u", "", "mail address for job notices")
	fs.BoolVar(&o.notifyBegin, "B", false, "send mail when the job starts")
	fs.BoolVar(&o.notifyEnd, "N", false, "send the job report by mail when the job ends")
	fs.BoolVar(&o.notifyExit, "Ne", false, "send the job report by mail only if the job exits")
	fs.BoolVar(&o.rerun, "r", false, "make the job rerunnable")
	fs.BoolVar(&o.noRerun, "rn", false, "make the job not rerunnable")
	fs.StringVar(&o.begin, "b", "", "begin time: [[year:][month:]day:]hour:minute")
	fs.StringVar(&o.term, "t", "", "termination time: [[year:][month:]day:]hour:minute")
	fs.StringVar(&o.estimate, "We", "", "estimated run time: [hour:]minute")
	fs.StringVar(&o.outdir, "outdir", "", "directory for relative -o/-e files (created; %J, %I expand)")
	fs.StringVar(&o.gpu, "gpu", "", `GPU requirement: "num=N[:mode=...]" or "-"`)
	fs.StringVar(&o.group, "G", "", "user group to charge")
	fs.StringVar(&o.jobGroup, "g", "", "job group")
	fs.StringVar(&o.loginShell, "L", "", "login shell initialising the job's environment")
	fs.StringVar(&o.claim, "claim", "", "use the holdings of this standalone claim (bclaim)")
}

func bsub(args []string) int {
	var o bsubOpts
	var words []string
	cmd, code := newCommand("bsub [options] command [arguments]", "Submit a batch job", func(a []string) int {
		words = a
		return 0
	})
	bsubFlags(cmd.Flags(), &o)
	var pack string
	cmd.Flags().StringVar(&pack, "pack", "", "submit a job pack: the file's lines, each a job's bsub options and command")
	if rc, done := execute(cmd, code, args, true); done {
		return rc
	}
	if cmd.Flags().Changed("pack") {
		return bsubPack(cmd.Flags(), pack, words)
	}
	spec := &api.JobSpec{}
	script, isScript, err := jobScript(words)
	if err != nil {
		fmt.Fprintf(sys.stderr, "%v. Job not submitted.\n", err)
		return 255
	}
	if !isScript {
		spec.Command = jobCommand(words)
	} else {
		dir, err := directives(script)
		if err != nil {
			fmt.Fprintf(sys.stderr, "%v. Job not submitted.\n", err)
			return 255
		}
		if len(dir) > 0 {
			// The command line wins where both set an option: a directive
			// only fills an option the command line left unset.
			var fromScript bsubOpts
			dfs := pflag.NewFlagSet("bsub", pflag.ContinueOnError)
			dfs.SetOutput(io.Discard)
			bsubFlags(dfs, &fromScript)
			argv, err := lsfArgs(dfs, dir, false)
			if err == nil {
				err = dfs.Parse(argv)
			}
			if err != nil {
				fmt.Fprintf(sys.stderr, "#BSUB: %s. Job not submitted.\n", lsfFlagError(err))
				return 255
			}
			cfs := cmd.Flags()
			var setErr error
			dfs.Visit(func(f *pflag.Flag) {
				if cfs.Changed(f.Name) {
					return
				}
				vals := []string{f.Value.String()}
				if sv, ok := f.Value.(pflag.SliceValue); ok {
					vals = sv.GetSlice()
				}
				for _, v := range vals {
					if err := cfs.Set(f.Name, v); err != nil && setErr == nil {
						setErr = err
					}
				}
			})
			if setErr != nil {
				fmt.Fprintf(sys.stderr, "#BSUB: %v. Job not submitted.\n", setErr)
				return 255
			}
		}
		if !hasCommand(script) {
			fmt.Fprintln(sys.stderr, "No command is specified in the script file. Job not submitted.")
			return 255
		}
		spec.Command = script
		spec.CommandIsScript = true
	}
	if err := fillSpec(spec, &o); err != nil {
		fmt.Fprintf(sys.stderr, "%v. Job not submitted.\n", err)
		return 255
	}
	if sys.getenv("BSUB_CHK_RESREQ") != "" {
		return checkResReq(spec.ResReq)
	}
	var ln *interactive.Listener
	if spec.Interactive != api.Interactive_BATCH {
		if ln, err = interactive.Listen(); err != nil {
			fmt.Fprintf(sys.stderr, "%v. Job not submitted.\n", err)
			return 255
		}
		defer ln.Close()
		spec.InteractiveAddr = ln.Addr()
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	reply, err := c.Submit(cx, &api.SubmitRequest{Spec: spec})
	if err != nil {
		fmt.Fprintf(sys.stderr, "%s. Job not submitted.\n", rpcError(c, err))
		return 255
	}
	printSubmitted(reply, spec)
	if o.block {
		return waitJob(c, reply.JobId)
	}
	if ln != nil {
		return attachJob(c, ln, reply.JobId, spec.Interactive, isScript && len(words) == 0)
	}
	return 0
}

// printSubmitted acknowledges a submitted job as LSF's bsub does.
func printSubmitted(reply *api.SubmitReply, spec *api.JobSpec) {
	out := sys.stdout
	if sys.getenv("BSUB_STDERR") != "" {
		out = sys.stderr
	}
	switch {
	case sys.getenv("BSUB_QUIET") != "":
		// LSF's BSUB_QUIET: no acknowledgement line.
	case reply.DefaultQueue:
		fmt.Fprintf(out, "Job <%d> is submitted to default queue <%s>.\n", reply.JobId, reply.Queue)
	default:
		fmt.Fprintf(out, "Job <%d> is submitted to queue <%s>.\n", reply.JobId, reply.Queue)
	}
	// LSF's own format for these lines: %a %b %d %H:%M:%S %Y.
	if spec.BeginTime > 0 {
		fmt.Fprintf(out, "Job will be scheduled after %s\n", time.Unix(spec.BeginTime, 0).Format("Mon Jan 02 15:04:05 2006"))
	}
	if spec.TermTime > 0 {
		fmt.Fprintf(out, "Job will be terminated by %s\n", time.Unix(spec.TermTime, 0).Format("Mon Jan 02 15:04:05 2006"))
	}
}

// checkResReq is bsub with BSUB_CHK_RESREQ set: the resource requirement
// strings are checked, nothing is submitted.
func checkResReq(reqs []string) int {
	for _, r := range reqs {
		if _, err := resreq.Parse(r); err != nil {
			fmt.Fprintf(sys.stderr, "%s: %v. Bad resource requirement syntax.\n", r, err)
			return 255
		}
	}
	return 0
}

// jobScript finds the job's script: stdin when no command is given, or the
// one file named when LSB_BSUB_PARSE_SCRIPT=Y (in the environment or
// lsf.conf) and it is a text file, as LSF's `bsub job_script`. Otherwise
// the words are a command.
func jobScript(words []string) (script string, isScript bool, err error) {
	if len(words) == 0 {
		script, err = readScript(sys.stdin)
		return script, true, err
	}
	if len(words) != 1 {
		return "", false, nil
	}
	parse := sys.getenv("LSB_BSUB_PARSE_SCRIPT")
	if parse == "" {
		if conf, err := lsfenv.Load(sys.getenv); err == nil {
			parse = conf.Get("LSB_BSUB_PARSE_SCRIPT")
		}
	}
	if !strings.EqualFold(parse, "y") {
		return "", false, nil
	}
	b, err := os.ReadFile(words[0])
	if err != nil || !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", false, nil // not a readable text file: a command
	}
	return string(b), true, nil
}

// jobCommand joins bsub's command words into the command line the job's
// shell runs, as OpenLava's bsub does (CopyCommand): the first word as it
// was given, so that a whole command line passed as one quoted word
// (bsub "echo a; echo b") is the shell's to read, and every later word
// quoted so that the shell sees that one word (bsub sh -c "exit 3" runs
// sh -c "exit 3"). bjobs -l shows this line, as LSF's does.
func jobCommand(words []string) string {
	var b strings.Builder
	b.WriteString(words[0])
	for _, w := range words[1:] {
		b.WriteByte(' ')
		b.WriteString(shellWord(w))
	}
	return b.String()
}

// shellWord writes one argument for the job's shell so that it stays one
// word with the text the user gave:
//   - a word holding whitespace is quoted whole: in double quotes, as
//     OpenLava does, or in single quotes when it holds a character double
//     quotes leave to the shell (" $ ` \), each ' in it closing the
//     quotes, escaped and reopening them;
//   - an empty word is "";
//   - in any other word each character the shell would act on (; & | < >
//     ( ) * ? [ ] { } ~ # ! ' " \ `) is escaped with a backslash, except $:
//     a variable in a word is expanded when the job runs, which LSF's job
//     arrays rely on (bsub -J "a[1-10]" ./myJob input.\$LSB_JOBINDEX).
func shellWord(w string) string {
	if w == "" {
		return `""`
	}
	if strings.IndexFunc(w, unicode.IsSpace) >= 0 {
		if !strings.ContainsAny(w, "\"$`\\") {
			return `"` + w + `"`
		}
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		c := w[i]
		if end := strings.IndexByte(w[i:], '}'); c == '$' && end > 1 && w[i+1] == '{' {
			// ${NAME} as a whole, so that its braces stay the shell's.
			b.WriteString(w[i : i+end+1])
			i += end
			continue
		}
		switch {
		case c >= 0x80 || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		case strings.IndexByte("-_./:=,+@%^", c) >= 0:
		default:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// readScript reads a job from stdin, prompting `bsub> ` on a terminal.
func readScript(in io.Reader) (string, error) {
	f, isFile := in.(*os.File)
	tty := isFile && interactive.IsTerminal(f)
	if !tty {
		b, err := io.ReadAll(in)
		if err != nil {
			return "", fmt.Errorf("read the job script: %w", err)
		}
		return string(b), nil
	}
	var sb strings.Builder
	sc := bufio.NewScanner(in)
	fmt.Fprint(sys.stdout, "bsub> ")
	for sc.Scan() {
		sb.WriteString(sc.Text())
		sb.WriteByte('\n')
		fmt.Fprint(sys.stdout, "bsub> ")
	}
	fmt.Fprintln(sys.stdout)
	return sb.String(), sc.Err()
}

var directiveRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#\s*BSUB\s+(.*)$`) })

// directives collects the option words of a script's #BSUB lines, from
// every line of the script (LSF honours directives after commands too). A
// `#` in the option text starts a comment; a line ending in `\` continues.
func directives(script string) ([]string, error) {
	var words []string
	lines := strings.Split(script, "\n")
	for i := 0; i < len(lines); i++ {
		m := directiveRE().FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		text := m[1]
		for strings.HasSuffix(strings.TrimRight(text, " \t"), `\`) && i+1 < len(lines) {
			text = strings.TrimSuffix(strings.TrimRight(text, " \t"), `\`) + " " + lines[i+1]
			i++
		}
		text = stripComment(text)
		p := shellwords.NewParser()
		w, err := p.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("#BSUB %s: %v", text, err)
		}
		words = append(words, w...)
	}
	return words, nil
}

// stripComment cuts a directive at a `#` outside quotes.
func stripComment(s string) string {
	var q byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#':
			return s[:i]
		}
	}
	return s
}

// hasCommand reports whether a script has anything besides comments.
func hasCommand(script string) bool {
	for _, l := range strings.Split(script, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

var arrayRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^\[\]]*)(\[[^\]]*\])(?:%(\d+))?$`) })

// fillSpec turns options into the submission.
func fillSpec(s *api.JobSpec, o *bsubOpts) error {
	s.Queue = o.queue
	s.JobName = o.name
	if strings.Contains(o.name, "[") {
		m := arrayRE().FindStringSubmatch(o.name)
		if m == nil {
			return errors.New("Bad job name")
		}
		s.JobName, s.ArraySpec = m[1], m[2]
		if m[3] != "" {
			lim, err := strconv.Atoi(m[3])
			if err != nil || lim <= 0 {
				return errors.New("Job array index error")
			}
			s.ArrayLimit = int32(lim)
		}
	}
	s.Description = o.desc
	s.Reservation = o.rsv
	s.Claim = o.claim
	if o.tasks != "" {
		lo, hi, two := strings.Cut(o.tasks, ",")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if two {
			b, err2 = strconv.Atoi(hi)
		}
		// Beyond 32 bits is out of range here, not cut to what fits: the
		// controller sets the real ceiling and names it.
		if err1 != nil || err2 != nil || a <= 0 || b < a || b > math.MaxInt32 {
			return fmt.Errorf("%s: Bad argument for option -n", o.tasks)
		}
		s.MinTasks, s.MaxTasks = int32(a), int32(b)
	}
	s.ResReq = o.resReq
	if err := wholeHosts(s, o); err != nil {
		return err
	}
	s.OutputFile, s.OutputOverwrite = o.output, false
	if o.outputO != "" {
		s.OutputFile, s.OutputOverwrite = o.outputO, true
	}
	s.ErrorFile = o.errorF
	if o.errorO != "" {
		s.ErrorFile, s.ErrorOverwrite = o.errorO, true
	}
	s.InputFile = o.input
	wd, err := os.Getwd()
	if err != nil {
		wd = sys.getenv("PWD")
	}
	s.SubmitCwd = wd
	s.Cwd = o.cwd
	if s.Cwd == "" {
		s.Cwd = sys.getenv("LSB_JOB_CWD")
	}
	if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
		s.Cwd = filepath.Join(wd, s.Cwd)
	}
	if o.runLimit != "" {
		sec, err := parseMinutes(o.runLimit)
		if err != nil {
			return fmt.Errorf("%s: Bad RUNLIMIT specification", o.runLimit)
		}
		s.RunLimitSec = sec
	}
	if o.cpuLimit != "" {
		sec, err := parseMinutes(o.cpuLimit)
		if err != nil {
			return fmt.Errorf("%s: Bad CPULIMIT specification", o.cpuLimit)
		}
		s.CpuLimitSec = sec
	}
	// Size limits: a number with a unit, or without one in
	// LSF_UNIT_FOR_LIMITS (KB when unset); only -M takes "!" (hard).
	var lsf *lsfenv.Conf
	for _, l := range []struct {
		given, name string
		to          *int64
		hard        *bool
	}{{o.memLimit, "MEMLIMIT", &s.MemLimitKb, &s.MemLimitHard},
		{o.fileLimit, "FILELIMIT", &s.FileLimitKb, nil}, {o.dataLimit, "DATALIMIT", &s.DataLimitKb, nil},
		{o.stackLimit, "STACKLIMIT", &s.StackLimitKb, nil}, {o.coreLimit, "CORELIMIT", &s.CoreLimitKb, nil},
		{o.swapLimit, "SWAPLIMIT", &s.SwapLimitKb, nil}} {
		if l.given == "" {
			continue
		}
		if lsf == nil {
			if lsf, err = lsfenv.Load(sys.getenv); err != nil {
				return err
			}
		}
		kb, hard, err := parseMemLimit(lsf.WithUnit(l.given))
		if err != nil || hard && l.hard == nil {
			return fmt.Errorf("%s: Bad %s specification", l.given, l.name)
		}
		*l.to = kb
		if l.hard != nil {
			*l.hard = hard
		}
	}
	if o.procLimit < 0 || o.threadLimit < 0 {
		return fmt.Errorf("Bad limit specification")
	}
	s.ProcessLimit, s.ThreadLimit = int32(o.procLimit), int32(o.threadLimit)
	if o.warnAction != "" || o.warnTime != "" {
		if o.warnAction == "" || o.warnTime == "" {
			return errors.New("-wa and -wt must be given together")
		}
		if _, err := parseSignal(o.warnAction); err != nil {
			return fmt.Errorf("%s: Bad job warning action", o.warnAction)
		}
		sec, err := parseMinutes(o.warnTime)
		if err != nil {
			return fmt.Errorf("%s: Bad job warning time", o.warnTime)
		}
		s.WarningAction, s.WarningTimeSec = o.warnAction, sec
	}
	if o.requeue != "" {
		if _, err := requeue.Parse(o.requeue); err != nil {
			return err
		}
		s.RequeueExitValues = o.requeue
	}
	s.Project = o.project
	if s.Project == "" {
		s.Project = sys.getenv("LSB_DEFAULTPROJECT")
	}
	if s.Queue == "" {
		s.Queue = sys.getenv("LSB_DEFAULTQUEUE")
	}
	s.App = o.app
	s.Hold, s.Block, s.Exclusive = o.hold, o.block, o.exclusive
	s.Interactive = interactiveMode(o)
	if s.Interactive != api.Interactive_BATCH {
		if o.block {
			return errors.New("The -I, -Ip, -Is and -K options are mutually exclusive")
		}
		if s.ArraySpec != "" {
			return errors.New("An interactive job cannot be a job array")
		}
	}
	s.PreExec, s.PostExec = o.preExec, o.postExec
	if o.hosts != "" {
		s.Hosts = strings.Fields(o.hosts)
	}
	s.Dependency = o.depend
	if o.terminateOrphan && o.depend == "" {
		return errors.New("-ti can be used only with -w")
	}
	s.TerminateOrphan = o.terminateOrphan
	// Beyond int32 the priority would wrap (99999999999 into 1215752191).
	if o.userPrio < 0 || o.userPrio > math.MaxInt32 {
		return fmt.Errorf("%d: Bad user priority", o.userPrio)
	}
	s.UserPriority = int32(o.userPrio)
	s.MailUser, s.NotifyBegin, s.NotifyEnd = o.mailUser, o.notifyBegin, o.notifyEnd || o.notifyExit
	s.NotifyExitOnly = o.notifyExit && !o.notifyEnd
	s.Rerunnable = o.rerun && !o.noRerun
	now := time.Now()
	if o.begin != "" {
		t, err := parseLSFTime(o.begin, now)
		if err != nil {
			return fmt.Errorf("%s: Bad time specification", o.begin)
		}
		s.BeginTime = t.Unix()
	}
	if o.term != "" {
		t, err := parseLSFTime(o.term, now)
		if err != nil || !t.After(now) {
			return fmt.Errorf("%s: Bad time specification", o.term)
		}
		s.TermTime = t.Unix()
	}
	if o.estimate != "" {
		sec, err := parseMinutes(o.estimate)
		if err != nil {
			return fmt.Errorf("%s: Bad RUNTIME specification", o.estimate)
		}
		s.EstimatedRunSec = sec
	}
	s.Outdir = o.outdir
	if s.Outdir != "" && !filepath.IsAbs(s.Outdir) && !strings.Contains(s.Outdir, "%") {
		s.Outdir = filepath.Join(wd, s.Outdir)
	}
	s.Gpu = o.gpu
	s.UserGroup, s.JobGroup, s.LoginShell = o.group, o.jobGroup, o.loginShell
	if s.UserGroup == "" {
		s.UserGroup = sys.getenv("LSB_DEFAULT_USERGROUP")
	}
	if s.JobGroup == "" {
		s.JobGroup = defaultJobGroup(sys.getenv("LSB_DEFAULT_JOBGROUP"), s.Project)
	}
	if s.LoginShell != "" && !filepath.IsAbs(s.LoginShell) {
		return fmt.Errorf("%s: The login shell must be an absolute path", s.LoginShell)
	}
	s.EnvSpec = o.envSpec
	env, err := jobEnv(o.envSpec, os.Environ())
	if err != nil {
		return err
	}
	s.Env = env
	s.SubmitHost, _ = os.Hostname()
	if i := strings.IndexByte(s.SubmitHost, '.'); i > 0 {
		s.SubmitHost = s.SubmitHost[:i]
	}
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	s.Umask = uint32(mask)
	return nil
}

// defaultJobGroup expands LSB_DEFAULT_JOBGROUP's %p (the job's project,
// else "default") and %u (the submitting user).
func defaultJobGroup(group, project string) string {
	if group == "" {
		return ""
	}
	if project == "" {
		project = "default"
	}
	name := sys.getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return strings.NewReplacer("%p", project, "%u", name).Replace(group)
}

// parseMinutes reads LSF's [hour:]minute run limit format.
func parseMinutes(v string) (int64, error) {
	v, _, _ = strings.Cut(v, "/") // a host or model normalisation is ignored
	h, m, hasHour := strings.Cut(v, ":")
	if !hasHour {
		h, m = "0", v
	}
	hours, err1 := strconv.ParseInt(h, 10, 64)
	mins, err2 := strconv.ParseInt(m, 10, 64)
	if err1 != nil || err2 != nil || hours < 0 || mins < 0 || (hasHour && mins > 59) || hours*60+mins == 0 {
		return 0, errors.New("bad time")
	}
	return (hours*60 + mins) * 60, nil
}

// parseMemLimit reads -M: a number in KB (LSF_UNIT_FOR_LIMITS unset) or
// with a unit suffix, and `!` for a hard limit.
func parseMemLimit(v string) (kb int64, hard bool, err error) {
	v, hard = strings.CutSuffix(v, "!")
	up := strings.ToUpper(v)
	mult := float64(1)
	for _, u := range []struct {
		suffix string
		kb     float64
	}{{"KB", 1}, {"MB", 1 << 10}, {"GB", 1 << 20}, {"TB", 1 << 30}, {"PB", 1 << 40}, {"EB", 1 << 50}, {"ZB", 1 << 60},
		{"K", 1}, {"M", 1 << 10}, {"G", 1 << 20}, {"T", 1 << 30}, {"P", 1 << 40}, {"E", 1 << 50}, {"Z", 1 << 60}} {
		if strings.HasSuffix(up, u.suffix) {
			up, mult = strings.TrimSuffix(up, u.suffix), u.kb
			break
		}
	}
	n, err := strconv.ParseFloat(up, 64)
	if err != nil || n <= 0 {
		return 0, false, errors.New("bad memory limit")
	}
	return int64(n * mult), hard, nil
}

// jobEnv applies -env to the submission environment.
func jobEnv(spec string, environ []string) ([]string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || strings.EqualFold(spec, "all") {
		return environ, nil
	}
	if strings.EqualFold(spec, "none") {
		return nil, nil
	}
	items, err := splitEnvSpec(spec)
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	var order []string
	if strings.EqualFold(items[0], "all") {
		for _, kv := range environ {
			k, v, _ := strings.Cut(kv, "=")
			vals[k] = v
			order = append(order, k)
		}
		items = items[1:]
	}
	lookup := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		lookup[k] = v
	}
	for _, it := range items {
		switch {
		case strings.HasPrefix(it, "~"):
			delete(vals, it[1:])
		case strings.Contains(it, "="):
			k, v, _ := strings.Cut(it, "=")
			if _, ok := vals[k]; !ok {
				order = append(order, k)
			}
			vals[k] = strings.Trim(v, "'")
		default:
			if v, ok := lookup[it]; ok {
				if _, seen := vals[it]; !seen {
					order = append(order, it)
				}
				vals[it] = v
			}
		}
	}
	var out []string
	for _, k := range order {
		if v, ok := vals[k]; ok {
			out = append(out, k+"="+v)
			delete(vals, k)
		}
	}
	return out, nil
}

// splitEnvSpec splits -env's comma list; a single-quoted value may hold
// commas.
func splitEnvSpec(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			quoted = !quoted
			cur.WriteByte(c)
		case c == ',' && !quoted:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if quoted {
		return nil, fmt.Errorf("%s: Bad -env specification", s)
	}
	out = append(out, strings.TrimSpace(cur.String()))
	return out, nil
}

// parseLSFTime reads bsub -b/-t's [[year:][month:]day:]hour:minute. Without
// a year it is the next such moment from now (LSF's rule); with one, that
// exact time.
func parseLSFTime(v string, now time.Time) (time.Time, error) {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 5 {
		return time.Time{}, errors.New("bad time")
	}
	n := make([]int, len(parts))
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return time.Time{}, errors.New("bad time")
		}
		n[i] = x
	}
	// Right-aligned: minute, hour, day, month, year.
	get := func(fromEnd, def int) int {
		if i := len(n) - 1 - fromEnd; i >= 0 {
			return n[i]
		}
		return def
	}
	minute, hour := get(0, 0), get(1, 0)
	day, month, year := get(2, now.Day()), get(3, int(now.Month())), get(4, now.Year())
	if minute > 59 || hour > 23 || day < 1 || day > 31 || month < 1 || month > 12 || year < 1970 {
		return time.Time{}, errors.New("bad time")
	}
	mk := func(y, m, d int) (time.Time, bool) {
		t := time.Date(y, time.Month(m), d, hour, minute, 0, 0, now.Location())
		return t, t.Day() == d // false when the day does not exist in that month
	}
	t, ok := mk(year, month, day)
	switch len(n) {
	case 5:
		if !ok {
			return time.Time{}, errors.New("bad time")
		}
		return t, nil
	case 4: // month:day:hour:minute: this year, else next
		if !ok || !t.After(now) {
			t, ok = mk(year+1, month, day)
		}
	case 3: // day:hour:minute: this month, else the next month that has the day
		for i := 0; (!ok || !t.After(now)) && i < 12; i++ {
			month++
			if month > 12 {
				month, year = 1, year+1
			}
			t, ok = mk(year, month, day)
		}
	case 2: // hour:minute: today, else tomorrow
		if !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
	}
	if !ok {
		return time.Time{}, errors.New("bad time")
	}
	return t, nil
}

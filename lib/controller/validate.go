package controller

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"

	"xce/lib/api"
)

// What a client sends is checked here, on the controller's side of the
// socket, where a hostile client cannot skip it: the commands check their
// options too, but only for the user's convenience. A value out of range is
// an error that names the option and the range, never "no limit".

// Limits on what a submission (or a bmod) may hold. Each is far above what a
// real job needs and low enough that a job cannot make the controller, the
// store or the job's own start (execve's limits) fail.
const (
	maxNameLen    = 4094      // -J, -Jd: LSF's limit on a job name
	maxProjectLen = 511       // -P: LSF's limit on a project name
	maxShortLen   = 4095      // paths, names and other one-line values (PATH_MAX)
	maxCommandLen = 128 << 10 // a command line: execve's limit on one argument (MAX_ARG_STRLEN)
	maxScriptLen  = 8 << 20   // a script read from bsub's standard input
	maxExecLen    = 128 << 10 // -E, -Ep: run by the shell, one argument each
	maxEnvCount   = 10000     // environment variables
	maxEnvBytes   = 2 << 20   // the whole environment: execve's ARG_MAX
	maxEnvVarLen  = 128 << 10 // one NAME=VALUE (MAX_ARG_STRLEN)
	maxResReqs    = 64        // -R options
	maxResReqLen  = 64 << 10  // one -R string (lib/resreq bounds terms and depth)
	maxHosts      = 1024      // -m names
	maxMailLen    = 511       // -u
	// maxDepLen bounds a -w expression; its nesting is bounded by the
	// parser (maxDepDepth). A pending job's expression is evaluated every
	// scheduling cycle.
	maxDepLen = 16 << 10
	// maxTasks bounds -n: more tasks than any cluster has slots.
	maxTasks = 1 << 24
	// maxSeconds bounds the time limits (-W, -c, -We, -wt): 2^31-1 s, LSF's
	// 32-bit limit (68 years); beyond it a duration in nanoseconds could
	// overflow.
	maxSeconds = 1<<31 - 1
	// maxLimitKB bounds the size limits (-M, -F, -D, -S, -C, -v): 2^53 KB
	// is 2^63 bytes, the largest setrlimit value that is not "unlimited".
	maxLimitKB = 1<<53 - 1
	// maxUnixTime bounds -b and -t: the end of year 9999.
	maxUnixTime = 253402300799
)

// checkSpec checks a submission's user-sent fields against the limits
// above; spec is what the client sent (with the identity filled in).
func checkSpec(spec *api.JobSpec) error {
	cmdMax, cmdWhat := maxCommandLen, "command line"
	if spec.CommandIsScript {
		cmdMax, cmdWhat = maxScriptLen, "job script"
	}
	if err := checkLen(cmdWhat, spec.Command, cmdMax); err != nil {
		return err
	}
	if strings.IndexByte(spec.Command, 0) >= 0 {
		return userErr("The %s contains a NUL character", cmdWhat)
	}
	// One-line values: no control characters (a newline in -u would add
	// mail headers, one in -J a line to every report that prints it).
	lines := []struct {
		opt, what, v string
		max          int
	}{
		{"-J", "job name", spec.JobName, maxNameLen},
		{"-Jd", "job description", spec.Description, maxNameLen},
		{"-P", "project name", spec.Project, maxProjectLen},
		{"-q", "queue name", spec.Queue, maxShortLen},
		{"-app", "application profile name", spec.App, maxShortLen},
		{"-o", "output file", spec.OutputFile, maxShortLen},
		{"-e", "error file", spec.ErrorFile, maxShortLen},
		{"-i", "input file", spec.InputFile, maxShortLen},
		{"-cwd", "working directory", spec.Cwd, maxShortLen},
		{"-outdir", "output directory", spec.Outdir, maxShortLen},
		{"-L", "login shell", spec.LoginShell, maxShortLen},
		{"-G", "user group", spec.UserGroup, maxShortLen},
		{"-g", "job group", spec.JobGroup, maxShortLen},
		{"-gpu", "GPU requirement", spec.Gpu, maxShortLen},
		{"-u", "mail address", spec.MailUser, maxMailLen},
		{"-w", "dependency condition", spec.Dependency, maxDepLen},
		{"-Q", "requeue exit values", spec.RequeueExitValues, maxShortLen},
		{"-wa", "warning action", spec.WarningAction, maxShortLen},
		{"-env", "environment specification", spec.EnvSpec, maxEnvBytes},
		{"-J", "job array specification", spec.ArraySpec, maxShortLen},
		{"-I", "interactive address", spec.InteractiveAddr, maxShortLen},
		{"", "submission directory", spec.SubmitCwd, maxShortLen},
	}
	for _, l := range lines {
		if err := checkLine(l.opt, l.what, l.v, l.max); err != nil {
			return err
		}
	}
	if strings.ContainsAny(spec.JobName, "[]") {
		return userErr("%s: Bad job name: '[' and ']' belong only to a job array's indices (-J \"name[1-10]\")", quoteCut(spec.JobName))
	}
	if err := checkMail(spec.MailUser); err != nil {
		return err
	}
	for _, e := range []struct{ opt, v string }{{"-E", spec.PreExec}, {"-Ep", spec.PostExec}} {
		if err := checkLen("command of "+e.opt, e.v, maxExecLen); err != nil {
			return err
		}
		if strings.IndexByte(e.v, 0) >= 0 {
			return userErr("The command of %s contains a NUL character", e.opt)
		}
	}
	if len(spec.ResReq) > maxResReqs {
		return userErr("Too many resource requirements (-R): %d; at most %d", len(spec.ResReq), maxResReqs)
	}
	for _, r := range spec.ResReq {
		if err := checkLen("resource requirement (-R)", r, maxResReqLen); err != nil {
			return err
		}
		if strings.IndexByte(r, 0) >= 0 {
			return userErr("Bad resource requirement syntax: the requirement contains a NUL character")
		}
	}
	if len(spec.Hosts) > maxHosts {
		return userErr("Too many host names (-m): %d; at most %d", len(spec.Hosts), maxHosts)
	}
	for _, h := range spec.Hosts {
		if err := checkLine("-m", "host name", h, maxShortLen); err != nil {
			return err
		}
	}
	if err := checkEnv(spec.Env); err != nil {
		return err
	}
	return checkNumbers(spec)
}

// checkNumbers checks the numeric options: a negative or huge value is
// what an overflow in a client looks like, and must not mean "no limit".
func checkNumbers(spec *api.JobSpec) error {
	if spec.MinTasks < 0 || spec.MaxTasks < 0 || spec.MinTasks > maxTasks || spec.MaxTasks > maxTasks ||
		spec.MaxTasks > 0 && spec.MaxTasks < spec.MinTasks {
		return userErr("%s: Bad argument for option -n: the number of tasks must be between 1 and %d", taskArg(spec), maxTasks)
	}
	if spec.ArrayLimit < 0 {
		return userErr("%d: Job array index error: the running limit (%%) must be positive", spec.ArrayLimit)
	}
	for _, t := range []struct {
		opt, name string
		sec       int64
	}{{"-W", "RUNLIMIT", spec.RunLimitSec}, {"-c", "CPULIMIT", spec.CpuLimitSec},
		{"-We", "estimated run time", spec.EstimatedRunSec}, {"-wt", "warning time", spec.WarningTimeSec}} {
		if t.sec < 0 || t.sec > maxSeconds {
			return userErr("Bad %s specification (%s): %d seconds is out of range; at most %d minutes", t.name, t.opt, t.sec, maxSeconds/60)
		}
	}
	for _, m := range []struct {
		opt, name string
		kb        int64
	}{{"-M", "MEMLIMIT", spec.MemLimitKb}, {"-F", "FILELIMIT", spec.FileLimitKb}, {"-D", "DATALIMIT", spec.DataLimitKb},
		{"-S", "STACKLIMIT", spec.StackLimitKb}, {"-C", "CORELIMIT", spec.CoreLimitKb}, {"-v", "SWAPLIMIT", spec.SwapLimitKb}} {
		if m.kb < 0 || m.kb > maxLimitKB {
			return userErr("Bad %s specification (%s): %d KB is out of range; at most %d KB (8 EB)", m.name, m.opt, m.kb, int64(maxLimitKB))
		}
	}
	if spec.ProcessLimit < 0 {
		return userErr("Bad PROCESSLIMIT specification (-p): %d", spec.ProcessLimit)
	}
	if spec.ThreadLimit < 0 {
		return userErr("Bad THREADLIMIT specification (-T): %d", spec.ThreadLimit)
	}
	for _, t := range []struct {
		opt string
		v   int64
	}{{"-b", spec.BeginTime}, {"-t", spec.TermTime}} {
		if t.v < 0 || t.v > maxUnixTime {
			return userErr("Bad time specification (%s): %d is not a time between 1970 and 9999", t.opt, t.v)
		}
	}
	if spec.Umask > 0o777 {
		return userErr("Bad umask: %o", spec.Umask)
	}
	if _, ok := api.Interactive_name[int32(spec.Interactive)]; !ok {
		return userErr("Bad interactive mode: %d", spec.Interactive)
	}
	return nil
}

func taskArg(spec *api.JobSpec) string {
	if spec.MaxTasks != spec.MinTasks && spec.MaxTasks != 0 {
		return fmt.Sprintf("%d,%d", spec.MinTasks, spec.MaxTasks)
	}
	return fmt.Sprint(spec.MinTasks)
}

// checkLen refuses a value longer than max bytes.
func checkLen(what, v string, max int) error {
	if len(v) > max {
		return userErr("The %s is too long: %d bytes; at most %d", what, len(v), max)
	}
	return nil
}

// checkLine refuses a one-line value that is too long or holds a control
// character (CR, LF, NUL, ...; a tab is allowed).
func checkLine(opt, what, v string, max int) error {
	if err := checkLen(what, v, max); err != nil {
		if opt != "" {
			return userErr("%s (%s)", err.Error(), opt)
		}
		return err
	}
	if i := strings.IndexFunc(v, isControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		msg := fmt.Sprintf("The %s contains a control character (%U) at byte %d", what, r, i+1)
		if opt != "" {
			msg += " (" + opt + ")"
		}
		return userErr("%s", msg)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' || r >= 0x7f && r < 0xa0 }

// quoteCut shows at most 60 bytes of a value in a message.
func quoteCut(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}

// checkMail refuses a -u address that could be more than one address or
// carry mail headers: the report goes to sendmail -t with it in a To:
// header. One address: a user name or user@host, without blanks, quotes,
// separators or angle brackets, and not an option for sendmail.
func checkMail(addr string) error {
	if addr == "" {
		return nil
	}
	if strings.HasPrefix(addr, "-") || strings.ContainsAny(addr, " \t,;:<>()[]\"\\") {
		return userErr("%s: Bad mail address (-u): one address, user or user@host, without blanks or separators", quoteCut(addr))
	}
	return nil
}

// checkEnv bounds the submission environment as execve would, and refuses
// what no environment can hold.
func checkEnv(env []string) error {
	if len(env) > maxEnvCount {
		return userErr("The environment has too many variables: %d; at most %d", len(env), maxEnvCount)
	}
	total := 0
	for _, kv := range env {
		total += len(kv) + 1
		name, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || name == "":
			return userErr("Bad environment variable %q: expected NAME=VALUE", quoteCut(kv))
		case len(kv) > maxEnvVarLen:
			return userErr("The environment variable %s is too long: %d bytes; at most %d", quoteCut(name), len(kv), maxEnvVarLen)
		case strings.IndexByte(kv, 0) >= 0:
			return userErr("The environment variable %s contains a NUL character", quoteCut(name))
		}
	}
	if total > maxEnvBytes {
		return userErr("The environment is too large: %d bytes; at most %d", total, maxEnvBytes)
	}
	return nil
}

// configOwned are the JobSpec fields the configuration layering or the
// controller fills (lib/config.Layer, layerWith): a client's values for
// them are never taken. The identity fields (uid, gid, user, home) and
// submit_host are set from the caller; env_ref belongs to the store.
var configOwned = []protoreflect.Name{
	"pre_exec_chain", "post_exec_chain", "job_starter", "env_overlay", "origin", "pend_limits",
	"uid", "gid", "user", "home", "submit_host", "env_ref",
}

// scrubSpec clears every configuration-owned field of a spec a client
// sent, and sets the identity and the submission host from what the
// controller knows of the caller.
func (c *Controller) scrubSpec(who Caller, spec *api.JobSpec) {
	m := spec.ProtoReflect()
	for _, name := range configOwned {
		m.Clear(m.Descriptor().Fields().ByName(name))
	}
	spec.Uid, spec.Gid = who.UID, who.GID
	spec.User, spec.Home = lookupUser(who.UID)
	spec.SubmitHost = c.peerHost(who)
	if who.Remote {
		// bsub's socket is on its own host, which no job side can tell
		// from this one: its terminal is relayed (term.go).
		spec.InteractiveAddr = ""
	}
}

// peerHost is the host a request came from: over the local socket, this
// host (short name, as LSF shows hosts).
func (c *Controller) peerHost(who Caller) string {
	h := who.Host
	if h == "" {
		h = c.cfg.Host
	}
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i]
	}
	return h
}

// scrubLaunch clears, in a stored submission about to be sent to the
// worker, the fields the effective spec owns: a job stored before they
// were scrubbed at submission must not bring its own exec chain.
func scrubLaunch(spec *api.JobSpec) {
	spec.PreExecChain, spec.PostExecChain, spec.JobStarter, spec.EnvOverlay = nil, nil, "", nil
	spec.Container, spec.ExecDriver = "", ""
	spec.Origin, spec.PendLimits = nil, nil
}

package exec

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// RlimitArg is the first argument with which the shepherd's own binary
// sets a job's per-process limits (bsub -F, -D, -S, -C) and then becomes
// the job: Go's os/exec cannot set a child's limits between fork and
// exec, and setting them on the shepherd itself would limit the shepherd
// too. Commands that run shepherds pass these arguments to RlimitMain.
const RlimitArg = "--xce-rlimits"

// rlimitNames maps the letters of the limit list to the resources, as
// bsub's options name them.
var rlimitNames = map[byte]int{'F': unix.RLIMIT_FSIZE, 'D': unix.RLIMIT_DATA, 'S': unix.RLIMIT_STACK, 'C': unix.RLIMIT_CORE,
	'M': unix.RLIMIT_RSS}

// rlimitList is the limit list of a spec ("F=1024,C=0", values in KB),
// "" when it sets none. The memory limit (-M) is the job's RLIMIT_RSS, as
// LSF sets it, except with LSB_JOB_MEMLIMIT, where LSF sets none.
func (s *shepherd) rlimitList() string {
	var parts []string
	rss := s.spec.GetMemLimitKb()
	if s.l.GetJobMemlimit() {
		rss = 0
	}
	for _, l := range []struct {
		letter string
		kb     int64
	}{{"F", s.spec.GetFileLimitKb()}, {"D", s.spec.GetDataLimitKb()}, {"S", s.spec.GetStackLimitKb()}, {"C", s.spec.GetCoreLimitKb()},
		{"M", rss}} {
		if l.kb > 0 {
			parts = append(parts, l.letter+"="+strconv.FormatInt(l.kb, 10))
		}
	}
	return strings.Join(parts, ",")
}

// RlimitMain sets the soft limits of its first argument ("F=1024,M=4096", KB;
// LSF's limits are soft, so the job may lower them further but not raise
// them past the hard limit) and execs the program of the second with the
// rest as its argv (argv[0] included). It returns only on failure.
func RlimitMain(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: "+RlimitArg+" LIMITS PATH ARGV0 [ARG...]")
		return 2
	}
	for _, item := range strings.Split(args[0], ",") {
		name, val, ok := strings.Cut(item, "=")
		kb, err := strconv.ParseInt(val, 10, 64)
		res, known := rlimitNames[name[0]]
		if !ok || len(name) != 1 || !known || err != nil || kb < 0 {
			fmt.Fprintf(os.Stderr, "%s: bad limit %q\n", RlimitArg, item)
			return 2
		}
		var lim unix.Rlimit
		if err := unix.Getrlimit(res, &lim); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", RlimitArg, err)
			return 2
		}
		lim.Cur = min(uint64(kb)*1024, lim.Max)
		if err := unix.Setrlimit(res, &lim); err != nil {
			fmt.Fprintf(os.Stderr, "%s: set limit %s: %v\n", RlimitArg, item, err)
			return 2
		}
	}
	err := syscall.Exec(args[1], args[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "%s: %v\n", args[1], err)
	if os.IsNotExist(err) {
		return exitNotFound
	}
	return exitCannotExec
}

package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// LimitsFile is where the worker writes a running job's new limits (bmod
// -W, -M, -c of a running job, or a new termination deadline) before it
// sends the shepherd SIGUSR1: an api.JobSpec with only run_limit_sec,
// mem_limit_kb, mem_limit_hard, cpu_limit_sec and term_time set. It is next to the launch file, in the job's
// root-owned directory: root writes it there and the shepherd only reads
// it.
func LimitsFile(launchFile string) string {
	return filepath.Join(filepath.Dir(launchFile), "limits")
}

// KillFile is where the worker writes why it is terminating a job (bkill
// by its owner or an administrator, brequeue), as the TermReason's name,
// before it sends the first signal. The shepherd reads it when the job has
// ended, so that the report names the reason as LSF's does; like
// LimitsFile it is root's, next to the launch file.
func KillFile(launchFile string) string {
	return filepath.Join(filepath.Dir(launchFile), "kill")
}

// readKillReason is the reason in the kill file, TERM_UNKNOWN when there
// is none. Only a name the worker could have written is taken, from at
// most a few bytes of a regular file opened without following links.
func readKillReason(path string) api.TermReason {
	if path == "" {
		return api.TermReason_TERM_UNKNOWN
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return api.TermReason_TERM_UNKNOWN
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return api.TermReason_TERM_UNKNOWN
	}
	buf := make([]byte, 64)
	n, _ := f.Read(buf)
	v, ok := api.TermReason_value[strings.TrimSpace(string(buf[:n]))]
	if !ok {
		return api.TermReason_TERM_UNKNOWN
	}
	return api.TermReason(v)
}

// liveLimits are the limits the shepherd enforces on a running job; they
// change when bmod changes them.
type liveLimits struct {
	mu       sync.Mutex
	runSec   int64
	memKB    int64
	memHard  bool
	cpuSec   int64
	runTimer *time.Timer

	warnTimer *time.Timer // -wa/-wt: the warning before the run limit or deadline
	// termTime is the termination deadline (-t, or a closed advance
	// reservation's end), Unix seconds; 0: none.
	termTime  int64
	termTimer *time.Timer
}

func newLimits(spec *api.JobSpec) *liveLimits {
	return &liveLimits{runSec: spec.GetRunLimitSec(), memKB: spec.GetMemLimitKb(),
		memHard: spec.GetMemLimitHard(), cpuSec: spec.GetCpuLimitSec(), termTime: spec.GetTermTime()}
}

// memory returns the memory limit in KB (0: none) and whether it is hard.
func (l *liveLimits) memory() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.memKB, l.memHard
}

// cpuMs returns the CPU time limit in milliseconds, 0 for none.
func (l *liveLimits) cpuMs() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cpuSec * 1000
}

// armRunLimit (re)sets the run limit's timer, counted from the job's
// start: a limit already passed ends the job now.
func (s *shepherd) armRunLimit(e *enforcer, start time.Time, grace time.Duration) {
	l := s.limits
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runTimer != nil {
		l.runTimer.Stop()
		l.runTimer = nil
	}
	if l.warnTimer != nil {
		l.warnTimer.Stop()
		l.warnTimer = nil
	}
	lim := l.runSec
	s.armWarning(e, start, lim)
	if lim <= 0 {
		return
	}
	l.runTimer = e.after(time.Until(start.Add(time.Duration(lim)*time.Second)), func() {
		e.terminate(api.TermReason_TERM_RUNLIMIT,
			fmt.Sprintf("TERM_RUNLIMIT: the run limit of %d seconds was reached", lim),
			grace, syscall.SIGUSR2, syscall.SIGKILL)
	})
}

// armWarning sets the -wa/-wt warning: the signal goes to the job
// warning_time before whichever comes first of its run limit (runSec from
// start) and its termination deadline (-t). l.mu is held.
func (s *shepherd) armWarning(e *enforcer, start time.Time, runSec int64) {
	sig, lead := api.ParseSignal(s.spec.GetWarningAction()), time.Duration(s.spec.GetWarningTimeSec())*time.Second
	if sig == 0 || lead <= 0 {
		return
	}
	var end time.Time
	if runSec > 0 {
		end = start.Add(time.Duration(runSec) * time.Second)
	}
	if t := s.limits.termTime; t > 0 && (end.IsZero() || time.Unix(t, 0).Before(end)) {
		end = time.Unix(t, 0)
	}
	if end.IsZero() {
		return
	}
	s.limits.warnTimer = e.after(time.Until(end.Add(-lead)), func() {
		s.log.Info("sending the job its warning", "signal", sig)
		e.kill(sig)
	})
}

// reloadLimits reads the limits file and applies it.
func (s *shepherd) reloadLimits(e *enforcer, start time.Time, grace time.Duration) {
	path := s.limitsFile
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		s.log.Warn("cannot read the new limits", "file", path, "err", err)
		return
	}
	spec := &api.JobSpec{}
	if err := proto.Unmarshal(b, spec); err != nil {
		s.log.Warn("cannot decode the new limits", "file", path, "err", err)
		return
	}
	l := s.limits
	l.mu.Lock()
	changed := l.runSec != spec.GetRunLimitSec() || l.termTime != spec.GetTermTime()
	termChanged := l.termTime != spec.GetTermTime()
	l.runSec, l.memKB, l.memHard, l.cpuSec = spec.GetRunLimitSec(), spec.GetMemLimitKb(), spec.GetMemLimitHard(), spec.GetCpuLimitSec()
	l.termTime = spec.GetTermTime()
	l.mu.Unlock()
	s.log.Info("limits changed", "run_limit_sec", spec.GetRunLimitSec(), "mem_limit_kb", spec.GetMemLimitKb(),
		"cpu_limit_sec", spec.GetCpuLimitSec(), "term_time", spec.GetTermTime())
	if termChanged {
		s.armDeadline(e, grace)
	}
	if changed {
		s.armRunLimit(e, start, grace) // and the warning, which precedes either
	}
}

// armDeadline (re)sets the termination deadline's timer: a deadline
// already passed ends the job now.
func (s *shepherd) armDeadline(e *enforcer, grace time.Duration) {
	l := s.limits
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.termTimer != nil {
		l.termTimer.Stop()
		l.termTimer = nil
	}
	t := l.termTime
	if t <= 0 {
		return
	}
	l.termTimer = e.after(time.Until(time.Unix(t, 0)), func() {
		e.terminate(api.TermReason_TERM_DEADLINE,
			"TERM_DEADLINE: the termination deadline "+time.Unix(t, 0).Format(time.DateTime)+" was reached",
			grace, syscall.SIGUSR2, syscall.SIGKILL)
	})
}

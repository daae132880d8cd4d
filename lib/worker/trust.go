package worker

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	jobexec "xce/lib/exec"
)

// maxJobFile caps what root reads of a file in a job's directory: a start,
// status or usage record is a few KB even for a job on thousands of hosts.
const maxJobFile = 256 << 10

// readJobFile reads a file the job's user can write (start, status, usage)
// without trusting it: openJobFile's checks, and at most maxJobFile bytes.
func readJobFile(path string, uid int) ([]byte, error) {
	f, size, err := openJobFile(path, uid)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > maxJobFile {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", path, size, maxJobFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxJobFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxJobFile {
		return nil, fmt.Errorf("%s: more than %d bytes", path, maxJobFile)
	}
	return b, nil
}

// readRecord reads one of root's records (exec.ResultFD, exec.UsageFD) in
// the job's root-owned directory and returns its payload.
func readRecord(path string) ([]byte, error) {
	f, size, err := openJobFile(path, os.Geteuid())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > jobexec.MaxRecord {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", path, size, jobexec.MaxRecord)
	}
	b, err := io.ReadAll(io.LimitReader(f, jobexec.MaxRecord+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	p, err := jobexec.ParseRecord(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// host is what bounds a job's usage on this host.
type host struct {
	ncpus int
	memKb int64
}

// thisHost is this host's CPUs (all of them, not xced's affinity) and
// memory, read once.
var thisHost = sync.OnceValue(func() host {
	h := host{ncpus: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			if len(line) > 3 && strings.HasPrefix(line, "cpu") && line[3] >= '0' && line[3] <= '9' {
				n++
			}
		}
		h.ncpus = max(h.ncpus, n)
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		h.memKb = int64(uint64(si.Totalram) * uint64(si.Unit) / 1024)
	}
	return h
})

// openJobFile opens for reading a file the job's user can write (its
// records, its output) without trusting it: the last component is not
// followed if it is a link, opening does not block (a FIFO), and only a
// regular file with one link, owned by uid, is accepted. It returns the
// file and its size when opened.
func openJobFile(path string, uid int) (*os.File, int64, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	// Checked on the raw descriptor: os.NewFile would poll a FIFO.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = fmt.Errorf("%s: not a regular file (mode %#o)", path, st.Mode)
	case int(st.Uid) != uid:
		err = fmt.Errorf("%s: owned by uid %d, not by the job's user (uid %d)", path, st.Uid, uid)
	case st.Nlink != 1:
		err = fmt.Errorf("%s: %d links to it, want 1", path, st.Nlink)
	}
	if err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd), path), st.Size, nil
}

// errNoGroup: no process of the group is left to signal.
var errNoGroup = errors.New("no process of the group is left")

// checkGroup checks that process group pgid is the job of the shepherd
// with pid shepherd before root signals it: pgid is above 1 and a member
// of the group is in the shepherd's session (which the shepherd created
// with setsid, so only its descendants are in it) or, for an interactive
// job on a pseudo-terminal, leads a session of its own as the shepherd's
// child. It returns errNoGroup when no member is left. The group's leader
// tells; when it is gone, any member does (all members of a group share
// its session).
func checkGroup(pgid, shepherd int) error {
	if pgid <= 1 {
		return fmt.Errorf("process group %d is no job's", pgid)
	}
	if shepherd <= 1 {
		return fmt.Errorf("process group %d: the job's shepherd is not known", pgid)
	}
	if ids, err := jobexec.ReadProcIDs(pgid); err == nil {
		return groupOf(pgid, shepherd, pgid, ids)
	}
	// The leader is gone. An empty group is the common case (a job that
	// ended with its children): one signal 0 says so, where a search of
	// /proc reads every process's stat (44% of the controller's CPU when
	// short jobs end one after another).
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return errNoGroup
	}
	pids, err := jobexec.Pids()
	if err != nil {
		return fmt.Errorf("process group %d: %w", pgid, err)
	}
	for _, pid := range pids {
		if ids, err := jobexec.ReadProcIDs(pid); err == nil && ids.Pgrp == pgid {
			return groupOf(pgid, shepherd, pid, ids)
		}
	}
	return errNoGroup
}

// groupOf checks the ids of process pid, which claims to be in pgid.
func groupOf(pgid, shepherd, pid int, ids jobexec.ProcIDs) error {
	switch {
	case ids.Pgrp != pgid:
		return fmt.Errorf("process %d is in process group %d, not in %d", pid, ids.Pgrp, pgid)
	case ids.Session == shepherd:
		return nil
	case pid == pgid && ids.Session == pgid && ids.PPid == shepherd:
		return nil
	}
	return fmt.Errorf("process group %d is in session %d, not in the session of the job's shepherd (pid %d)",
		pgid, ids.Session, shepherd)
}

// shepherdAlive reports whether pid is still a job's shepherd: a live
// process leading its own session, running a shepherd command line and,
// when uid >= 0, as uid. A pid reused by another program is not.
func shepherdAlive(pid, uid int) bool {
	if pid <= 1 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	ids, err := jobexec.ReadProcIDs(pid)
	if err != nil || ids.Session != pid {
		return false
	}
	// The real uid from status: /proc/PID itself is root's, since the
	// shepherd makes itself non-dumpable.
	if uid >= 0 && procUID(pid) != uid {
		return false
	}
	// A zombie has no command line.
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && strings.Contains(string(cmdline), "shepherd")
}

// procUID is the real uid of process pid, -1 when unknown.
func procUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.Atoi(f[0]); err == nil {
					return n
				}
			}
			return -1
		}
	}
	return -1
}

package worker

// The job's root-owned directory and the shepherd's start socket (see the
// package comment).

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"xce/lib/rmtree"
)

// jobFiles are root's files of a job's directory that the shepherd gets
// open: the launch to read, its log, and the records of the job's end and
// usage (exec.ResultFD, exec.UsageFD) to write; and the worker's own
// record of the job's pids (pids.go), which the shepherd does not get.
type jobFiles struct {
	launch, log, result, usage, pids *os.File
}

func (f *jobFiles) close() {
	for _, x := range []*os.File{f.launch, f.log, f.result, f.usage, f.pids} {
		if x != nil {
			x.Close()
		}
	}
}

// makeJobDir creates a job's directory afresh (root's, 0711) with the
// user's directory in it, and in it the launch file (holding launch), the
// shepherd's log and the empty records (the pids record among them). It
// returns them open: the launch for reading, the log for appending, the
// records for writing.
func makeJobDir(dir string, uid, gid int, chown bool, launch []byte) (*jobFiles, error) {
	// rmtree works through directory handles, follows no link, and
	// holds a bounded number open however deep the user's tree.
	if err := rmtree.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clear job directory: %w", err)
	}
	if err := unix.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create job directory: %w", err)
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open job directory: %w", err)
	}
	defer unix.Close(dfd)
	if err := unix.Fchmod(dfd, 0o711); err != nil {
		return nil, fmt.Errorf("job directory: %w", err)
	}
	if err := unix.Mkdirat(dfd, userDirName, 0o700); err != nil {
		return nil, fmt.Errorf("create the job's directory: %w", err)
	}
	if chown {
		ufd, err := unix.Openat(dfd, userDirName, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Fchown(ufd, uid, gid)
			unix.Close(ufd)
		}
		if err != nil {
			return nil, fmt.Errorf("give the job's directory to uid %d: %w", uid, err)
		}
	}
	const create = unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	lfd, err := unix.Openat(dfd, launchName, unix.O_WRONLY|create, 0o600)
	if err != nil {
		return nil, fmt.Errorf("write launch file: %w", err)
	}
	lw := os.NewFile(uintptr(lfd), filepath.Join(dir, launchName))
	_, err = lw.Write(launch)
	if cerr := lw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write launch file: %w", err)
	}
	rfd, err := unix.Openat(dfd, launchName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open launch file: %w", err)
	}
	f := &jobFiles{launch: os.NewFile(uintptr(rfd), filepath.Join(dir, launchName))}
	for _, o := range []struct {
		name string
		flag int
		to   **os.File
	}{{logName, unix.O_WRONLY | unix.O_APPEND, &f.log}, {resultName, unix.O_RDWR, &f.result}, {usageName, unix.O_RDWR, &f.usage}, {pidsName, unix.O_RDWR, &f.pids}} {
		fd, err := unix.Openat(dfd, o.name, o.flag|create, 0o600)
		if err != nil {
			f.close()
			return nil, fmt.Errorf("create %s: %w", o.name, err)
		}
		*o.to = os.NewFile(uintptr(fd), filepath.Join(dir, o.name))
	}
	return f, nil
}

// crashAt, set by tests, stops Start as a worker killed at that point of
// a launch would: "started" (the shepherd runs, nothing is recorded) or
// "recorded" (its pid is recorded, its go not sent).
var crashAt string

// startSocket makes the socket pair between the worker and a shepherd:
// the shepherd waits on its end (ready, file descriptor 3) for its go,
// then writes the job's pid there, and IdleWord once the end is recorded
// (reuse.go); the worker's end (started) reads with a deadline.
func startSocket() (started, ready *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("shepherd socket: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("shepherd socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "shepherd socket"), os.NewFile(uintptr(fds[1]), "shepherd socket"), nil
}

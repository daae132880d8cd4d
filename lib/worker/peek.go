package worker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	jobexec "xce/lib/exec"
)

// MaxPeek caps what one Peek reads: well under a gRPC message.
const MaxPeek = 1 << 20

// Peek reads a job's output so far (bpeek, xcetop's output tail): up to
// max bytes (MaxPeek when max <= 0 or above it) from offset of the file
// exec.OutputPath names: the spool file while it exists, else the job's
// -o file (LSB_STDOUT_DIRECT). size is the file's size when it was
// opened, path the file read. What job and user the output is comes from
// the job's root-owned launch file, never from the user's files; the
// output file itself is the user's and is read as openJobFile allows
// (no link followed, regular, one link, the job's user's).
func (w *Worker) Peek(id int64, idx int32, offset int64, max int) (data []byte, size int64, path string, err error) {
	l, err := w.readLaunch(id, idx)
	if err != nil {
		return nil, 0, "", err
	}
	uid := jobUID(l.GetJob().GetSpec())
	w.mu.Lock()
	if p := w.jobs[jobKey{id, idx}]; p != nil && p.uid >= 0 {
		uid = p.uid
	}
	w.mu.Unlock()
	path = w.outputPath(l, uid)
	if path == "" {
		return nil, 0, "", fmt.Errorf("job %d[%d]: its output file is not known yet", id, idx)
	}
	gid := int(l.GetJob().GetSpec().GetGid())
	if uid == os.Geteuid() {
		gid = os.Getegid()
	}
	f, size, err := openAsUser(path, uid, gid, l.GetJob().GetSpec().GetUser())
	if err != nil {
		return nil, 0, path, fmt.Errorf("job %d[%d] output: %w", id, idx, err)
	}
	defer f.Close()
	if max <= 0 || max > MaxPeek {
		max = MaxPeek
	}
	offset = min(size, offset)
	if offset < 0 {
		return nil, size, path, fmt.Errorf("job %d[%d] output: negative offset %d", id, idx, offset)
	}
	data = make([]byte, min(int64(max), size-offset))
	n, err := f.ReadAt(data, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, size, path, fmt.Errorf("read %s: %w", path, err)
	}
	return data[:n], size, path, nil
}

// outputPath is where the job of launch l writes its output, as
// exec.OutputPath says for the job as the controller sees it: the spool
// file the launch names (or the shepherd's default next to the job file),
// else the -o file relative to the working directory the job's start
// record gives.
func (w *Worker) outputPath(l *api.Launch, uid int) string {
	lj := l.GetJob()
	j := &api.Job{
		JobId: lj.GetJobId(), ArrayIndex: lj.GetArrayIndex(), Effective: lj.GetEffective(),
		SpoolOutput: lj.GetSpoolOutput(), StartTime: 1,
	}
	if j.SpoolOutput == "" {
		j.SpoolOutput = l.GetJobFile() + ".out"
	}
	if j.GetEffective().GetOutputFile() != "" {
		startFile, _, _ := w.files(j.JobId, j.ArrayIndex)
		if ev, err := readEvent(startFile, uid); err == nil {
			j.ExecCwd = ev.ExecCwd
		}
	}
	return jobexec.OutputPath(j)
}

// readLaunch reads a job's launch file: root's, in root's directory.
func (w *Worker) readLaunch(id int64, idx int32) (*api.Launch, error) {
	path := filepath.Join(w.JobDir(id, idx), launchName)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("job %d[%d] has no files on this host", id, idx)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	l := &api.Launch{}
	if err := proto.Unmarshal(b, l); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return l, nil
}

// openAsUser opens a job's output file as openJobFile does, but with the
// job's user's file system identity (fsuid, fsgid and groups, on one
// locked thread): the path is the user's to name (-o), and root must not
// open what the user could not (/etc/shadow, a file in a directory closed
// to the user) nor tell whether it exists.
func openAsUser(path string, uid, gid int, user string) (*os.File, int64, error) {
	if uid == os.Geteuid() {
		return openJobFile(path, uid)
	}
	groups, err := supplementaryGroups(user)
	if err != nil {
		groups = nil
	}
	type opened struct {
		f    *os.File
		size int64
		err  error
	}
	ch := make(chan opened, 1)
	go func() {
		runtime.LockOSThread()
		// The thread goes back to the scheduler only with root's identity
		// restored; otherwise it ends with this goroutine (still locked).
		restored := false
		defer func() {
			if restored {
				runtime.UnlockOSThread()
			}
		}()
		saved, err := unix.Getgroups()
		if err != nil {
			ch <- opened{err: fmt.Errorf("open as uid %d: %w", uid, err)}
			return
		}
		egid, euid := os.Getegid(), os.Geteuid()
		gs := make([]int, len(groups))
		for i, g := range groups {
			gs[i] = int(g)
		}
		// x/sys/unix's Setgroups, Setfsgid and Setfsuid are the raw
		// system calls, which change this thread alone.
		if err := unix.Setgroups(gs); err != nil {
			ch <- opened{err: fmt.Errorf("open as uid %d: %w", uid, err)}
			return
		}
		unix.Setfsgid(gid)
		unix.Setfsuid(uid)
		var o opened
		if cur, _ := unix.SetfsuidRetUid(-1); cur != uid {
			o.err = fmt.Errorf("open as uid %d: the file system uid is %d", uid, cur)
		} else {
			o.f, o.size, o.err = openJobFile(path, uid)
		}
		unix.Setfsuid(euid)
		unix.Setfsgid(egid)
		cur, _ := unix.SetfsuidRetUid(-1)
		restored = unix.Setgroups(saved) == nil && cur == euid
		ch <- o
	}()
	o := <-ch
	return o.f, o.size, o.err
}

package exec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"xce/lib/api"
)

// A shepherd started with the worker's socket on descriptor 3 (gated)
// does not exit once it has recorded a job's end: it says so on the
// socket (IdleWord) and waits for the next job of its user, which the
// worker hands over on the same socket as one message (SendJob): the go
// byte, the launch file's path and a newline as data, and four open
// descriptors as SCM_RIGHTS, in order the launch file (read, then
// closed), the shepherd's log (its new standard output and error), and
// the result and usage records (ResultFD and UsageFD's successors). When
// the socket closes instead (the worker let it go, or went), it exits 0.
//
// A process start is most of a short job's cost (BenchmarkJobFloor), and
// the shepherd already runs as the job's user, so taking that user's next
// job crosses no line the job itself does not: what the last job left is
// gone before the next is handed over (its process tree is killed and
// reaped here, its cgroup by the worker), and the shepherd's own state
// (umask, directory, environment, signal dispositions, descriptors) is
// what it was before the first job: Run changes none of it for good.

// IdleWord is the line a shepherd writes on its socket once a job's end is
// recorded and it can take another job.
const IdleWord = "e"

// HandoverFiles is how many descriptors a handover carries.
const HandoverFiles = 4

// nextJob is what the shepherd runs next.
type nextJob struct {
	launchFile    string
	launch        *api.Launch
	kernelMem     bool
	result, usage *os.File
}

func (n *nextJob) closeRecords() {
	for _, f := range []*os.File{n.result, n.usage} {
		if f != nil {
			f.Close()
		}
	}
	n.result, n.usage = nil, nil
}

// reusable reports whether a shepherd that ran l may take another job:
// not after an interactive job or a container, whose relays and runtime
// state are the shepherd's own.
func reusable(l *api.Launch) bool {
	return l.GetInteractiveAddr() == "" && l.GetJob().GetSpec().GetContainer() == "" &&
		l.GetJob().GetEffective().GetContainer() == ""
}

// awaitJob says the shepherd is idle and waits for its next job. io.EOF:
// the socket closed, there is none.
func awaitJob(ctl *os.File) (*nextJob, error) {
	// The last job's log is the worker's to read now; whatever the idle
	// shepherd might say goes nowhere.
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		unix.Dup3(int(null.Fd()), 1, 0)
		unix.Dup3(int(null.Fd()), 2, 0)
		null.Close()
	}
	if !reapStrays() {
		slog.Warn("a process of the last job's outlived it: the shepherd takes no other job")
		return nil, io.EOF
	}
	if _, err := ctl.Write([]byte(IdleWord + "\n")); err != nil {
		return nil, io.EOF // the worker closed its end: it wants no more
	}
	goByte, path, files, err := recvJob(ctl)
	if err != nil {
		return nil, err
	}
	launch, logf := files[0], files[1]
	// Received close-on-exec (recvJob), as recordFile makes the first
	// job's records.
	if !writableRegular(int(files[2].Fd())) || !writableRegular(int(files[3].Fd())) {
		closeAll(files...)
		return nil, errors.New("the handover's records are not writable regular files")
	}
	n := &nextJob{launchFile: path, kernelMem: goByte == GoKernelMemByte, result: files[2], usage: files[3]}
	unix.Dup3(int(logf.Fd()), 1, 0)
	unix.Dup3(int(logf.Fd()), 2, 0)
	logf.Close()
	b, err := io.ReadAll(io.LimitReader(launch, maxLaunch))
	launch.Close()
	if err != nil {
		n.closeRecords()
		return nil, fmt.Errorf("read the handed launch: %w", err)
	}
	n.launch = &api.Launch{}
	if err := n.launch.UnmarshalVT(b); err != nil {
		n.closeRecords()
		return nil, fmt.Errorf("decode the handed launch: %w", err)
	}
	return n, nil
}

// maxLaunch bounds a handed launch file (the worker wrote it; a launch is
// a few KB, a large environment some hundreds).
const maxLaunch = 64 << 20

// recvJob reads one handover from the socket.
func recvJob(ctl *os.File) (goByte byte, path string, files []*os.File, err error) {
	buf := make([]byte, 4096+2)
	oob := make([]byte, unix.CmsgSpace(HandoverFiles*4))
	rc, err := ctl.SyscallConn()
	if err != nil {
		return 0, "", nil, err
	}
	var n, oobn int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	}); err != nil {
		return 0, "", nil, err
	}
	if rerr != nil {
		return 0, "", nil, rerr
	}
	if msgs, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
		for i := range msgs {
			fds, _ := unix.ParseUnixRights(&msgs[i])
			for _, fd := range fds {
				files = append(files, os.NewFile(uintptr(fd), "handed"))
			}
		}
	}
	if n == 0 && len(files) == 0 {
		return 0, "", nil, io.EOF
	}
	line, found := bytes.CutSuffix(buf[:n], []byte("\n"))
	if !found || len(line) < 2 || line[0] != GoByte && line[0] != GoKernelMemByte || len(files) != HandoverFiles ||
		bytes.IndexByte(line, 0) >= 0 {
		closeAll(files...)
		return 0, "", nil, fmt.Errorf("a handover that is not one (%d bytes, %d descriptors)", n, len(files))
	}
	return line[0], string(line[1:]), files, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// reapStrays reaps the children left: a process of the last job's that
// was reparented to the shepherd (its subreaper) and killed with the
// job's tree may not have been reaped yet. Only an idle shepherd calls it,
// when no child of its own can be running; false when one still runs after
// a while (the shepherd then takes no other job).
func reapStrays() bool {
	deadline := time.Now().Add(time.Second)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR) || pid > 0:
			continue
		case err != nil: // ECHILD: none left
			return true
		case time.Now().After(deadline):
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// SendJob hands a job to an idle shepherd on the worker's end of its
// socket: see the comment at the top of this file.
func SendJob(sock *os.File, goByte byte, launchFile string, launch, log, result, usage *os.File) error {
	msg := append(append([]byte{goByte}, launchFile...), '\n')
	rights := unix.UnixRights(int(launch.Fd()), int(log.Fd()), int(result.Fd()), int(usage.Fd()))
	rc, err := sock.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), msg, rights, nil, 0)
		return serr != unix.EAGAIN
	}); err != nil {
		return err
	}
	return serr
}

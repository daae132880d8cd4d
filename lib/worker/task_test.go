package worker

import (
	"xce/lib/api/grpcapi"
	"xce/lib/testenv"

	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"xce/lib/api"
	"xce/lib/api/rpc"
)

// fakeRelay plays the other hosts: a task for hostB "runs" at once and
// ends with exit code 0 and 500 ms of CPU time.
type fakeRelay struct {
	w       *Worker
	mu      sync.Mutex
	starts  []*rpc.TaskStart
	signals []*rpc.TaskSignal
}

func (r *fakeRelay) RelayTaskStart(ts *rpc.TaskStart) {
	r.mu.Lock()
	r.starts = append(r.starts, ts)
	r.mu.Unlock()
	go func() {
		r.w.TaskResult(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Output{Output: &rpc.TaskOutput{JobId: ts.JobId, Index: ts.Index,
			TaskId: ts.TaskId, Data: []byte("remote " + strconv.Itoa(int(ts.TaskId)) + "\n")}}})
		r.w.TaskResult(&rpc.TaskEvent{Msg: &rpc.TaskEvent_Exit{Exit: &rpc.TaskExit{JobId: ts.JobId, Index: ts.Index,
			TaskId: ts.TaskId, Host: ts.Host, Usage: &api.ResourceUsage{CpuTimeMs: 500, MaxMemKb: 1}}}})
	}()
}

func (r *fakeRelay) RelayTaskSignal(s *rpc.TaskSignal) {
	r.mu.Lock()
	r.signals = append(r.signals, s)
	r.mu.Unlock()
}

// dialAs connects to a Unix socket as uid: from a thread of its own whose
// credentials are changed (and which then ends with its goroutine), so
// that SO_PEERCRED says uid.
func dialAs(path string, uid int) (net.Conn, error) {
	type res struct {
		fd  int
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread goes with the goroutine
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			ch <- res{-1, err}
			return
		}
		if uid != os.Geteuid() {
			if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
				unix.Close(fd)
				ch <- res{-1, e}
				return
			}
		}
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if err != nil {
			unix.Close(fd)
			fd = -1
		}
		ch <- res{fd, err}
	}()
	r := <-ch
	if r.err != nil {
		return nil, r.err
	}
	f := os.NewFile(uintptr(r.fd), path)
	defer f.Close()
	return net.FileConn(f)
}

// taskClient is a Tasks client of a job's socket, connecting as uid.
func taskClient(t *testing.T, path string, uid int) grpcapi.TasksClient {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///task", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return dialAs(path, uid) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return grpcapi.NewTasksClient(cc)
}

type launched struct {
	ids    []int32
	out    map[int32]string // stdout by task
	stderr string
	exits  map[int32]*rpc.TaskExit
	err    error
}

// runLaunch runs one launch to its end; signal, if set, is sent once the
// tasks are launched.
func runLaunch(t *testing.T, c grpcapi.TasksClient, l *rpc.TaskLaunch, signal syscall.Signal) launched {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := launched{out: map[int32]string{}, exits: map[int32]*rpc.TaskExit{}}
	s, err := c.Launch(ctx)
	if err != nil {
		res.err = err
		return res
	}
	if err := s.Send(&rpc.TaskRequest{Msg: &rpc.TaskRequest_Launch{Launch: l}}); err != nil && !errors.Is(err, io.EOF) {
		res.err = err
		return res
	}
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return res
		}
		if err != nil {
			res.err = err
			return res
		}
		switch m := ev.Msg.(type) {
		case *rpc.TaskEvent_Launched:
			res.ids = m.Launched.TaskIds
			if signal != 0 {
				// Give the tasks a moment to exist, then signal them.
				go func() {
					time.Sleep(300 * time.Millisecond)
					s.Send(&rpc.TaskRequest{Msg: &rpc.TaskRequest_Signal{Signal: int32(signal)}})
				}()
			}
		case *rpc.TaskEvent_Output:
			if m.Output.Stderr {
				res.stderr += string(m.Output.Data)
			} else {
				res.out[m.Output.TaskId] += string(m.Output.Data)
			}
		case *rpc.TaskEvent_Exit:
			res.exits[m.Exit.TaskId] = m.Exit
		}
	}
}

// blaunch's tasks on a job's host: one per slot by default, each as the
// job's user with its LSF_PM_TASKID, output and exit code; the task for
// another host goes to the relay without the user (the controller puts
// it on); a host outside the allocation is refused; a signal reaches the
// tasks; another user cannot use the socket; the job's end kills its
// tasks here and on the other hosts, and the tasks' usage is the job's.
func TestTasks(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	relay := &fakeRelay{w: w}
	w.SetTaskRelay(relay)
	dir := t.TempDir()
	uid, gid := testenv.JobUser(t, w.cfg.RunDir, dir, filepath.Dir(shep))
	j := job(1, "sleep 60", dir)
	j.Spec.Uid, j.Spec.Gid = uint32(uid), uint32(gid)
	if uid != os.Getuid() {
		j.Spec.User = "xcetest1"
	}
	j.ExecHosts = []*api.HostSlots{{Host: "hostA", Slots: 2}, {Host: "hostB", Slots: 1}}
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	killAtEnd(t, w, rs, 1)
	sock := filepath.Join(w.JobDir(1, 0), TaskSocketName)
	c := taskClient(t, sock, uid)
	noEntry := t.TempDir()
	os.Chmod(noEntry, 0o700) // root's: xcetest1 cannot work there
	env := []string{"PATH=/usr/bin:/bin", "LSB_JOBID=1", "LSF_PM_TASKID=99"}

	// Words are joined, as rsh joins them, for /bin/sh -c.
	cmd := []string{"echo", "task", "$LSF_PM_TASKID", "$(id -u)", "$LSB_JOBID;", "echo e >&2; exit $((LSF_PM_TASKID + 1))"}
	r := runLaunch(t, c, &rpc.TaskLaunch{Argv: cmd, Env: env, Cwd: dir}, 0)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.ids; len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("task ids %v, want [1 2 3]", got)
	}
	for _, id := range []int32{1, 2} {
		want := "task " + strconv.Itoa(int(id)) + " " + strconv.Itoa(uid) + " 1\n"
		if r.out[id] != want {
			t.Errorf("task %d wrote %q, want %q", id, r.out[id], want)
		}
		if x := r.exits[id]; x == nil || x.ExitCode != id+1 {
			t.Errorf("task %d ended %v, want exit code %d", id, x, id+1)
		}
	}
	if r.out[3] != "remote 3\n" || r.exits[3] == nil || r.exits[3].ExitCode != 0 {
		t.Errorf("the remote task: %q %v", r.out[3], r.exits[3])
	}
	if r.stderr != "e\ne\n" {
		t.Errorf("stderr %q, want two lines e", r.stderr)
	}
	relay.mu.Lock()
	if len(relay.starts) != 1 || relay.starts[0].Host != "hostB" || relay.starts[0].User != "" || relay.starts[0].Uid != 0 {
		t.Errorf("relayed %v, want one task for hostB without a user", relay.starts)
	}
	relay.mu.Unlock()

	// Named hosts; the working directory falls back when the user cannot
	// enter it.
	r = runLaunch(t, c, &rpc.TaskLaunch{Hosts: []string{"hostA"}, Argv: []string{"pwd"}, Env: env, Cwd: noEntry}, 0)
	if r.err != nil || len(r.ids) != 1 || r.ids[0] != 4 {
		t.Fatalf("launch on hostA: %v, ids %v", r.err, r.ids)
	}
	if uid != os.Getuid() && strings.TrimSpace(r.out[4]) == noEntry {
		t.Errorf("the task ran in %s, which its user cannot enter", noEntry)
	}

	r = runLaunch(t, c, &rpc.TaskLaunch{Hosts: []string{"hostA", "hostC"}, Argv: []string{"true"}, Env: env}, 0)
	if r.err == nil || !strings.Contains(r.err.Error(), "host <hostC> is not allocated to job <1>") {
		t.Errorf("a host outside the allocation: %v", r.err)
	}

	r = runLaunch(t, c, &rpc.TaskLaunch{Hosts: []string{"hostA"}, Argv: []string{"exec sleep 30"}, Env: env}, syscall.SIGTERM)
	if x := r.exits[5]; r.err != nil || x == nil || x.Signal != int32(syscall.SIGTERM) || x.ExitCode != 128+15 {
		t.Errorf("signalled task: %v %v", r.err, x)
	}

	// Another user's connection is closed at once.
	other := 0
	if uid == 0 {
		other = 65534
	}
	r = runLaunch(t, taskClient(t, sock, other), &rpc.TaskLaunch{Argv: []string{"true"}, Env: env}, 0)
	if r.err == nil {
		t.Errorf("uid %d used the task socket of a job of uid %d", other, uid)
	}

	// The job's end kills its tasks, here and (through the relay) there.
	done := make(chan launched, 1)
	go func() {
		done <- runLaunch(t, c, &rpc.TaskLaunch{Hosts: []string{"hostA", "hostA", "hostB"},
			Argv: []string{"sleep 300 & sleep 300"}, Env: env}, 0)
	}()
	time.Sleep(500 * time.Millisecond)
	w.Terminate(1, 0, api.TermReason_TERM_UNKNOWN)
	ev := rs.finished(t)
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the tasks outlived their job")
	}
	var codes []int
	for _, x := range r.exits {
		codes = append(codes, int(x.ExitCode))
	}
	sort.Ints(codes)
	// In a cgroup bkill's first signal (SIGINT) reaches the tasks too.
	killed := func(c int) bool { return c == 137 || w.cg != nil && c == 130 }
	if len(codes) != 3 || !killed(codes[1]) || !killed(codes[2]) {
		t.Errorf("tasks at the job's end: %v, want the two of hostA killed (137)", codes)
	}
	relay.mu.Lock()
	var relayed bool
	for _, s := range relay.signals {
		relayed = relayed || s.Host == "hostB" && s.TaskId == 0 && s.Signal == int32(syscall.SIGKILL)
	}
	relay.mu.Unlock()
	if !relayed {
		t.Error("the job's end sent no kill to hostB")
	}
	// Two remote tasks of 500 ms each.
	if ev.GetUsage().GetCpuTimeMs() < 1000 || ev.CpuTimeMs < 1000 {
		t.Errorf("the job's CPU time %d ms leaves out its tasks' (1000 ms)", ev.CpuTimeMs)
	}
	if _, err := os.Stat(sock); err == nil {
		// The socket file may stay until Remove; it must not answer.
		if _, err := dialAs(sock, uid); err == nil {
			t.Error("the task socket still answers after the job's end")
		}
	}
}

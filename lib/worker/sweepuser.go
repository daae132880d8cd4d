package worker

// Rootless podman's stores: a job whose user is not root runs podman
// rootless, and its container's record lives in that user's own store,
// which root's listing does not see. The worker notes each such user in
// RunDir/container-users (root's file, a uid a line) when their job
// starts here; the sweep at the worker's start lists and removes, as
// each noted user (their uid, gid, groups, home and runtime directory),
// the containers of this cluster and host that no job runs any more,
// with the same labels and timeouts as root's sweep (sweep.go), and
// forgets a user once their store holds none of this host's containers
// and no job of theirs runs here. A job's end removes its container from
// its user's store the same way when the shepherd could not.

import (
	"bufio"
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"xce/lib/atomicfile"
	"xce/lib/container"
)

// containerUsersName is the file in RunDir of the users whose rootless
// podman stores may hold this host's containers.
const containerUsersName = "container-users"

// containerUsersMu serializes the file's updates.
var containerUsersMu sync.Mutex

// runAs is whom a runtime's CLI runs as, with what environment (a
// rootless podman's user, or root with a job's runtime settings); nil
// is the worker itself, with its own.
type runAs struct {
	uid, gid int
	groups   []uint32
	env      []string
	user     string
}

// userRunAs is uid as a runAs, from the user database.
func userRunAs(uid int) (*runAs, error) {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return nil, err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, err
	}
	groups, err := supplementaryGroups(u.Username)
	if err != nil {
		slog.Warn("supplementary groups", "user", u.Username, "err", err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + u.HomeDir, "USER=" + u.Username, "LOGNAME=" + u.Username}
	if dir := filepath.Join("/run/user", strconv.Itoa(uid)); isDir(dir) {
		// Where rootless podman keeps its runtime state.
		env = append(env, "XDG_RUNTIME_DIR="+dir)
	}
	return &runAs{uid: uid, gid: gid, groups: groups, env: env, user: u.Username}, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// apply makes cmd run as a (nothing for root).
func (a *runAs) apply(cmd *exec.Cmd) {
	if a == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if a.uid != os.Geteuid() {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid), Groups: a.groups}
	}
	cmd.Env, cmd.Dir = a.env, "/"
}

func (a *runAs) name() string {
	if a == nil {
		return "root"
	}
	return a.user
}

// rootlessPodman says whether job p's container is in its user's own
// podman store.
func rootlessPodman(p *proc) bool {
	return p.ctr == container.Podman && p.uid > 0 && p.driver == nil
}

// containerOwner is whom the removal of p's container runs as: its user
// for a rootless podman, else root (nil).
func (w *Worker) containerOwner(p *proc) *runAs {
	if !rootlessPodman(p) {
		return nil
	}
	a, err := userRunAs(p.uid)
	if err != nil {
		slog.Warn("cannot remove a rootless container as its user", "job", p.id, "index", p.idx, "uid", p.uid, "err", err)
		return nil
	}
	return a
}

func (w *Worker) containerUsersFile() string {
	return filepath.Join(w.cfg.RunDir, containerUsersName)
}

// containerUsers reads the noted users.
func (w *Worker) containerUsers() []int {
	b, err := os.ReadFile(w.containerUsersFile())
	if err != nil {
		return nil
	}
	var uids []int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if uid, err := strconv.Atoi(string(bytes.TrimSpace(sc.Bytes()))); err == nil && uid > 0 && !slices.Contains(uids, uid) {
			uids = append(uids, uid)
		}
	}
	return uids
}

// setContainerUsers changes the noted users with change.
func (w *Worker) setContainerUsers(change func([]int) []int) {
	containerUsersMu.Lock()
	defer containerUsersMu.Unlock()
	old := w.containerUsers()
	uids := change(slices.Clone(old))
	if slices.Equal(old, uids) {
		return
	}
	var b bytes.Buffer
	for _, uid := range uids {
		b.WriteString(strconv.Itoa(uid) + "\n")
	}
	if err := atomicfile.Write(w.containerUsersFile(), b.Bytes(), 0o600, false); err != nil {
		slog.Warn("cannot note the users of rootless containers; a worker restart may leave theirs", "err", err)
	}
}

// noteContainerUser notes p's user when p's container is rootless.
func (w *Worker) noteContainerUser(p *proc) {
	if !rootlessPodman(p) {
		return
	}
	w.setContainerUsers(func(uids []int) []int {
		if !slices.Contains(uids, p.uid) {
			uids = append(uids, p.uid)
		}
		return uids
	})
}

// sweepUsers sweeps the noted users' podman stores.
func (w *Worker) sweepUsers() {
	var done []int
	for _, uid := range w.containerUsers() {
		a, err := userRunAs(uid)
		if err != nil {
			slog.Warn("cannot sweep a user's rootless containers", "uid", uid, "err", err)
			continue
		}
		listed, kept := w.sweepRuntime(container.Podman, a)
		if listed && kept == 0 && !w.runsJobOf(uid) {
			done = append(done, uid)
		}
	}
	if len(done) > 0 {
		w.setContainerUsers(func(uids []int) []int {
			return slices.DeleteFunc(uids, func(u int) bool { return slices.Contains(done, u) && !w.runsJobOf(u) })
		})
	}
}

// runsJobOf says whether a job of uid runs here.
func (w *Worker) runsJobOf(uid int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.jobs {
		if p.uid == uid {
			return true
		}
	}
	return false
}

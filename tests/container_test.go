package tests

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Containers through application profiles (issue 34), with podman from
// Debian's packages and two tiny images the test builds from a static
// busybox. Installing the packages (when root and they are missing) is
// done once per host; the images are built once into a cache directory
// under the system's temporary directory, which holds podman's storage
// for these tests.

// podmanImages are the test's images: each has /xce-marker holding its
// own name.
var podmanImages = []string{"localhost/xce-e2e-busybox:a", "localhost/xce-e2e-busybox:b"}

// podmanEnv is a podman set up as an administrator of a host with the
// hybrid cgroup layout must set it up (runc, cgroupfs, ulimits within
// the host's hard limits), with its storage in the test's cache: the
// environment that points podman at that configuration.
func podmanEnv(t testing.TB) []string {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		installPodman(t)
	}
	for _, p := range []string{"podman", "runc"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed: %v", p, err)
		}
	}
	cache := filepath.Join(os.TempDir(), "xce-e2e-podman")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	var nofile unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile)
	var nproc unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NPROC, &nproc)
	// Podman starts conmon, the container's parent, with at most 32768
	// processes; runc may not raise that.
	nproc.Cur, nproc.Max = min(nproc.Cur, 32768), min(nproc.Max, 32768)
	limit := func(l unix.Rlimit) string {
		if l.Max == unix.RLIM_INFINITY {
			return "-1:-1"
		}
		return fmt.Sprintf("%d:%d", min(l.Cur, l.Max), l.Max)
	}
	conf := fmt.Sprintf(`[containers]
netns = "host"
default_ulimits = ["nofile=%s", "nproc=%s"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = %q
`, limit(nofile), limit(nproc), filepath.Join(cache, "tmp"))
	storage := fmt.Sprintf(`[storage]
driver = "vfs"
graphroot = %q
runroot = %q
`, filepath.Join(cache, "storage"), filepath.Join(cache, "run"))
	confPath, storagePath := filepath.Join(cache, "containers.conf"), filepath.Join(cache, "storage.conf")
	for path, text := range map[string]string{confPath: conf, storagePath: storage} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"CONTAINERS_CONF=" + confPath, "CONTAINERS_STORAGE_CONF=" + storagePath}
	for _, img := range podmanImages {
		if podman(env, "image", "exists", img).code != 0 {
			buildImage(t, env, cache, img)
		}
	}
	return env
}

// installPodman installs podman, runc and a static busybox from the
// host's package registry: only as root, skipping the test when that
// cannot be done.
func installPodman(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("podman is not installed, and only root may install it")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("podman is not installed, and there is no apt-get to install it with")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "--no-install-recommends", "podman", "runc", "busybox-static")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("podman could not be installed (no package registry reachable?): %v\n%s", err, lastLines(string(out), 5))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// podman runs podman with env, bounded so that a hung podman fails the
// test instead of hanging it.
func podman(env []string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		errb.WriteString(err.Error())
	}
	return result{out.String(), errb.String(), code}
}

// buildImage imports a root file system of a static busybox, its
// applets linked in /bin, and /xce-marker naming the image.
func buildImage(t testing.TB, env []string, cache, name string) {
	t.Helper()
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skipf("no busybox to build the test image from: %v", err)
	}
	if out, err := exec.Command("file", "-L", busybox).Output(); err == nil && !bytes.Contains(out, []byte("statically linked")) &&
		!bytes.Contains(out, []byte("static-pie")) {
		t.Skipf("%s is not statically linked (install busybox-static)", busybox)
	}
	bin, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(n string) { tw.WriteHeader(&tar.Header{Name: n + "/", Typeflag: tar.TypeDir, Mode: 0o755}) }
	file := func(n string, mode int64, data []byte) {
		tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(data))})
		tw.Write(data)
	}
	for _, d := range []string{"bin", "tmp", "etc", "proc", "sys", "dev", "root"} {
		dir(d)
	}
	file("bin/busybox", 0o755, bin)
	for _, a := range []string{"sh", "cat", "echo", "id", "pwd", "sleep", "true", "false", "ls", "env"} {
		tw.WriteHeader(&tar.Header{Name: "bin/" + a, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777})
	}
	file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n"))
	file("etc/group", 0o644, []byte("root:x:0:\n"))
	file("xce-marker", 0o644, []byte(name+"\n"))
	tw.Close()
	tarball := filepath.Join(cache, "rootfs.tar")
	if err := os.WriteFile(tarball, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(tarball)
	if r := podman(env, "import", tarball, name); r.code != 0 {
		t.Skipf("podman cannot import an image here: %s", r.stderr)
	}
}

// containerConfig is the test cluster's xce.toml: profiles for each
// case.
func containerConfig(t *testing.T, script string) string {
	text := `
[cluster]
name = "ctr"

[apps.box]
container = "podman[image(` + podmanImages[0] + `)]"

[apps.choose]
container = "podman[image($LSB_CONTAINER_IMAGE)]"

[apps.scripted]
container = "podman[image(` + podmanImages[0] + `) options(--env XCE_OPT=plain @` + script + `)]"

[apps.missing]
container = "podman[image(localhost/xce-e2e-no-such-image:1) options(--pull=never)]"

[apps.typo]
container = "podmn[image(` + podmanImages[0] + `)]"
`
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestContainerPodman runs jobs of application profiles in podman
// containers: the job sees its image, runs as its user in its directory
// with its environment, writes its output where the user expects, ends
// with its own exit code; bstop, bresume and bkill reach it and bkill
// leaves no container; the job chooses its image with
// LSB_CONTAINER_IMAGE; an @script adds options; an image that does not
// exist ends the job EXIT with the runtime's reason; a malformed profile
// refuses the submission.
func TestContainerPodman(t *testing.T) {
	env := podmanEnv(t)
	scriptDir := t.TempDir()
	script := filepath.Join(scriptDir, "opts.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho --env XCE_FROM_SCRIPT=from-script-$LSB_JOBID\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newClusterEnv(t, env, "--config", containerConfig(t, script))
	bsub := func(args ...string) string {
		t.Helper()
		r := c.runWith(-1, env, "", "bsub", args...)
		m := submittedRE.FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil {
			t.Fatalf("bsub %q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return m[1]
	}
	containers := func() string {
		r := podman(env, "ps", "-a", "--filter", "label=xce.cluster=ctr", "--format", "{{.Names}}")
		if r.code != 0 {
			t.Fatalf("podman ps: %s", r.stderr)
		}
		return strings.TrimSpace(r.stdout)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(c.work, name))
		return string(b)
	}

	// The job in its image, as its user, in its directory, with its
	// environment and its exit code; output where -o says.
	id := bsub("-app", "box", "-o", "out1", `cat /xce-marker; echo "uid=$(id -u) gid=$(id -g)"; echo "pwd=$(pwd)"; echo "job=$LSB_JOBID"; exit 3`)
	c.waitState(id, "EXIT")
	out := read("out1")
	for _, want := range []string{podmanImages[0], fmt.Sprintf("uid=%d gid=%d", os.Getuid(), os.Getgid()), "pwd=" + c.work, "job=" + id,
		"Exited with exit code 3."} {
		if !strings.Contains(out, want) {
			t.Errorf("job %s: output lacks %q:\n%s", id, want, out)
		}
	}
	if code := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exit_code", id)); code != "3" {
		t.Errorf("job %s: exit code %q, want 3", id, code)
	}
	if l := c.must("", "bjobs", "-l", id); !strings.Contains(l, "container") || !strings.Contains(l, podmanImages[0]) {
		t.Errorf("bjobs -l does not show the container and image:\n%s", l)
	}

	// bstop, bresume and bkill reach it; no container is left.
	id = bsub("-app", "box", "-o", "out2", "echo started; sleep 300")
	c.waitState(id, "RUN")
	waitFor(t, "the job's container", func() bool { return strings.Contains(containers(), "xce-ctr-"+id) })
	// The container's own process is in a cgroup below the job's: bstop
	// freezes it (v1: its freezer sees its parent freezing).
	pid := strings.TrimSpace(podman(env, "inspect", "--format", "{{.State.Pid}}", "xce-ctr-"+id).stdout)
	if pid == "" || pid == "0" {
		t.Fatalf("podman inspect: no pid for the job's container")
	}
	freezing := func() string {
		b, _ := os.ReadFile("/proc/" + pid + "/cgroup")
		for _, line := range strings.Split(string(b), "\n") {
			if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && strings.Contains(","+parts[1]+",", ",freezer,") {
				if !strings.Contains(parts[2], "/job."+id+".0/") {
					t.Errorf("the container's process %s is not below the job's cgroup: %s", pid, parts[2])
				}
				f, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/freezer", parts[2], "freezer.parent_freezing"))
				return strings.TrimSpace(string(f))
			}
		}
		return "no v1 freezer"
	}
	if _, err := os.Stat("/sys/fs/cgroup/freezer/cgroup.procs"); err == nil && freezing() == "no v1 freezer" {
		t.Errorf("the container's process %s has no freezer cgroup", pid)
	}
	c.must("", "bstop", id)
	c.waitState(id, "USUSP")
	if f := freezing(); f != "1" && f != "no v1 freezer" {
		t.Errorf("bstop: the container's process is not frozen (parent_freezing %q)", f)
	}
	c.must("", "bresume", id)
	c.waitState(id, "RUN")
	if f := freezing(); f != "0" && f != "no v1 freezer" {
		t.Errorf("bresume: the container's process is still frozen (parent_freezing %q)", f)
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
	waitFor(t, "no container left after bkill", func() bool { return containers() == "" })

	// The job chooses its image.
	id = bsub("-app", "choose", "-o", "out3", "-env", "all, LSB_CONTAINER_IMAGE="+podmanImages[1], "cat /xce-marker")
	c.waitState(id, "DONE")
	if out := read("out3"); !strings.Contains(out, podmanImages[1]) {
		t.Errorf("LSB_CONTAINER_IMAGE: the job did not run in %s:\n%s", podmanImages[1], out)
	}
	r := c.runWith(-1, env, "", "bsub", "-app", "choose", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "the job sets no LSB_CONTAINER_IMAGE") || !strings.Contains(r.stderr, "Job not submitted") {
		t.Errorf("a job of $LSB_CONTAINER_IMAGE without one: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// An @script adds what it prints to the options.
	id = bsub("-app", "scripted", "-o", "out4", `echo "opt=$XCE_OPT script=$XCE_FROM_SCRIPT"`)
	c.waitState(id, "DONE")
	if out := read("out4"); !strings.Contains(out, "opt=plain script=from-script-"+id) {
		t.Errorf("@script: the options did not reach the container:\n%s", out)
	}

	// An image that does not exist: EXIT with the runtime's reason.
	id = bsub("-app", "missing", "-o", "out5", "true")
	c.waitState(id, "EXIT")
	if out := read("out5"); !strings.Contains(out, "xce-e2e-no-such-image") || !strings.Contains(out, "exit code 125") {
		t.Errorf("a missing image: the output does not say why:\n%s", out)
	}

	// A malformed profile: refused at submission, LSF-style.
	r = c.runWith(-1, env, "", "bsub", "-app", "typo", "true")
	if r.code == 0 || !strings.Contains(r.stderr, `unknown container runtime "podmn"`) || !strings.Contains(r.stderr, "Job not submitted") {
		t.Errorf("a profile with an unknown runtime: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if left := containers(); left != "" {
		t.Errorf("containers left behind: %s", left)
	}
}

// TestContainerShepherdKilled: a job whose shepherd is killed (kill -9)
// leaves no container: the worker removes it by name.
func TestContainerShepherdKilled(t *testing.T) {
	env := podmanEnv(t)
	c := newClusterEnv(t, env, "--config", containerConfig(t, "/bin/true"))
	r := c.runWith(-1, env, "", "bsub", "-app", "box", "-o", "out", "sleep 300")
	m := submittedRE.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("bsub: %s%s", r.stdout, r.stderr)
	}
	id := m[1]
	c.waitState(id, "RUN")
	name := "xce-ctr-" + id
	waitFor(t, "the job's container", func() bool {
		return strings.Contains(podman(env, "ps", "--format", "{{.Names}}").stdout, name)
	})
	// The shepherd is the parent of the job's top process, podman run.
	var ppid int
	waitFor(t, "the job's podman run", func() bool {
		ppid = parentOfCmdline(t, "\x00--name\x00"+name+"\x00")
		return ppid > 1
	})
	if err := syscall.Kill(ppid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the shepherd %d: %v", ppid, err)
	}
	c.waitState(id, "EXIT")
	for end := time.Now().Add(30 * time.Second); strings.Contains(podman(env, "ps", "-a", "--format", "{{.Names}}").stdout, name); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("container %s left after the shepherd was killed:\n%s\nxced log:\n%s", name, podman(env, "ps", "-a").stdout, c.log)
		}
	}
}

// parentOfCmdline is the parent pid of the process whose command line
// (NUL-separated) holds part; 0 when there is none.
func parentOfCmdline(t *testing.T, part string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), part) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		var ppid int
		fmt.Sscan(f[1], &ppid)
		return ppid
	}
	return 0
}

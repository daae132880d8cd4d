package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestContainerBattach: the job's owner runs a shell in the job's
// container with battach (it reads a file only the image has); another
// user is refused in LSF's words. A restarted xced removes a container
// no job runs in and keeps the running job's. blaunch's tasks of a
// container job run in its container.
func TestContainerBattach(t *testing.T) {
	env := podmanEnv(t)
	// par's container sees the system's temporary directory, which holds
	// the test's binaries (blaunch) and the worker's task socket.
	tmp := os.TempDir()
	conf := filepath.Join(t.TempDir(), "xce.toml")
	text := `
[cluster]
name = "ctr"

[apps.box]
container = "podman[image(` + podmanImages[0] + `)]"

[apps.par]
container = "podman[image(` + podmanImages[0] + `) options(-v ` + tmp + `:` + tmp + `)]"
`
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClusterEnv(t, env, "--config", conf)
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
	r = c.runWith(-1, env, "cat /xce-marker; id -u; exit 7\n", "battach", id)
	if r.code != 7 || !strings.Contains(r.stdout, podmanImages[0]) {
		t.Errorf("battach %s: exit %d, want 7 and the image's marker\nstdout: %s\nstderr: %s", id, r.code, r.stdout, r.stderr)
	}
	r = c.runWith(-1, env, "", "battach", "-L", "/bin/pwd", id)
	if r.code != 0 || strings.TrimSpace(r.stdout) != c.work {
		t.Errorf("battach -L /bin/pwd: exit %d, want the job's directory %s\nstdout: %s\nstderr: %s", r.code, c.work, r.stdout, r.stderr)
	}
	// With a terminal (script(1) gives battach one): the shell in the
	// container gets one too, and the session streams both ways.
	if _, err := exec.LookPath("script"); err == nil {
		cmd := exec.Command("script", "-qec", filepath.Join(binDir, "battach")+" "+id, "/dev/null")
		cmd.Dir = c.work
		cmd.Env = append(append(os.Environ(), "XCE_DIR="+filepath.Join(c.dir, "state"), "PATH="+binDir+":"+os.Getenv("PATH")), env...)
		cmd.Stdin = strings.NewReader("ls -l /proc/self/fd/0; cat /xce-marker; exit 3\n")
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != 3 || !strings.Contains(string(out), podmanImages[0]) || !strings.Contains(string(out), "/dev/pts/") {
			t.Errorf("battach on a terminal: exit %d (%v), want 3, a terminal and the image's marker\n%q", code, err, out)
		}
	}
	const nobody = 65534
	os.Chmod(c.dir, 0o755) // nobody runs battach in the work directory
	r = c.runWith(nobody, nil, "cat /xce-marker\n", "battach", id)
	if r.code != 255 || r.stderr != "Job <"+id+">: User permission denied\n" || r.stdout != "" {
		t.Errorf("battach by another user: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r := c.run("", "battach", "-L", "sh", id); r.code != 255 || !strings.Contains(r.stderr, "absolute path") {
		t.Errorf("battach -L sh: exit %d\n%s", r.code, r.stderr)
	}

	// blaunch's tasks run in the job's container: they see its image.
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	r = c.runWith(-1, env, "", "bsub", "-app", "par", "-o", "par.out",
		filepath.Join(binDir, "blaunch")+" -z '"+host+" "+host+"' 'echo task=$LSF_PM_TASKID $(cat /xce-marker)'")
	m = submittedRE.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("bsub: %s%s", r.stdout, r.stderr)
	}
	c.waitState(m[1], "DONE", "EXIT")
	out, _ := os.ReadFile(filepath.Join(c.work, "par.out"))
	for _, want := range []string{"task=1 " + podmanImages[0], "task=2 " + podmanImages[0], "Successfully completed."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("blaunch in a container job: the output lacks %q:\n%s", want, out)
		}
	}

	// A restarted worker removes a container of its cluster and host
	// that no job runs in (left by a job that ended while it was down),
	// and keeps the running job's, which battach still reaches.
	orphan := "xce-ctr-99999"
	if r := podman(env, "run", "-d", "--name", orphan, "--label", "xce.cluster=ctr", "--label", "xce.host="+host,
		"--label", "xce.job=99999", podmanImages[0], "sleep", "300"); r.code != 0 {
		t.Fatalf("podman run: %s", r.stderr)
	}
	t.Cleanup(func() { podman(env, "rm", "-f", "--ignore", "--time", "0", orphan) })
	c.stop()
	c.start()
	waitFor(t, "the left container removed", func() bool {
		return !strings.Contains(podman(env, "ps", "-a", "--format", "{{.Names}}").stdout, orphan)
	})
	if !strings.Contains(podman(env, "ps", "--format", "{{.Names}}").stdout, name) {
		t.Errorf("the running job's container %s was removed at the restart", name)
	}
	r = c.runWith(-1, env, "cat /xce-marker\n", "battach", id)
	if r.code != 0 || !strings.Contains(r.stdout, podmanImages[0]) {
		t.Errorf("battach after the restart: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	c.must("", "bkill", id)
	c.waitState(id, "EXIT")
}

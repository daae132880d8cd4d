package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContainerExecDriver: a docker profile's exec_driver starter is the
// job's process, with the docker command line XCE builds as its
// arguments; its output and exit code are the job's. With a context user
// other than the job's, the worker runs it as that user. (The starters
// stand in for docker-starter: they run no runtime.)
func TestContainerExecDriver(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the driver as another user")
	}
	base := t.TempDir()
	os.Chmod(filepath.Dir(base), 0o755)
	os.Chmod(base, 0o755)
	starter := filepath.Join(base, "starter")
	script := "#!/bin/sh\necho \"starter $(id -u) $LSB_CONTAINER_NAME $LSB_CONTAINER_IMAGE $1 $2\"; exit 4\n"
	if err := os.WriteFile(starter, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "xce.toml")
	text := `
[cluster]
name = "drv"

[apps.drv]
container = "docker[image(img:1)]"
exec_driver = "starter[` + starter + `]"

[apps.drvu]
container = "docker[image(img:1)]"
exec_driver = "context[user(nobody)] starter[` + starter + `]"
`
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClusterEnv(t, nil, "--config", conf)
	ids := map[string]string{}
	for _, app := range []string{"drv", "drvu"} {
		r := c.run("", "bsub", "-app", app, "-o", app+".out", "echo never")
		m := submittedRE.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("bsub -app %s: %s%s", app, r.stdout, r.stderr)
		}
		ids[app] = m[1]
	}
	for app, uid := range map[string]string{"drv": "0", "drvu": "65534"} {
		id := ids[app]
		c.waitState(id, "EXIT")
		out, _ := os.ReadFile(filepath.Join(c.work, app+".out"))
		want := "starter " + uid + " xce-drv-" + id + " img:1 docker run\n"
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "Exited with exit code 4.") {
			t.Errorf("-app %s: the output lacks %q and exit code 4:\n%s", app, want, out)
		}
	}
}

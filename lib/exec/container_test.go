package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xce/lib/api"
)

// fakeRuntime is a podman that logs its arguments and, for run, runs
// the command after the image on the host (the container's view is
// lib/container's goldens' and the e2e tests' to check).
const fakeRuntime = `#!/bin/sh
echo "$*" >> "$FAKE_LOG"
case "$1" in
run)
	while [ $# -gt 0 ] && [ "$1" != "$FAKE_IMAGE" ]; do shift; done
	[ $# -gt 0 ] || { echo "Error: image not known" >&2; exit 125; }
	shift
	exec "$@" ;;
rm)
	exit 0 ;;
esac
exit 125
`

// containerLaunch is a launch of command in a profile's podman container,
// with a fake podman first in its PATH that logs to the returned file.
func containerLaunch(t *testing.T, command, value string, env ...string) (*api.Launch, string) {
	l := newLaunch(t, command)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "podman"), []byte(fakeRuntime), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "log")
	l.Job.Spec.Env = append(l.Job.Spec.Env, "PATH="+bin+":"+os.Getenv("PATH"), "FAKE_LOG="+log)
	l.Job.Spec.Env = append(l.Job.Spec.Env, env...)
	l.Job.Spec.OutputFile = filepath.Join(dirOf(l), "out")
	l.Job.Effective.Container = value
	return l, log
}

func TestContainerJob(t *testing.T) {
	script := filepath.Join(t.TempDir(), "opts.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho --env FROM_SCRIPT=$LSB_JOBID\n"), 0o755)
	l, log := containerLaunch(t, "echo inside $FOO; exit 7",
		"podman[image($LSB_CONTAINER_IMAGE) options(--net=host @"+script+")]",
		"LSB_CONTAINER_IMAGE=img:1", "FAKE_IMAGE=img:1")
	l.Job.Effective.FileLimitKb = 1024
	ev := runJob(t, l)
	if ev.ExitStatus != 7 || ev.State != api.JobState_EXIT {
		t.Errorf("exit %d state %v, want the job's own 7", ev.ExitStatus, ev.State)
	}
	out, _ := os.ReadFile(filepath.Join(dirOf(l), "out"))
	if !strings.Contains(string(out), "inside bar baz") {
		t.Errorf("the job's output:\n%s", out)
	}
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "run --rm ") || !strings.HasPrefix(lines[1], "rm -f --ignore --time 0 xce-cluster1-748") {
		t.Fatalf("podman was run as:\n%s", b)
	}
	run := lines[0]
	for _, want := range []string{"--name xce-cluster1-748 ", "--label xce.job=748 ", "-w " + dirOf(l) + " ",
		"-v " + dirOf(l) + ":" + dirOf(l) + " ", "-v " + filepath.Dir(l.JobFile) + ":" + filepath.Dir(l.JobFile) + " ",
		"--env FOO ", "--env LSB_JOBID ", "--ulimit fsize=1048576:", "--net=host --env FROM_SCRIPT=748 img:1 /bin/sh " + l.JobFile} {
		if !strings.Contains(run+" ", want) {
			t.Errorf("podman run lacks %q:\n%s", want, run)
		}
	}
	if strings.Contains(run, "bar baz") {
		t.Errorf("a variable's value is on podman's command line:\n%s", run)
	}
}

func TestContainerJobFails(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		env         []string
		exit        int32
		detail      string
	}{
		{"no runtime", "enroot[image(x)]", nil, exitNotFound, "the container runtime enroot is not installed on this host"},
		{"no image chosen", "podman[image($LSB_CONTAINER_IMAGE)]", nil, exitSetup, "the job sets no LSB_CONTAINER_IMAGE"},
		{"the runtime fails", "podman[image(other)]", []string{"FAKE_IMAGE=img"}, exitRuntime, "could not run the container of image other"},
		{"a script fails", "podman[image(x) options(@/nonexistent/opts.sh)]", nil, exitSetup, "options script /nonexistent/opts.sh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The fake exits 125 for an image other than FAKE_IMAGE.
			l, _ := containerLaunch(t, "true", tc.value, tc.env...)
			ev := runJob(t, l)
			if ev.ExitStatus != tc.exit || ev.State != api.JobState_EXIT || !strings.Contains(ev.Detail, tc.detail) {
				t.Errorf("exit %d state %v detail %q; want exit %d with %q", ev.ExitStatus, ev.State, ev.Detail, tc.exit, tc.detail)
			}
		})
	}
}

// TestContainerCgroupParent: the container's --cgroup-parent is the
// worker's word where the shepherd is in its job's cgroup, whose path
// the shepherd finds in the v1 freezer's line (v1, hybrid) or the
// unified line (v2); none where it is in no job cgroup.
func TestContainerCgroupParent(t *testing.T) {
	for _, c := range []struct{ name, procs, want string }{
		{"v2", "0::/xce-p/xce/c/job.7.2\n", "/xce-p/xce/c/job.7.2"},
		{"hybrid", "12:freezer:/xce-p/xce/c/job.7.2\n4:memory:/xce-p/xce/c/job.7.2\n0::/user.slice/session-1.scope\n", "/xce-p/xce/c/job.7.2"},
		{"v1 cgroup v1 controllers joined", "3:cpuacct,freezer:/q/xce/c/job.7.2\n", "/q/xce/c/job.7.2"},
		{"none", "12:freezer:/\n0::/user.slice\n", ""},
		{"another job's", "0::/xce-p/xce/c/job.7.3\n", ""},
	} {
		own := jobCgroupIn(strings.NewReader(c.procs), 7, 2)
		if own != c.want {
			t.Errorf("%s: own job cgroup %q, want %q", c.name, own, c.want)
		}
		if got := runtimeCgroupParent(own, "/from/worker"); (got == "/from/worker") != (c.want != "") {
			t.Errorf("%s: --cgroup-parent %q with the worker's word", c.name, got)
		}
		if got := runtimeCgroupParent(own, ""); got != c.want {
			t.Errorf("%s: --cgroup-parent %q without the worker's word, want %q", c.name, got, c.want)
		}
	}
}

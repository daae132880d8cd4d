package container

import (
	"strings"
	"testing"
)

// TestExecArgs: battach's and blaunch's command lines into a job's
// container name it by the job, as Name does; runtimes without named
// containers have none.
func TestExecArgs(t *testing.T) {
	for _, c := range []struct {
		got  []string
		want string
	}{
		{ExecArgs(Podman, "c1", 12, 0, 1000, 100, []string{"/bin/sh"}), "podman exec -i --user 1000:100 xce-c1-12 /bin/sh"},
		{ExecArgs(Docker, "my cluster", 12, 3, 0, 0, []string{"/bin/bash"}), "docker exec -i --user 0:0 xce-my_cluster-12-3 /bin/bash"},
		{TaskArgs(Podman, "c1", 12, 0, 1000, 100, "/home/u/run", []string{"/bin/sh", "-c", "hostname"}),
			"podman exec -i --user 1000:100 --env LSF_PM_TASKID -w /home/u/run xce-c1-12 /bin/sh -c hostname"},
		{ExecTTYArgs(Podman, "c1", 12, 0, 1000, 100, []string{"/bin/sh"}), "podman exec -i -t --user 1000:100 xce-c1-12 /bin/sh"},
		{TaskArgs(NvidiaDocker, "c1", 7, 2, 5, 5, "", []string{"a.out"}), "nvidia-docker exec -i --user 5:5 --env LSF_PM_TASKID xce-c1-7-2 a.out"},
	} {
		if g := strings.Join(c.got, " "); g != c.want {
			t.Errorf("got  %s\nwant %s", g, c.want)
		}
	}
	if ExecArgs(Apptainer, "c", 1, 0, 0, 0, []string{"sh"}) != nil || TaskArgs(Enroot, "c", 1, 0, 0, 0, "/", []string{"sh"}) != nil {
		t.Error("apptainer and enroot have no container to exec into")
	}
}

package container

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// job is a job of user 1000 (groups 1000, 27 and 100) in /home/ann/run,
// job file in /var/spool/xce/ann.
func job() *Job {
	return &Job{
		Cluster: "prod cl", Host: "node1", JobID: 42, Index: 3, UID: 1000, GID: 1000, Groups: []int{1000, 27, 100},
		Cwd: "/home/ann/run", Binds: []string{"/home/ann/.lsbatch", "/home/ann/run"},
		Env: []string{"PATH=/usr/bin", "HOME=/home/ann", "LSB_JOBID=42", "LSB_JOBINDEX=3", "SECRET=s3cret",
			"CUDA_VISIBLE_DEVICES=2,5", "CUDA_VISIBLE_DEVICES0=5", "HOSTNAME=node1", "LSB_JOBID=42"},
		CgroupParent: "/xce/prod/job.42.3",
		Image:        "busybox:1.36",
		Options:      []string{"--net=host"},
		Command:      []string{"/bin/sh", "/home/ann/.lsbatch/1700000000.42.3"},
	}
}

// TestBuild compares each runtime's command line with its golden file
// (testdata/NAME.golden, one argument a line).
func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		rt   Runtime
		edit func(*Job)
	}{
		{"podman", Podman, nil},
		{"podman-gpu-ulimit-stdin", Podman, func(j *Job) {
			j.GPUs = []int{2, 5}
			j.Ulimits = []Ulimit{{Name: "fsize", Soft: 1 << 20, Hard: 1 << 30}}
			j.Stdin = true
		}},
		{"podman-rootless", Podman, func(j *Job) { j.Rootless = true }},
		{"podman-root", Podman, func(j *Job) { j.UID, j.GID, j.Groups, j.Index = 0, 0, []int{0}, 0 }},
		{"docker-gpu", Docker, func(j *Job) { j.GPUs = []int{2, 5} }},
		{"nvidia-docker-gpu", NvidiaDocker, func(j *Job) { j.GPUs = []int{2, 5} }},
		{"apptainer-gpu", Apptainer, func(j *Job) { j.GPUs = []int{2, 5}; j.Image = "/images/ubuntu.sif" }},
		{"singularity", Singularity, func(j *Job) { j.Image = "/images/ubuntu.sif"; j.Options = nil }},
		{"enroot-gpu", Enroot, func(j *Job) { j.GPUs = []int{2, 5}; j.Image = "/sqsh/pytorch.sqsh"; j.Options = []string{"--rw"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := job()
			if tc.edit != nil {
				tc.edit(j)
			}
			argv, err := Build(&Spec{Runtime: tc.rt}, j)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(argv, "\n") + "\n"
			if strings.Contains(got, "s3cret") {
				t.Errorf("a variable's value is on the command line:\n%s", got)
			}
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("command line of %s differs from %s:\n%s", tc.name, path, got)
			}
		})
	}
}

func TestBuildMissing(t *testing.T) {
	for name, edit := range map[string]func(*Job){
		"no image":             func(j *Job) { j.Image = "" },
		"no command":           func(j *Job) { j.Command = nil },
		"no working directory": func(j *Job) { j.Cwd = "" },
	} {
		j := job()
		edit(j)
		if _, err := Build(&Spec{Runtime: Podman}, j); err == nil || err.Error() != name {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		cluster string
		id      int64
		idx     int32
		name    string
	}{
		{"xce", 7, 0, "xce-xce-7"},
		{"xce", 7, 12, "xce-xce-7-12"},
		{"my cluster/1", 123456, 1, "xce-my_cluster_1-123456-1"},
	} {
		if got := Name(tc.cluster, tc.id, tc.idx); got != tc.name {
			t.Errorf("Name(%q, %d, %d) = %q, want %q", tc.cluster, tc.id, tc.idx, got, tc.name)
		}
		id, idx, ok := ParseName(tc.cluster, tc.name)
		if !ok || id != tc.id || idx != tc.idx {
			t.Errorf("ParseName(%q) = %d, %d, %v", tc.name, id, idx, ok)
		}
	}
	for _, bad := range []string{"xce-other-7", "xce-xce-", "xce-xce-x", "xce-xce-7-0", "xce-xce-7-a", "web", "xce-xce-7-t2"} {
		if _, _, ok := ParseName("xce", bad); ok {
			t.Errorf("ParseName(%q) took another's name", bad)
		}
	}
	// A task's container on another host; a cluster whose name holds -t.
	for _, tc := range []struct {
		cluster string
		idx     int32
		task    int32
	}{{"xce", 0, 3}, {"my-t1", 4, 2}, {"my-t1", 0, 0}} {
		name := Name(tc.cluster, 9, tc.idx)
		if tc.task > 0 {
			name = TaskName(tc.cluster, 9, tc.idx, tc.task)
		}
		id, idx, task, ok := ParseTaskName(tc.cluster, name)
		if !ok || id != 9 || idx != tc.idx || task != tc.task {
			t.Errorf("ParseTaskName(%q) = %d, %d, %d, %v", name, id, idx, task, ok)
		}
	}
	if got := TaskName("xce", 9, 2, 5); got != "xce-xce-9-2-t5" {
		t.Errorf("TaskName = %q", got)
	}
}

func TestRemoveAndList(t *testing.T) {
	if got := RemoveArgs(Podman, "xce", 7, 2); !reflect.DeepEqual(got, []string{"podman", "rm", "-f", "--ignore", "--time", "0", "xce-xce-7-2"}) {
		t.Errorf("RemoveArgs(podman) = %q", got)
	}
	if got := RemoveArgs(Docker, "xce", 7, 0); !reflect.DeepEqual(got, []string{"docker", "rm", "-f", "xce-xce-7"}) {
		t.Errorf("RemoveArgs(docker) = %q", got)
	}
	if RemoveArgs(Apptainer, "xce", 7, 0) != nil || ListArgs(Enroot, "xce", "h") != nil {
		t.Errorf("apptainer and enroot have no containers to remove")
	}
	want := []string{"podman", "ps", "-a", "--filter", "label=xce.cluster=xce", "--filter", "label=xce.host=h1", "--format", "{{.Names}}"}
	if got := ListArgs(Podman, "xce", "h1"); !reflect.DeepEqual(got, want) {
		t.Errorf("ListArgs = %q", got)
	}
}

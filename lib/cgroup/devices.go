package cgroup

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Device is a device node the devices controller names by type and
// numbers.
type Device struct {
	Type         byte // 'c' or 'b'
	Major, Minor int64
	Path         string // for messages
}

func (d Device) rule() specs.LinuxDeviceCgroup {
	ma, mi := d.Major, d.Minor
	return specs.LinuxDeviceCgroup{Allow: false, Type: string(d.Type), Major: &ma, Minor: &mi, Access: "rwm"}
}

// gpuNode is an NVIDIA GPU's own device node (nvidiactl, nvidia-uvm and
// the like are shared by every GPU job and stay allowed).
var gpuNode = regexp.MustCompile(`^nvidia([0-9]+)$`)

// GPUDeviceRules returns the GPU devices in dir (/dev on a real host) that
// a job given the GPUs of indices gpus may not open: every nvidiaN not
// among them. The job's devices cgroup denies exactly those; everything
// else stays as the host allows it (the job is a batch job, not a
// container: its other devices are the host's).
func GPUDeviceRules(dir string, gpus []int) []Device {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return []Device{}
	}
	deny := []Device{}
	for _, e := range ents {
		m := gpuNode.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		idx, _ := strconv.Atoi(m[1])
		if slices.Contains(gpus, idx) {
			continue
		}
		var st unix.Stat_t
		p := filepath.Join(dir, e.Name())
		if unix.Stat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
			continue
		}
		deny = append(deny, Device{Type: 'c', Major: int64(unix.Major(st.Rdev)), Minor: int64(unix.Minor(st.Rdev)), Path: p})
	}
	return deny
}

// cpuList is a cpuset list ("0,2,5").
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

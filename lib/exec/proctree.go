package exec

// The shepherd's descendants, found from the parent side.

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// descendants lists every descendant of process root, read from the
// kernel's children lists (/proc/<pid>/task/<tid>/children, one per thread,
// CONFIG_PROC_CHILDREN): a walk of the job's own tree, a few reads, where
// a scan of every process on the host (Pids) costs three system calls per
// process. ok is false when the kernel keeps no such lists; the caller
// then scans /proc. A list is a snapshot: a process forked while it is
// read may be missing, as it may from a scan of /proc; the callers look
// again (killTree until a round finds nothing, the sampler every sample).
func descendants(root int) (pids []int32, ok bool) {
	buf := make([]byte, 4096)
	queue := []int32{int32(root)}
	for i := 0; i < len(queue); i++ {
		found, listed := children(int(queue[i]), buf)
		if i == 0 && !listed {
			return nil, false
		}
		for _, c := range found {
			pids = append(pids, c)
			queue = append(queue, c)
		}
		if len(queue) > 1<<16 { // /proc holds no loop; stay bounded anyway
			break
		}
	}
	return pids, true
}

// children lists the children of every thread of process pid; listed is
// false when no thread's list could be read (the process is gone, or the
// kernel has no children lists).
func children(pid int, buf []byte) (out []int32, listed bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	for _, tid := range tids {
		// Through /proc/<tid>, not <dir>/<tid>: entries made under the
		// process's own task directory must all be dropped when it is
		// reaped, which cost its parent (the worker, for the shepherd)
		// several milliseconds; a thread's own directory goes with it.
		fd, err := syscall.Open("/proc/"+tid+"/task/"+tid+"/children", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		listed = true
		var data []byte
		for {
			n, err := syscall.Read(fd, buf)
			if n > 0 {
				data = append(data, buf[:n]...)
			}
			if err != nil || n <= 0 {
				break
			}
		}
		syscall.Close(fd)
		for _, f := range bytes.Fields(data) {
			if p, err := strconv.Atoi(string(f)); err == nil && p > 0 {
				out = append(out, int32(p))
			}
		}
	}
	return out, listed
}

package cgroup

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func pidfdOpen(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

func pidfdSendSignal(fd int, sig syscall.Signal) error {
	return unix.PidfdSendSignal(fd, unix.Signal(sig), nil, 0)
}

package config

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// MaxFileSize bounds a configuration file (xce.toml, and each LSF file
// import-lsf reads): real ones are kilobytes, and reading is bounded so
// that a mistaken path (/dev/zero, a log) fails at once.
const MaxFileSize = 16 << 20

// ReadFile reads a configuration file that must be a regular file of at
// most MaxFileSize bytes. It opens without blocking, so a FIFO or a
// device is refused rather than waited on, and as root it does not
// follow a symbolic link in the last element of the path: a link a user
// could point elsewhere is not read by root.
func ReadFile(path string) ([]byte, error) {
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	if os.Geteuid() == 0 {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(path, flags, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, fmt.Errorf("%s: is a symbolic link; name the file itself", path)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, fileKind(st.Mode()))
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: %d bytes is too large for a configuration file (at most %d)", path, st.Size(), MaxFileSize)
	}
	// The file may grow while it is read: read one byte past the cap.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: too large for a configuration file (at most %d bytes)", path, MaxFileSize)
	}
	return data, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

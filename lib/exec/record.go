package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The worker's records: files root creates in the job's root-owned
// directory and hands the shepherd open for writing, on these descriptors.
// The shepherd writes the job's end (an api.Event) to ResultFD and its
// latest usage sample (an api.ResourceUsage) to UsageFD. They are the only
// end and usage the worker believes: the job's user can rewrite every file
// in the job's own directory, but cannot reach these descriptors, since the
// shepherd makes itself non-dumpable (no ptrace, no /proc/PID/fd for the
// user) and keeps them from the job (close-on-exec).
const (
	ResultFD = 4
	UsageFD  = 5
)

// recordMagic starts every record; a header of magic, length and CRC-32
// makes a record cut short (a shepherd killed while writing it) or read
// while being rewritten (usage) fail to parse instead of being misread.
const recordMagic = "XCE1"

const recordHeader = len(recordMagic) + 8

// MaxRecord caps a record: an end or a usage sample is a few KB even for
// a job on thousands of hosts.
const MaxRecord = 256 << 10

// WriteRecord replaces the record in f with b, in one write at offset 0.
func WriteRecord(f *os.File, b []byte) error {
	if len(b) > MaxRecord-recordHeader {
		return fmt.Errorf("record of %d bytes: more than %d", len(b), MaxRecord-recordHeader)
	}
	buf := make([]byte, recordHeader, recordHeader+len(b))
	copy(buf, recordMagic)
	binary.BigEndian.PutUint32(buf[4:], uint32(len(b)))
	binary.BigEndian.PutUint32(buf[8:], crc32.ChecksumIEEE(b))
	buf = append(buf, b...)
	if _, err := f.WriteAt(buf, 0); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	if err := f.Truncate(int64(len(buf))); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	return nil
}

// ErrNoRecord: the file holds no record (nothing was written yet).
var ErrNoRecord = errors.New("no record")

// ParseRecord returns the payload of a record WriteRecord wrote.
func ParseRecord(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, ErrNoRecord
	}
	if len(b) < recordHeader || string(b[:4]) != recordMagic {
		return nil, errors.New("not a record")
	}
	n := binary.BigEndian.Uint32(b[4:])
	if uint64(n) != uint64(len(b)-recordHeader) {
		return nil, fmt.Errorf("record of %d bytes holds %d", n, len(b)-recordHeader)
	}
	p := b[recordHeader:]
	if crc32.ChecksumIEEE(p) != binary.BigEndian.Uint32(b[8:]) {
		return nil, errors.New("record damaged (checksum)")
	}
	return p, nil
}

// recordFile returns descriptor fd when it is one of the worker's records:
// a regular file open for writing. It is made close-on-exec so the job
// does not inherit it. Anything else there is left alone (nil).
func recordFile(fd int, name string) *os.File {
	if !writableRegular(fd) {
		return nil
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name)
}

// writableRegular reports whether descriptor fd is a regular file open for
// writing: what a record must be.
func writableRegular(fd int) bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return false
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_ACCMODE != unix.O_RDONLY
}

package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A full disk. Badger writes its memtable log (.mem) through a shared
// mapping of a file it extends without allocating it; a write into that
// mapping on a full filesystem is a SIGBUS, which kills xced. So:
//
//   - each .mem file is allocated whole (fallocate) as soon as it appears:
//     writes into it then never need a block the disk may not have;
//   - CheckSpace tells the controller, before it accepts a submission,
//     whether the free space is above a floor sized from what Badger
//     writes next (a new memtable log, the flush of a full memtable, a
//     compaction), so that records of the jobs already accepted (their
//     starts and ends) can still be written;
//   - below the floor at start-up, OpenLowSpace opens the store
//     read-only in all but the records of the jobs already accepted:
//     Badger runs without compactions (a compaction writes its tables
//     through shared mappings too, and would fill the disk and die of
//     SIGBUS), no memtable log is preallocated, CheckSpace refuses every
//     submission until xced is restarted with the space freed (it
//     does so by itself: daemon/lowspace.go), and the
//     open itself is refused only when the memtables it must replay
//     would not fit.

// DefaultMinFree is the free space a store keeps in reserve: the next
// memtable log (Badger maps twice the memtable size), a memtable flushed to
// a table, and room for a compaction's output.
const DefaultMinFree = 2*memTableSize + memTableSize + 4*baseTableSize

func (s *Store) defaultMinFree() uint64 { return DefaultMinFree }

// SetMinFree changes the free-space floor (bytes; 0 keeps the default).
func (s *Store) SetMinFree(b uint64) {
	if b > 0 {
		s.minFree = b
		s.roomy.Store(0)
	}
}

// SpaceError says that the disk holding the store is below its floor;
// ReadOnly, that the store was opened below it (OpenLowSpace) and stays
// read-only until xced is restarted (it restarts by itself once the space
// is back: daemon/lowspace.go).
type SpaceError struct {
	Dir        string
	Free, Need uint64
	ReadOnly   bool
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("the disk holding %s is full (%d MB free, %d MB needed)", e.Dir, e.Free>>20, e.Need>>20)
}

// OpenLowSpace opens the store in dir as Open does, in the read-only
// mode for a disk below the floor (see the top of this file).
func OpenLowSpace(dir string) (*Store, error) { return open(dir, true, false) }

// LowSpace reports whether the store was opened by OpenLowSpace.
func (s *Store) LowSpace() bool { return s.lowSpace }

// replayFits refuses a low-space open when the memtables Badger replays
// (and writes out as tables at once) would not fit in the free space.
func replayFits(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // a new store: nothing to replay
	}
	var need uint64
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".mem") {
			continue
		}
		entries, _, _ := readLog(filepath.Join(dir, e.Name()))
		if n := len(entries); n > 0 {
			need += uint64(entries[n-1].offset + entries[n-1].size)
		}
	}
	need += need/4 + 1<<20 // a table's index and blocks' overhead
	free, err := FreeSpace(dir)
	if err != nil {
		return err
	}
	if free < need {
		return &SpaceError{Dir: dir, Free: free, Need: need}
	}
	return nil
}

// FreeSpace returns the bytes available to xced on the filesystem of dir.
func FreeSpace(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	// Root may use the reserved blocks too, but they are the system's.
	return st.Bavail * uint64(st.Bsize), nil
}

// CheckSpace returns a *SpaceError when the free space is below the floor.
//
// It runs before every submission, and statfs costs 10-20 µs on some
// systems (a tenth of a submission's CPU): a reading with at least
// roomyMargin above the floor is trusted for roomyFor, since nothing
// fills that much that fast in the normal course, and whatever did is
// seen at the next reading. Nearer the floor every call reads the disk.
func (s *Store) CheckSpace() error {
	if s.lowSpace {
		free, _ := FreeSpace(s.dir)
		return &SpaceError{Dir: s.dir, Free: free, Need: s.minFree, ReadOnly: true}
	}
	if at := s.roomy.Load(); at != 0 && time.Since(time.Unix(0, at)) < roomyFor {
		return nil
	}
	free, err := FreeSpace(s.dir)
	if err != nil {
		return err
	}
	if free < s.minFree {
		s.roomy.Store(0)
		return &SpaceError{Dir: s.dir, Free: free, Need: s.minFree}
	}
	if free-s.minFree >= roomyMargin {
		s.roomy.Store(time.Now().UnixNano())
	} else {
		s.roomy.Store(0)
	}
	return nil
}

// roomyMargin and roomyFor: see CheckSpace.
const (
	roomyMargin = 1 << 30
	roomyFor    = time.Second
)

// OpenCheckSpace is the start-up check, before a store in dir (or the
// directory that will hold it) is opened: minFree 0 means the default.
func OpenCheckSpace(dir string, minFree uint64) error {
	if minFree == 0 {
		minFree = DefaultMinFree
	}
	probe := dir
	if _, err := os.Stat(probe); err != nil {
		probe = filepath.Dir(dir)
	}
	free, err := FreeSpace(probe)
	if err != nil {
		return err
	}
	if free < minFree {
		return &SpaceError{Dir: dir, Free: free, Need: minFree}
	}
	return nil
}

// preallocateLogs allocates every memtable log not allocated yet.
func (s *Store) preallocateLogs() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("read store directory: %w", err)
	}
	if s.lowSpace {
		// An allocation that fails part way may keep what it took, on
		// a disk with nothing to spare.
		return nil
	}
	s.allocMu.Lock()
	defer s.allocMu.Unlock()
	seen := map[string]bool{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".mem") {
			continue
		}
		seen[n] = true
		if s.allocated[n] {
			continue
		}
		if err := fallocateWhole(filepath.Join(s.dir, n)); err != nil {
			return err
		}
		s.allocated[n] = true
	}
	for n := range s.allocated {
		if !seen[n] {
			delete(s.allocated, n)
		}
	}
	return nil
}

func fallocateWhole(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if os.IsNotExist(err) {
		return nil // flushed and removed meanwhile
	}
	if err != nil {
		return fmt.Errorf("preallocate %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("preallocate %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil
	}
	// Mode 0 with the file's own size allocates its holes and changes
	// nothing else.
	if err := unix.Fallocate(int(f.Fd()), 0, 0, fi.Size()); err != nil {
		return fmt.Errorf("preallocate %s (%d MB): %w", path, fi.Size()>>20, err)
	}
	return nil
}

// preallocator allocates the memtable logs Badger creates as it goes.
func (s *Store) preallocator() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.preallocateLogs() // an error is retried at the next tick
		}
	}
}

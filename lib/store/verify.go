package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"xce/lib/atomicfile"
)

// Damage detection. Badger repairs some damage silently when it opens a
// database: it truncates a memtable log (.mem) at the first entry whose
// checksum fails, dropping every later write; it truncates a MANIFEST
// that ends mid-record and deletes the tables the lost records named; a
// directory without a MANIFEST is a new database, and the tables in it are
// deleted. So the store inspects its directory before Badger sees it, and
// verifies the tables' checksums and its own bookkeeping after:
//
//   - data files (.sst, .vlog, .mem) without a MANIFEST: damaged, not new;
//   - the MANIFEST: every record whole and its checksum right, every
//     table it names present;
//   - every .mem and .vlog: each entry's checksum, up to the end of what
//     was written; an entry that fails with written data after it (or a
//     whole entry that fails: a torn write leaves zeros) is damage, not
//     the tail of a write that a crash cut;
//   - every table's block checksums (Badger's VerifyChecksum);
//   - the job id ceiling: kept in the store and, on every raise, in
//     ceilingFile beside it; the store's may not be below the file's, and
//     no job id may be at or above it;
//   - after a clean stop, sealFile holds the record count, which must be
//     what the store holds at the next start; without a seal (a crash) a
//     memtable log must be there.

const (
	ceilingFile = "XCE-CEILING"
	sealFile    = "XCE-SEAL"
	// logHeaderSize is Badger's header of a .mem or .vlog file.
	logHeaderSize = 20
	bitFinTxn     = 1 << 7
)

// DamageError says what is damaged in a store and how to recover.
type DamageError struct {
	Dir      string
	Problems []string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("the job store %s is damaged: %s. xced does not start on a damaged store, so that no job is lost unnoticed. "+
		"Stop anything else using it, then run `xced store check --dir %s` for the details and `xced store recover --dir %s` to salvage what is intact into a fresh store "+
		"(the damaged one is kept aside), or `xced store restore FILE` from a backup",
		e.Dir, strings.Join(e.Problems, "; "), stateDirOf(e.Dir), stateDirOf(e.Dir))
}

// stateDirOf is the xced state directory of a store directory (DIR/db).
func stateDirOf(dir string) string {
	if filepath.Base(dir) == "db" {
		return filepath.Dir(dir)
	}
	return dir
}

// IsDamaged reports whether err says a store is damaged.
func IsDamaged(err error) bool {
	var d *DamageError
	return errors.As(err, &d)
}

// storeFiles lists a store directory's files by kind.
type storeFiles struct {
	manifest bool
	sst      []string
	logs     []string // .mem and .vlog
}

func listStore(dir string) (storeFiles, error) {
	var f storeFiles
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("read store directory %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		switch {
		case n == "MANIFEST":
			f.manifest = true
		case strings.HasSuffix(n, ".sst"):
			f.sst = append(f.sst, n)
		case isLog(n):
			f.logs = append(f.logs, n)
		}
	}
	return f, nil
}

// inspect checks a store directory's files before Badger opens it, and
// returns what is damaged (nothing for a store that is fine or new).
func inspect(dir string) ([]string, error) { return inspectStore(dir, false) }

// inspectStore is inspect; with cutTails (a replica's store) a memtable
// log's bad entry is not damage: the store's writes are not synced, so a
// power cut may leave any part of what followed its last sync unwritten;
// Badger drops the log from its first bad entry on, and the replicated log
// applies those entries again (replica.go).
func inspectStore(dir string, cutTails bool) ([]string, error) {
	f, err := listStore(dir)
	if err != nil {
		return nil, err
	}
	var (
		problems []string
		checks   []func() string // each table's and log's, run at once below
	)
	if !f.manifest {
		if len(f.sst)+len(f.logs) > 0 || fileExists(filepath.Join(dir, ceilingFile)) {
			problems = append(problems, fmt.Sprintf("its MANIFEST is missing (%d data files are there; opened as it is, the store would start empty and delete them)", len(f.sst)+len(f.logs)))
		}
	} else {
		tables, p := readManifest(filepath.Join(dir, "MANIFEST"))
		problems = append(problems, p...)
		have := map[uint64]bool{}
		for _, n := range f.sst {
			if id, err := strconv.ParseUint(strings.TrimSuffix(n, ".sst"), 10, 64); err == nil {
				have[id] = true
			}
		}
		var missing []string
		for id := range tables {
			if !have[id] {
				missing = append(missing, fmt.Sprintf("%06d.sst", id))
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			problems = append(problems, "tables named in its MANIFEST are missing: "+strings.Join(missing, ", "))
		}
		for id, comp := range tables {
			if have[id] {
				checks = append(checks, func() string {
					_, p := readTable(filepath.Join(dir, fmt.Sprintf("%06d.sst", id)), comp, false)
					return p
				})
			}
		}
	}
	// An open store always has a memtable log, and a clean stop flushes
	// it away and leaves the seal: no log and no seal means the log of a
	// store that was not stopped cleanly is gone, with its latest writes.
	// (Only for stores this version has run: they have the ceiling file.)
	mems := 0
	for _, n := range f.logs {
		if strings.HasSuffix(n, ".mem") {
			mems++
		}
	}
	if f.manifest && mems == 0 && !fileExists(filepath.Join(dir, sealFile)) && fileExists(filepath.Join(dir, ceilingFile)) {
		problems = append(problems, "its memtable log (.mem) is missing: the store was not stopped cleanly, so its latest writes were in that log")
	}
	for _, n := range f.logs {
		if cutTails && strings.HasSuffix(n, ".mem") {
			continue
		}
		checks = append(checks, func() string { return scanLog(filepath.Join(dir, n)) })
	}
	for _, p := range runChecks(checks) {
		if p != "" {
			problems = append(problems, p)
		}
	}
	return problems, nil
}

// runChecks runs the file checks on as many goroutines as there are CPUs
// (every open reads every table and log through) and returns their
// findings in the checks' order.
func runChecks(checks []func() string) []string {
	found := make([]string, len(checks))
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), len(checks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(checks); i = int(next.Add(1)) - 1 {
				found[i] = checks[i]()
			}
		}()
	}
	wg.Wait()
	return found
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// readManifest replays a MANIFEST's records and returns the tables it
// names, and its damage.
func readManifest(path string) (map[uint64]options.CompressionType, []string) {
	tables := map[uint64]options.CompressionType{}
	b, err := os.ReadFile(path)
	if err != nil {
		return tables, []string{fmt.Sprintf("its MANIFEST cannot be read: %v", err)}
	}
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("Bdgr")) {
		return tables, []string{"its MANIFEST has no valid header (truncated or overwritten)"}
	}
	for off := 8; off < len(b); {
		if len(b)-off < 8 {
			return tables, []string{fmt.Sprintf("its MANIFEST is truncated at byte %d (a record is cut)", off)}
		}
		n := int(binary.BigEndian.Uint32(b[off:]))
		crc := binary.BigEndian.Uint32(b[off+4:])
		if n > len(b)-off-8 {
			return tables, []string{fmt.Sprintf("its MANIFEST is truncated or damaged at byte %d (a record of %d bytes does not fit)", off, n)}
		}
		rec := b[off+8 : off+8+n]
		if crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli)) != crc {
			return tables, []string{fmt.Sprintf("its MANIFEST is damaged at byte %d (checksum mismatch)", off)}
		}
		var cs pb.ManifestChangeSet
		if err := proto.Unmarshal(rec, &cs); err != nil {
			return tables, []string{fmt.Sprintf("its MANIFEST is damaged at byte %d: %v", off, err)}
		}
		for _, c := range cs.Changes {
			switch c.Op {
			case pb.ManifestChange_CREATE:
				tables[c.Id] = options.CompressionType(c.Compression)
			case pb.ManifestChange_DELETE:
				delete(tables, c.Id)
			}
		}
		off += 8 + n
	}
	return tables, nil
}

// logEntry is one entry of a .mem or .vlog file.
type logEntry struct {
	key, value   []byte
	meta         byte
	userMeta     byte
	expiresAt    uint64
	offset, size int
}

// readLog reads a log file's entries up to the first that fails, and says
// whether that failure is damage (data written after it) rather than the
// end of what was written.
//
// After damage, the entries that still check out further on are returned
// too (after): found by trying every byte from the damage on.
func readLog(path string) (entries, after []logEntry, damage string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Sprintf("%s cannot be read: %v", filepath.Base(path), err)
	}
	entries, after, damage, _ = parseLog(filepath.Base(path), b, len(b), true)
	return entries, after, damage
}

// maxEntryHeader bounds an entry header's length (two bytes and three
// varints).
const maxEntryHeader = 2 + 3 + 5 + 10

// parseLog is readLog's reading of a file of size bytes whose first
// len(b) are b and the rest zeros. short says that it needed bytes past b
// (an entry runs past it): the answer is then not known.
func parseLog(name string, b []byte, size int, salvage bool) (entries, after []logEntry, damage string, short bool) {
	if size < logHeaderSize {
		if size == 0 {
			return nil, nil, "", false
		}
		return nil, nil, fmt.Sprintf("%s is truncated (%d bytes, shorter than its header)", name, size), false
	}
	if len(b) < logHeaderSize {
		return nil, nil, "", true
	}
	// zeros: the file's bytes from..to are all zero.
	zeros := func(from, to int) bool {
		return allZero(b[min(from, len(b)):min(to, len(b))])
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	off := logHeaderSize
	for off < len(b) {
		e, n, ok := decodeEntry(b[off:], table)
		if !ok && len(b) < size && (n > len(b)-off || n == 0 && len(b)-off < maxEntryHeader) {
			return entries, nil, "", true
		}
		if ok && len(e.key) == 0 && len(e.value) == 0 && e.meta == 0 && e.expiresAt == 0 {
			break // the zeros after the last entry
		}
		if !ok && n > 0 && off+n > size && !zeros(off, size) {
			return entries, nil, fmt.Sprintf("%s is truncated at byte %d (an entry is cut: the writes after it are gone)", name, size), false
		}
		if !ok {
			// Where the failed entry would end, if its header is sane.
			end := off + n
			if n <= 0 || end > size {
				end = off
			}
			whole := n > 0 && off+n <= size && !zeros(off+n-4, off+n)
			if whole || !zeros(end, size) {
				if salvage {
					after = resync(b, off+1, table)
				}
				return entries, after, fmt.Sprintf("%s is damaged at byte %d of %d (an entry's checksum fails and written data follows it: opened as it is, every later write would be dropped)", name, off, size), false
			}
			break
		}
		e.offset, e.size = off, n
		entries = append(entries, e)
		off += n
	}
	return entries, nil, "", false
}

// resync returns the entries that check out from off on.
func resync(b []byte, off int, table *crc32.Table) []logEntry {
	var out []logEntry
	end := len(b)
	for end > off && b[end-1] == 0 {
		end--
	}
	for off < end {
		e, n, ok := decodeEntry(b[off:], table)
		if !ok || len(e.key) == 0 {
			off++
			continue
		}
		e.offset, e.size = off, n
		out = append(out, e)
		off += n
	}
	return out
}

// scanLog checks a log file as readLog does, reading only what holds
// data: a memtable log is preallocated and a value log is extended as
// holes, 32 and 128 MB that a crash leaves mostly unwritten. The file
// system says where the data ends (SEEK_DATA, SEEK_HOLE); past it the file
// reads as zeros. The data is mapped, not copied.
func scanLog(path string) string {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("%s cannot be read: %v", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("%s cannot be read: %v", name, err)
	}
	size := fi.Size()
	// A margin past the data, so that the last entry is whole in what is
	// mapped however the data's end is rounded. Mapped even when the file
	// system counts the whole file as data (the zeros of a preallocated
	// log that a read has brought into the page cache are data to
	// SEEK_DATA): only the pages parsed are read, where reading the file
	// would read all of it.
	n := min(size, dataEnd(f, size)+1<<20)
	if n > 0 && size <= math.MaxInt {
		b, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err == nil {
			// The check after the last entry reads every page mapped:
			// set them all up in one call rather than a fault at a time.
			unix.Madvise(b, unix.MADV_POPULATE_READ)
			_, _, damage, short := parseLog(name, b, int(size), false)
			unix.Munmap(b)
			if !short {
				return damage
			}
		}
	}
	_, _, damage := readLog(path)
	return damage
}

// dataEnd is where a file's last data ends (its size when the file
// system cannot say).
func dataEnd(f *os.File, size int64) int64 {
	fd := int(f.Fd())
	var end int64
	for off := int64(0); off < size; {
		d, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			return end // only a hole from off on
		}
		if err != nil {
			return size
		}
		h, err := unix.Seek(fd, d, unix.SEEK_HOLE)
		if err != nil {
			return size
		}
		end, off = h, h
	}
	return min(end, size)
}

// zeroBlock is what allZero compares with, a block at a time.
var zeroBlock [4096]byte

func allZero(b []byte) bool {
	for len(b) > len(zeroBlock) {
		if !bytes.Equal(b[:len(zeroBlock)], zeroBlock[:]) {
			return false
		}
		b = b[len(zeroBlock):]
	}
	return bytes.Equal(b, zeroBlock[:len(b)])
}

// decodeHeaderLen decodes an entry's header and returns its total length
// (header, key, value, checksum), 0 when the header does not decode.
func decodeHeaderLen(b []byte) (e logEntry, total int, hlen int) {
	if len(b) < 2 {
		return e, 0, 0
	}
	e.meta, e.userMeta = b[0], b[1]
	p := 2
	klen, n := binary.Uvarint(b[p:])
	if n <= 0 || klen > 1<<16 {
		return e, 0, 0
	}
	p += n
	vlen, n := binary.Uvarint(b[p:])
	if n <= 0 || vlen > 1<<31 {
		return e, 0, 0
	}
	p += n
	exp, n := binary.Uvarint(b[p:])
	if n <= 0 {
		return e, 0, 0
	}
	p += n
	e.expiresAt = exp
	return e, p + int(klen) + int(vlen) + 4, p
}

// decodeEntry decodes one entry; n is its length when its header decodes.
func decodeEntry(b []byte, table *crc32.Table) (e logEntry, n int, ok bool) {
	e, n, hlen := decodeHeaderLen(b)
	if n == 0 || n > len(b) {
		return e, n, false
	}
	body := b[:n-4]
	if crc32.Checksum(body, table) != binary.BigEndian.Uint32(b[n-4:n]) {
		return e, n, false
	}
	klen := 0
	if v, m := binary.Uvarint(b[2:]); m > 0 {
		klen = int(v)
	}
	e.key = b[hlen : hlen+klen]
	e.value = b[hlen+klen : n-4]
	return e, n, true
}

// writeCeilingFile records the id ceiling beside the store, durably.
func writeCeilingFile(dir string, c int64) error {
	return writeFileSync(filepath.Join(dir, ceilingFile), []byte(strconv.FormatInt(c, 10)+"\n"))
}

func readIntsFile(path string) ([]int64, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var out []int64
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %q is not a number", filepath.Base(path), f)
		}
		out = append(out, v)
	}
	return out, true, nil
}

// writeFileSync replaces path with data atomically and durably.
func writeFileSync(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600, true); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

// countRecords counts the live job records (j) and submissions (s); the
// two ranges are walked side by side.
func countRecords(db *badger.DB) (jobs, subs int64, maxID int64, err error) {
	var (
		n, top [2]int64
		errs   [2]error
		wg     sync.WaitGroup
	)
	for i, p := range []byte{'j', 's'} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.View(func(txn *badger.Txn) error {
				it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{p}})
				defer it.Close()
				for it.Rewind(); it.Valid(); it.Next() {
					if k := it.Item().Key(); len(k) >= 9 {
						top[i] = max(top[i], int64(binary.BigEndian.Uint64(k[1:9])))
					}
					n[i]++
				}
				return nil
			})
		}()
	}
	wg.Wait()
	return n[0], n[1], max(top[0], top[1]), errors.Join(errs[0], errs[1])
}

// maxRecordID returns the largest job id of a live job record (j) or a
// submission (s), 0 when there is none.
func maxRecordID(db *badger.DB) (maxID int64, err error) {
	err = db.View(func(txn *badger.Txn) error {
		for _, p := range []byte{'j', 's'} {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{p}, Reverse: true})
			// In reverse, the largest key with the prefix is the one
			// before the next prefix.
			it.Seek([]byte{p + 1})
			if it.ValidForPrefix([]byte{p}) {
				if k := it.Item().Key(); len(k) >= 9 {
					maxID = max(maxID, int64(binary.BigEndian.Uint64(k[1:9])))
				}
			}
			it.Close()
		}
		return nil
	})
	return maxID, err
}

// verifyOpen checks an open store against its checksums and bookkeeping.
func verifyOpen(dir string, db *badger.DB) ([]string, error) {
	// Every table's blocks were checked by inspect (readTable), as Badger's
	// VerifyChecksum would, without its panic on a bad block; reading them
	// all a second time would only double the start-up time.
	var problems []string
	seal, sealed, err := readIntsFile(filepath.Join(dir, sealFile))
	if err != nil {
		return append(problems, err.Error()), nil
	}
	sealed = sealed && len(seal) == 3
	// Only a seal's check needs the records counted; the ceiling's needs
	// the largest id alone, found at the end of each range.
	var jobs, subs, maxID int64
	if sealed {
		jobs, subs, maxID, err = countRecords(db)
	} else {
		maxID, err = maxRecordID(db)
	}
	if err != nil {
		return append(problems, fmt.Sprintf("its records cannot be read: %v", err)), nil
	}
	ceiling, err := readIDCeiling(db)
	if err != nil {
		return append(problems, fmt.Sprintf("its job id ceiling cannot be read: %v", err)), nil
	}
	file, ok, err := readIntsFile(filepath.Join(dir, ceilingFile))
	if err != nil {
		return append(problems, err.Error()), nil
	}
	if ok && len(file) == 1 && ceiling < file[0] {
		problems = append(problems, fmt.Sprintf("its job id ceiling is %d but %d was recorded: writes made since are lost (job ids would be handed out again)", ceiling, file[0]))
	}
	if ceiling > 0 && maxID >= ceiling {
		problems = append(problems, fmt.Sprintf("it holds job %d but its job id ceiling is %d: the ceiling's record is lost", maxID, ceiling))
	}
	if sealed && (seal[0] != jobs || seal[1] != subs || seal[2] != ceiling) {
		problems = append(problems, fmt.Sprintf("it holds %d job records, %d submissions and id ceiling %d, but it was stopped with %d, %d and %d", jobs, subs, ceiling, seal[0], seal[1], seal[2]))
	}
	return problems, nil
}

// writeSeal records, at a clean stop, what the store holds.
func writeSeal(dir string, jobs, subs, ceiling int64) error {
	return writeFileSync(filepath.Join(dir, sealFile), fmt.Appendf(nil, "%d %d %d\n", jobs, subs, ceiling))
}

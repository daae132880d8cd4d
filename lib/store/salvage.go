package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/y"
)

// Salvage. A damaged store is read file by file, outside Badger (which
// would refuse it, or worse repair it by dropping data): every table up to
// its first bad block, every memtable log up to its first bad entry, the
// newest version of each key kept. What is whole is written into a fresh
// store; a job record whose spec is lost is dropped and named.

const (
	bitDelete       = 1 << 0
	bitValuePointer = 1 << 1
	bitTxn          = 1 << 6
)

// SalvageReport says what Salvage found and kept.
type SalvageReport struct {
	Damage      []string // what was damaged (as Check reports it)
	Keys        int      // records written into the fresh store
	Jobs        int      // live job records among them
	Submissions int
	Dropped     []string // records found but not kept, and why
	Ceiling     int64    // the fresh store's job id ceiling
	// StoppedWith: the live job records the damaged store held when it
	// was last stopped cleanly (-1: not known, it was not).
	StoppedWith int64
}

type version struct {
	ts      uint64
	deleted bool
	value   []byte
}

// Salvage reads the store in damaged and writes what is intact into a new
// store in fresh (which must not exist).
func Salvage(damaged, fresh string) (*SalvageReport, error) {
	if _, err := os.Stat(fresh); err == nil {
		return nil, fmt.Errorf("salvage into %s: it exists already", fresh)
	}
	rep := &SalvageReport{StoppedWith: -1}
	if seal, ok, _ := readIntsFile(filepath.Join(damaged, sealFile)); ok && len(seal) == 3 {
		rep.StoppedWith = seal[0]
	}
	problems, err := inspect(damaged)
	if err != nil {
		return nil, err
	}
	rep.Damage = problems
	files, err := listStore(damaged)
	if err != nil {
		return nil, err
	}
	comp := map[uint64]options.CompressionType{}
	if files.manifest {
		comp, _ = readManifest(filepath.Join(damaged, "MANIFEST"))
	}
	latest := map[string]version{}
	keep := func(key []byte, ts uint64, deleted bool, value []byte) {
		k := string(key)
		if bytes.HasPrefix(key, []byte("!badger!")) {
			return
		}
		if v, ok := latest[k]; ok && v.ts >= ts {
			return
		}
		latest[k] = version{ts: ts, deleted: deleted, value: value}
	}
	lostPointers := 0
	sort.Strings(files.sst)
	for _, n := range files.sst {
		id, _ := strconv.ParseUint(strings.TrimSuffix(n, ".sst"), 10, 64)
		var entries []tableEntry
		c, known := comp[id]
		if known {
			var damage string
			entries, damage = readTable(filepath.Join(damaged, n), c, true)
			if damage != "" && c == options.None {
				// Its blocks one by one: those after a damaged one, or
				// all of them when the index or the first block is
				// damaged (sstscan.go).
				entries = append(entries, scanTableFile(filepath.Join(damaged, n))...)
			}
		} else {
			// Without the MANIFEST the table's compression is not known:
			// none, as the store writes tables now, or Snappy, as it wrote
			// them before (Badger's default).
			var damage string
			entries, damage = readTable(filepath.Join(damaged, n), options.None, true)
			if damage != "" {
				if old, _ := readTable(filepath.Join(damaged, n), options.Snappy, true); len(old) > len(entries) {
					entries = old
				}
				entries = append(entries, scanTableFile(filepath.Join(damaged, n))...)
			}
		}
		for _, e := range entries {
			if e.value.Meta&bitValuePointer != 0 {
				lostPointers++
				continue
			}
			keep(y.ParseKey(e.key), y.ParseTs(e.key), e.value.Meta&bitDelete != 0, e.value.Value)
		}
	}
	sort.Strings(files.logs)
	for _, n := range files.logs {
		if !strings.HasSuffix(n, ".mem") {
			continue // value logs hold only values too large for this store's records
		}
		entries, after, _ := readLog(filepath.Join(damaged, n))
		// A transaction's entries count only once its closing entry is
		// there. After damage, the transaction it cut is lost (its first
		// closing entry after the damage ends it), and the whole ones
		// after that are kept.
		pending := map[uint64][]logEntry{}
		apply := func(e logEntry) {
			switch {
			case e.meta&bitFinTxn != 0:
				ts, _ := strconv.ParseUint(string(e.value), 10, 64)
				for _, p := range pending[ts] {
					keep(y.ParseKey(p.key), ts, p.meta&bitDelete != 0, p.value)
				}
				delete(pending, ts)
			case e.meta&bitTxn != 0:
				ts := y.ParseTs(e.key)
				pending[ts] = append(pending[ts], e)
			default:
				keep(y.ParseKey(e.key), y.ParseTs(e.key), e.meta&bitDelete != 0, e.value)
			}
		}
		for _, e := range entries {
			apply(e)
		}
		var cut []logEntry
		for _, es := range pending {
			cut = append(cut, es...)
		}
		pending = map[uint64][]logEntry{}
		i := 0
		for ; i < len(after) && after[i].meta&bitFinTxn == 0; i++ {
			cut = append(cut, after[i])
		}
		if i < len(after) {
			i++ // the cut transaction's closing entry
			// It was written whole (its closing entry is there): the
			// damage took some of its entries, and with them only the
			// jobs they belonged to. The jobs of a pack (one
			// transaction) whose records all read back are kept.
			cut = keepWholeJobs(cut, keep)
		}
		for _, e := range after[i:] {
			apply(e)
		}
		for _, es := range pending {
			cut = append(cut, es...)
		}
		rep.Dropped = append(rep.Dropped, lostJobs(n, cut)...)
	}
	if lostPointers > 0 {
		rep.Dropped = append(rep.Dropped, fmt.Sprintf("%d records whose values were in the value log", lostPointers))
	}

	// A submission a stop interrupted while it was stored in stages
	// (staged.go) is not there: its marker and what it names go, named
	// once, not as jobs whose spec is lost.
	var interrupted [][]byte
	for k, v := range latest {
		if v.deleted || !strings.HasPrefix(k, string(pendingPrefix)) {
			continue
		}
		if _, prefixes, err := decodePending(v.value); err == nil {
			interrupted = append(interrupted, prefixes...)
		}
		v.deleted = true
		latest[k] = v
		what := fmt.Sprintf("%q", k)
		if id, ok := pendingID([]byte(k)); ok {
			what = "job " + strconv.FormatInt(id, 10)
		}
		rep.Dropped = append(rep.Dropped, what+": its submission was interrupted while it was stored (its bsub had no answer)")
	}
	// Job records whose effective spec is lost cannot be loaded.
	var maxID, ceiling int64
	for k, v := range latest {
		if v.deleted {
			continue
		}
		key := []byte(k)
		if slices.ContainsFunc(interrupted, func(p []byte) bool { return bytes.HasPrefix(key, p) }) {
			v.deleted = true
			latest[k] = v
			continue
		}
		switch {
		case key[0] == 'j' && len(key) == 13:
			id := int64(binary.BigEndian.Uint64(key[1:9]))
			if f, ok := latest[string(specKey('f', id))]; !ok || f.deleted {
				rep.Dropped = append(rep.Dropped, fmt.Sprintf("job %s: its spec is lost", jobName(id, int32(binary.BigEndian.Uint32(key[9:])))))
				v.deleted = true
				latest[k] = v
				continue
			}
			maxID = max(maxID, id)
		case key[0] == 's' && len(key) == 9:
			maxID = max(maxID, int64(binary.BigEndian.Uint64(key[1:9])))
		case k == string(keyIDCeiling) && len(v.value) == 8:
			ceiling = int64(binary.BigEndian.Uint64(v.value))
		}
	}
	if vals, ok, _ := readIntsFile(filepath.Join(damaged, ceilingFile)); ok && len(vals) == 1 {
		ceiling = max(ceiling, vals[0])
	}
	rep.Ceiling = max(ceiling, maxID+1)
	sort.Strings(rep.Dropped)

	db, err := badger.Open(badgerOptions(fresh))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", fresh, err)
	}
	wb := db.NewWriteBatch()
	for k, v := range latest {
		if v.deleted || k == string(keyIDCeiling) {
			continue
		}
		if err := wb.Set([]byte(k), v.value); err != nil {
			wb.Cancel()
			db.Close()
			return nil, fmt.Errorf("salvage into %s: %w", fresh, err)
		}
		rep.Keys++
		switch k[0] {
		case 'j':
			rep.Jobs++
		case 's':
			rep.Submissions++
		}
	}
	if err := wb.Flush(); err != nil {
		db.Close()
		return nil, fmt.Errorf("salvage into %s: %w", fresh, err)
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	// Through Open and Close: the ceiling in the store and beside it, and
	// the seal.
	st, err := Open(fresh)
	if err != nil {
		return nil, fmt.Errorf("the salvaged store does not open: %w", err)
	}
	if err := st.SetIDCeiling(rep.Ceiling); err != nil {
		st.Close()
		return nil, err
	}
	if _, err := st.Load(); err != nil {
		st.Close()
		return nil, fmt.Errorf("the salvaged store does not load: %w", err)
	}
	return rep, st.Close()
}

// keepWholeJobs keeps, from the readable entries of a transaction that
// damage cut, the records of each job (not an array) whose submission
// (s), effective spec (f) and job record (j) are all among them, and the content-keyed
// environments; it returns the entries not kept.
func keepWholeJobs(cut []logEntry, keep func(key []byte, ts uint64, deleted bool, value []byte)) []logEntry {
	type parts struct {
		s, f, j bool
		elems   int // job records: an array has one per element
	}
	jobs := map[int64]*parts{}
	idOf := func(k []byte) (int64, bool) {
		if len(k) >= 9 && (k[0] == 'j' && len(k) == 13 || k[0] == 'e' && len(k) == 21 || (k[0] == 's' || k[0] == 'f' || k[0] == 'o') && len(k) == 9) {
			return int64(binary.BigEndian.Uint64(k[1:9])), true
		}
		return 0, false
	}
	for _, e := range cut {
		k := y.ParseKey(e.key)
		id, ok := idOf(k)
		if !ok {
			continue
		}
		p := jobs[id]
		if p == nil {
			p = &parts{}
			jobs[id] = p
		}
		switch k[0] {
		case 's':
			p.s = true
		case 'f':
			p.f = true
		case 'j':
			p.j = true
			p.elems++
		}
	}
	var rest []logEntry
	for _, e := range cut {
		k := y.ParseKey(e.key)
		id, ok := idOf(k)
		// An array's elements are records of their own, and which of them
		// the damaged entries held cannot be told: an array cut by the
		// damage is lost whole, and named, rather than kept short of
		// elements without a word.
		whole := ok && jobs[id].s && jobs[id].f && jobs[id].j && jobs[id].elems == 1
		if whole || k[0] == 'v' {
			keep(k, y.ParseTs(e.key), e.meta&bitDelete != 0, e.value)
			continue
		}
		rest = append(rest, e)
	}
	return rest
}

// lostJobs names the jobs whose records were in log entries that cannot be
// applied (a transaction cut by damage).
func lostJobs(file string, entries []logEntry) []string {
	elems := map[int64]map[int32]bool{}
	for _, e := range entries {
		k := y.ParseKey(e.key)
		if len(k) == 13 && k[0] == 'j' {
			id := int64(binary.BigEndian.Uint64(k[1:9]))
			if elems[id] == nil {
				elems[id] = map[int32]bool{}
			}
			elems[id][int32(binary.BigEndian.Uint32(k[9:]))] = true
		} else if len(k) == 9 && (k[0] == 's' || k[0] == 'f') {
			// A job whose job record itself was the damaged entry.
			id := int64(binary.BigEndian.Uint64(k[1:9]))
			if elems[id] == nil {
				elems[id] = map[int32]bool{0: true}
			}
		}
	}
	var out []string
	for id, idx := range elems {
		what := fmt.Sprintf("job %d", id)
		if len(idx) > 1 || !idx[0] {
			what = fmt.Sprintf("job %d (%d array elements seen)", id, len(idx))
		}
		out = append(out, fmt.Sprintf("%s: its submission or change was cut by the damage in %s (at least part of it was lost, so none of it is kept)", what, file))
	}
	return out
}

func jobName(id int64, idx int32) string {
	if idx > 0 {
		return fmt.Sprintf("%d[%d]", id, idx)
	}
	return strconv.FormatInt(id, 10)
}

// Check inspects the store in dir without changing it and returns what is
// damaged; nil when it is whole. The store must not be open.
func Check(dir string) ([]string, error) {
	problems, err := inspect(dir)
	if err != nil || len(problems) > 0 {
		return problems, err
	}
	files, err := listStore(dir)
	if err != nil || !files.manifest {
		return nil, err // new or empty
	}
	// The rest needs Badger, opened read-only on a shadow of the store so
	// that the check changes nothing (Badger, opened to write, truncates
	// a memtable log's zeroed tail and flushes and compacts): links to
	// its files, and copies of its memtable logs cut at their last whole
	// transaction, which a read-only Badger requires. It so needs about
	// the space of the memtables, not of the store.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".check-")
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	if err := shadowStore(dir, tmp); err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	db, err := badger.Open(badgerOptions(tmp).WithReadOnly(true))
	if err != nil {
		return []string{fmt.Sprintf("the database does not open: %v", err)}, nil
	}
	defer db.Close()
	return verifyOpen(tmp, db)
}

// shadowStore makes to a read-only image of the store in from: its files
// (not its lock) linked, or copied where they cannot be, its MANIFEST
// copied (Badger appends to it), and its memtable logs copied up to the
// end of their last whole transaction.
//
// The store may be in use (OpenView): Badger then adds and removes files
// as it flushes memtables and compacts tables, and records each change in
// its MANIFEST before it removes what the change replaced. An image made
// while the store's files and its MANIFEST stayed as they were is the
// store as it was at one moment; one made while they changed is made
// again. The ceiling file is taken first: the ceiling is raised in the
// store before the file, so the store in the image is at least as new.
func shadowStore(from, to string) error {
	const tries = 10
	for try := 1; ; try++ {
		before, err := storeShape(from)
		if err != nil {
			return err
		}
		err = shadowOnce(from, to)
		after, serr := storeShape(from)
		if serr != nil {
			return serr
		}
		if after == before {
			return err
		}
		if try == tries {
			return fmt.Errorf("the store changed while it was read, %d times", tries)
		}
		if err := os.RemoveAll(to); err != nil {
			return err
		}
		if err := os.Mkdir(to, 0o700); err != nil {
			return err
		}
		time.Sleep(time.Duration(try) * 10 * time.Millisecond)
	}
}

// storeShape describes what in a store directory changes when Badger
// flushes or compacts: its files' names, and its MANIFEST's identity and
// size.
func storeShape(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		b.WriteString(e.Name())
		b.WriteByte(0)
	}
	if st, err := os.Stat(filepath.Join(dir, "MANIFEST")); err == nil {
		fmt.Fprintf(&b, "%d", st.Size())
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			fmt.Fprintf(&b, "/%d", sys.Ino)
		}
	}
	return b.String(), nil
}

// shadowOnce makes the image (see shadowStore).
func shadowOnce(from, to string) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	// The ceiling file first.
	if i := slices.IndexFunc(ents, func(e os.DirEntry) bool { return e.Name() == ceilingFile }); i > 0 {
		ents[0], ents[i] = ents[i], ents[0]
	}
	for _, e := range ents {
		if e.Name() == "LOCK" || !e.Type().IsRegular() {
			continue
		}
		src, dst := filepath.Join(from, e.Name()), filepath.Join(to, e.Name())
		if isLog(e.Name()) {
			// An empty log (one being made, or what a crash left as it
			// was made: dropEmptyLogs) holds nothing, and Badger cannot
			// open a store that has one.
			if fi, err := e.Info(); err == nil && fi.Size() == 0 {
				continue
			}
		}
		if strings.HasSuffix(e.Name(), ".mem") {
			if err := copyLogWhole(src, dst); err != nil {
				return err
			}
			continue
		}
		if e.Name() == "MANIFEST" {
			if err := copyFile(src, dst, -1); err != nil {
				return err
			}
			continue
		}
		if err := os.Link(src, dst); err == nil {
			continue
		}
		if err := copyFile(src, dst, -1); err != nil {
			return err
		}
	}
	return nil
}

// copyLogWhole copies a memtable log up to the end of its last whole
// transaction (the end of what was written: the rest is its
// preallocated zeros).
func copyLogWhole(src, dst string) error {
	entries, _, _ := readLog(src)
	end := int64(logHeaderSize)
	for _, e := range entries {
		if e.meta&bitTxn == 0 || e.meta&bitFinTxn != 0 {
			end = int64(e.offset + e.size)
		}
	}
	if fi, err := os.Stat(src); err == nil && fi.Size() < end {
		end = fi.Size()
	}
	return copyFile(src, dst, end)
}

// copyFile copies the first n bytes of src (all of it when n < 0) to a
// new file dst.
func copyFile(src, dst string, n int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	var r io.Reader = in
	if n >= 0 {
		r = io.LimitReader(in, n)
	}
	_, err = io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

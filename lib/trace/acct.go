package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/resreq"
)

// XCE's accounting, as bacct reads it: the accounting records lib/store
// keeps for finished jobs (a<end:8><id:8><index:4>, an api.Job carrying
// its submitted spec as field 3 and an effective spec cut down to what
// accounting reports), and the finished jobs the controller still holds
// (j<id:8><index:4>, their specs at s<id:8> and f<id:8>), which have no
// record yet. A job in both (being forgotten as the store was read) is
// counted once. The key layout is lib/store's; this reads it without
// lib/store, which would open the store for writing.

// ReadAcct reads XCE's accounting from path: a state directory (its db
// subdirectory), the Badger directory itself, or a file written by
// `xced store backup`. A store is opened read-only; while xced runs it
// holds the store and ReadAcct says to read a backup instead.
//
// Mapping: job id and array index → ID, Index; submit time → Submit
// (relative to the earliest; Header["UnixStartTime"] keeps it); end less
// start → Run; the slots allocated (else -n) → Slots; user, user group
// (-G), queue → User, Group, Queue; the submitted -R (several joined as
// bsub joins them) → ResReq, its rusage[mem] → MemMB; -W → Limit; -M →
// MemLimitMB; a -w on one job → DependsOn. A job that ended without
// starting is Skipped.
func ReadAcct(path string) (*Trace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReadAcctBackup(f, path)
	}
	dir := path
	if _, err := os.Stat(filepath.Join(path, "db", "MANIFEST")); err == nil {
		dir = filepath.Join(path, "db")
	} else if _, err := os.Stat(filepath.Join(path, "MANIFEST")); err != nil {
		return nil, fmt.Errorf("%s: not an xced state directory (no db/MANIFEST)", path)
	}
	db, err := badger.Open(badger.DefaultOptions(dir).WithReadOnly(true).WithLogger(nil).WithNumCompactors(0))
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("the job store %s is in use (is xced running?): stop it, or read a backup: xced store backup FILE, then --trace FILE", dir)
		}
		return nil, fmt.Errorf("open the job store %s read-only: %w (after a crash, start and stop xced once, or read a backup made with xced store backup)", dir, err)
	}
	defer db.Close()
	a := newAcctReader(path)
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{'a'}})
		for it.Rewind(); it.Valid(); it.Next() {
			if err := it.Item().Value(func(v []byte) error { return a.record(it.Item().Key(), v) }); err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
		it = txn.NewIterator(badger.IteratorOptions{Prefix: []byte{'j'}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := it.Item().Value(func(v []byte) error { return a.live(it.Item().Key(), v) }); err != nil {
				return err
			}
		}
		// The specs of the finished jobs still held.
		for _, id := range a.wanted() {
			for _, p := range []byte{'s', 'f'} {
				item, err := txn.Get(specKey(p, id))
				if errors.Is(err, badger.ErrKeyNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if err := item.Value(func(v []byte) error { return a.spec(specKey(p, id), v) }); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the job store %s: %w", dir, err)
	}
	return a.finish(), nil
}

// ReadAcctBackup reads the accounting in a `xced store backup` file:
// Badger's backup stream, [length:8 little-endian][KVList] repeated. It
// reads the stream twice (the specs of jobs still held come in no set
// order), hence the Seeker. A stream that is not one, or is cut short,
// is an error: the records before the damage are not to be trusted to
// be all of them.
func ReadAcctBackup(r io.ReadSeeker, name string) (*Trace, error) {
	a := newAcctReader(name)
	pass := func(fn func(k, v []byte) error) error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return err
		}
		return scanBackup(r, fn)
	}
	err := pass(func(k, v []byte) error {
		switch k[0] {
		case 'a':
			return a.record(k, v)
		case 'j':
			return a.live(k, v)
		}
		return nil
	})
	if err == nil && len(a.wanted()) > 0 {
		err = pass(func(k, v []byte) error {
			if k[0] == 's' || k[0] == 'f' {
				return a.spec(k, v)
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable xced store backup: %w", name, err)
	}
	return a.finish(), nil
}

// maxKVList bounds one list of the backup stream (Badger writes them in
// batches of a few MB).
const maxKVList = 1 << 30

// scanBackup hands each live key and value of a backup stream to fn.
func scanBackup(r io.Reader, fn func(k, v []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var buf bytes.Buffer
	for {
		var size [8]byte
		if _, err := io.ReadFull(br, size[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("cut short: %w", err)
		}
		n := binary.LittleEndian.Uint64(size[:])
		if n > maxKVList {
			return fmt.Errorf("a list of %d bytes", n)
		}
		// Grown as the bytes come, not sized by the length read: a
		// damaged length must not allocate a gigabyte.
		buf.Reset()
		if m, err := io.CopyN(&buf, br, int64(n)); err != nil {
			return fmt.Errorf("cut short: %d of %d bytes: %w", m, n, err)
		}
		var list pb.KVList
		if err := proto.Unmarshal(buf.Bytes(), &list); err != nil {
			return err
		}
		// A key's versions come newest first; a deleted key is a
		// marker without a value.
		var last []byte
		for _, kv := range list.Kv {
			if len(kv.Key) == 0 || (last != nil && string(kv.Key) == string(last)) {
				continue
			}
			last = kv.Key
			if len(kv.Meta) > 0 && kv.Meta[0]&(bitDelete|bitExpired) != 0 {
				continue
			}
			if err := fn(kv.Key, kv.Value); err != nil {
				return err
			}
		}
	}
}

// Badger's value meta bits (its structs.go): a deleted or expired key.
const (
	bitDelete  = 1 << 0
	bitExpired = 1 << 1
)

func specKey(prefix byte, id int64) []byte {
	k := make([]byte, 9)
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], uint64(id))
	return k
}

type jobKey struct {
	id    int64
	index int32
	end   int64
}

// acctReader gathers the jobs of one store.
type acctReader struct {
	name    string
	t       *Trace
	seen    map[jobKey]bool // accounting records read
	held    []*api.Job      // finished jobs still held, waiting for their specs
	want    map[int64]bool  // their ids
	specs   map[int64]*api.JobSpec
	effs    map[int64]*api.JobSpec
	names   map[string]string
	resReqs map[string]string // joined -R by the -R list, "\x00"-separated
	mem     map[string]float64
}

func newAcctReader(name string) *acctReader {
	return &acctReader{
		name: name, t: &Trace{Format: Acct, Header: map[string]string{}},
		seen: map[jobKey]bool{}, specs: map[int64]*api.JobSpec{}, effs: map[int64]*api.JobSpec{},
		names: map[string]string{}, resReqs: map[string]string{}, mem: map[string]float64{},
	}
}

// record reads an accounting record (key a<end><id><index>).
func (a *acctReader) record(k, v []byte) error {
	if len(k) != 21 {
		return nil
	}
	j := &api.Job{}
	if err := j.UnmarshalVT(v); err != nil {
		a.t.Malformed = append(a.t.Malformed, Problem{a.name, 0, fmt.Sprintf("accounting record %x: %v", k, err)})
		return nil
	}
	a.seen[jobKey{j.JobId, j.ArrayIndex, j.EndTime}] = true
	a.add(j, j.Spec, j.Effective)
	return nil
}

// live reads a job the controller still holds (key j<id><index>); a
// finished one waits for its specs.
func (a *acctReader) live(k, v []byte) error {
	if len(k) != 13 {
		return nil
	}
	j := &api.Job{}
	if err := j.UnmarshalVT(v); err != nil {
		a.t.Malformed = append(a.t.Malformed, Problem{a.name, 0, fmt.Sprintf("job record %x: %v", k, err)})
		return nil
	}
	if j.State == api.JobState_DONE || j.State == api.JobState_EXIT {
		a.held = append(a.held, j)
	}
	return nil
}

// wanted lists the ids whose specs the held jobs need.
func (a *acctReader) wanted() []int64 {
	a.want = map[int64]bool{}
	var ids []int64
	for _, j := range a.held {
		if !a.want[j.JobId] {
			a.want[j.JobId] = true
			ids = append(ids, j.JobId)
		}
	}
	slices.Sort(ids)
	return ids
}

// spec reads a submitted (s) or effective (f) spec of a held job.
func (a *acctReader) spec(k, v []byte) error {
	if len(k) != 9 {
		return nil
	}
	id := int64(binary.BigEndian.Uint64(k[1:]))
	if !a.want[id] {
		return nil
	}
	s := &api.JobSpec{}
	if err := s.UnmarshalVT(v); err != nil {
		a.t.Malformed = append(a.t.Malformed, Problem{a.name, 0, fmt.Sprintf("spec %x: %v", k, err)})
		return nil
	}
	s.Env = nil
	if k[0] == 's' {
		a.specs[id] = s
	} else {
		a.effs[id] = s
	}
	return nil
}

func (a *acctReader) finish() *Trace {
	// Held jobs that are not also accounted.
	for _, j := range a.held {
		if !a.seen[jobKey{j.JobId, j.ArrayIndex, j.EndTime}] {
			a.add(j, a.specs[j.JobId], a.effs[j.JobId])
		}
	}
	t := a.t
	rebase(t) // from nanoseconds since the epoch
	// A store has no file order: the same jobs in the same order whether
	// read from the store or from a backup of it.
	slices.SortFunc(t.Jobs, func(x, y Job) int {
		return cmp.Or(cmp.Compare(x.Submit, y.Submit), cmp.Compare(x.ID, y.ID), cmp.Compare(x.Index, y.Index), cmp.Compare(x.Run, y.Run))
	})
	return t
}

// add maps one finished job.
func (a *acctReader) add(j *api.Job, spec, eff *api.JobSpec) {
	what := fmt.Sprintf("job %d", j.JobId)
	if j.ArrayIndex > 0 {
		what = fmt.Sprintf("job %d[%d]", j.JobId, j.ArrayIndex)
	}
	switch {
	case j.StartTime <= 0:
		a.t.Skipped = append(a.t.Skipped, Problem{a.name, 0, what + ": never started"})
		return
	case j.EndTime < j.StartTime:
		a.t.Skipped = append(a.t.Skipped, Problem{a.name, 0, what + ": ended before it started"})
		return
	}
	out := Job{
		ID:     j.JobId,
		Index:  int64(j.ArrayIndex),
		Submit: time.Duration(j.SubmitTime),
		Run:    time.Duration(j.EndTime - j.StartTime),
		Slots:  int(j.AllocSlots),
	}
	pick := func(f func(*api.JobSpec) string) string {
		if s := f(eff); s != "" {
			return s
		}
		return f(spec)
	}
	out.User = a.intern(pick((*api.JobSpec).GetUser))
	if out.User == "" {
		out.User = "unknown"
	}
	out.Group = a.intern(pick((*api.JobSpec).GetUserGroup))
	out.Queue = a.intern(pick((*api.JobSpec).GetQueue))
	if out.Slots <= 0 {
		out.Slots = int(max(eff.GetMinTasks(), spec.GetMinTasks(), 1))
	}
	// What the job asked for itself: a replay applies the queue's and
	// the profile's parts again.
	var limit int64
	if spec != nil {
		out.ResReq = a.joinResReq(spec.ResReq)
		limit = spec.RunLimitSec
		out.MemLimitMB = float64(spec.MemLimitKb) / 1024
		out.DependsOn = dependsOn(spec.Dependency)
	} else if eff != nil {
		if len(eff.ResReq) > 0 {
			out.ResReq = a.intern(eff.ResReq[0])
		}
		limit = eff.RunLimitSec
	}
	if limit > 0 {
		out.Limit = time.Duration(limit) * time.Second
	}
	if out.ResReq != "" {
		v, ok := a.mem[out.ResReq]
		if !ok {
			v = rusageMem(out.ResReq)
			a.mem[out.ResReq] = v
		}
		out.MemMB = v
	}
	a.t.Jobs = append(a.t.Jobs, out)
}

func (a *acctReader) intern(s string) string {
	if v, ok := a.names[s]; ok {
		return v
	}
	a.names[s] = s
	return s
}

// joinResReq makes one requirement of a job's -R options, as bsub
// combines several; ones that do not combine stay as the first.
func (a *acctReader) joinResReq(reqs []string) string {
	switch len(reqs) {
	case 0:
		return ""
	case 1:
		return a.intern(reqs[0])
	}
	key := strings.Join(reqs, "\x00")
	if v, ok := a.resReqs[key]; ok {
		return v
	}
	out := reqs[0]
	var parsed []*resreq.ResReq
	for _, s := range reqs {
		r, err := resreq.Parse(s)
		if err != nil {
			parsed = nil
			break
		}
		parsed = append(parsed, r)
	}
	if parsed != nil {
		if r, err := resreq.Join(parsed...); err == nil {
			out = r.String()
		}
	}
	out = a.intern(out)
	a.resReqs[key] = out
	return out
}

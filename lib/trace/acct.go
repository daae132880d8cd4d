package trace

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/resreq"
	"xce/lib/store"
)

// XCE's accounting, as bacct reads it: the accounting records lib/store
// keeps for finished jobs (each with its submitted spec, and an effective
// spec cut down to what accounting reports), and the finished jobs the
// controller still holds, which have no record yet. A job in both (its
// record written, its live record not yet forgotten) is counted once. lib/store reads its
// store (a store.View); this maps the jobs.

// ReadAcct reads XCE's accounting from path: a state directory (its db
// subdirectory), the store directory itself, or a file written by `xced
// store backup`. A store is read as it is at that moment, also while xced
// runs (lib/store reads an image of it and changes nothing).
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
	v, err := store.OpenView(dir)
	if err != nil {
		return nil, fmt.Errorf("read the job store: %w", err)
	}
	defer v.Close()
	t, err := readView(v, path)
	if err != nil {
		return nil, fmt.Errorf("read the job store %s: %w", dir, err)
	}
	return t, nil
}

// ReadAcctBackup reads the accounting in a `xced store backup` file. A
// stream that is not one, or is cut short, is an error: the records
// before the damage are not to be trusted to be all of them. (It reads r
// once, from where it is.)
func ReadAcctBackup(r io.ReadSeeker, name string) (*Trace, error) {
	v, err := store.OpenBackupView(r)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable xced store backup: %w", name, err)
	}
	defer v.Close()
	t, err := readView(v, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// readView reads the accounting of a store.
func readView(v *store.View, name string) (*Trace, error) {
	a := newAcctReader(name)
	err := v.ScanAcct(func(j *api.Job, err error) bool {
		if err != nil {
			a.t.Malformed = append(a.t.Malformed, Problem{a.name, 0, err.Error()})
			return false
		}
		a.seen[jobKey{j.JobId, j.ArrayIndex, j.EndTime}] = true
		a.add(j, j.Spec, j.Effective)
		return false
	})
	if err != nil {
		return nil, err
	}
	held, err := v.Finished()
	if err != nil {
		return nil, err
	}
	// Held jobs that are not also accounted.
	for _, j := range held {
		if !a.seen[jobKey{j.JobId, j.ArrayIndex, j.EndTime}] {
			a.add(j, j.Spec, j.Effective)
		}
	}
	return a.finish(), nil
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
	names   map[string]string
	resReqs map[string]string // joined -R by the -R list, "\x00"-separated
	mem     map[string]float64
}

func newAcctReader(name string) *acctReader {
	return &acctReader{
		name: name, t: &Trace{Format: Acct, Header: map[string]string{}},
		seen:  map[jobKey]bool{},
		names: map[string]string{}, resReqs: map[string]string{}, mem: map[string]float64{},
	}
}

func (a *acctReader) finish() *Trace {
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
		CPU:    time.Duration(j.GetUsage().GetCpuTimeMs()) * time.Millisecond,
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

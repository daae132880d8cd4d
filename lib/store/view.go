package store

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// Views. A View is a read-only image of a store, for tools that read the
// jobs it holds without being the controller (lib/trace reads the
// accounting). Only this package knows the store's layout: the tools ask
// the view, not Badger.
//
// A view of a store directory is a shadow of it (shadowStore: its tables
// linked, its memtable logs copied up to their last whole transaction)
// opened read-only, so it reads a store that a running xced holds, at the
// moment it was shadowed, and changes nothing in it. A view of a backup
// is the backup loaded into a fresh store. Either lives in a temporary
// directory that Close removes.
//
// A view is checked for damage as Open checks a store (inspect, then
// verifyOpen), except what needs writing: it does not sweep a submission
// that a stop interrupted while it was stored in stages (sweepPending),
// whose jobs are pending and never finished, so none of what a view
// offers.
type View struct {
	db  *badger.DB
	tmp string // removed on Close
}

// OpenView opens a read-only view of the store in dir, which may be in
// use by a running controller. Its temporary directory is made beside
// dir, where the store's files can be linked rather than copied (else in
// the system's temporary directory, with copies).
func OpenView(dir string) (*View, error) {
	files, err := listStore(dir)
	if err != nil {
		return nil, err
	}
	if !files.manifest {
		return nil, fmt.Errorf("%s: not a job store (no MANIFEST)", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".xce-view-")
	if err != nil {
		tmp, err = os.MkdirTemp("", "xce-view-")
	}
	if err != nil {
		return nil, fmt.Errorf("view %s: %w", dir, err)
	}
	if err := shadowStore(dir, tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("view %s: %w", dir, err)
	}
	v, problems, err := openView(tmp, dir)
	if err == nil && problems != nil {
		err = &DamageError{Dir: dir, Problems: problems}
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	v.tmp = tmp
	return v, nil
}

// OpenBackupView opens a read-only view of a backup stream (what Backup
// writes). A stream that is damaged or cut short is an error: what came
// before the damage is not known to be all of it.
func OpenBackupView(r io.Reader) (*View, error) {
	tmp, err := os.MkdirTemp("", "xce-backup-view-")
	if err != nil {
		return nil, fmt.Errorf("view a backup: %w", err)
	}
	dir := filepath.Join(tmp, "db")
	// Not synced: the copy is thrown away with the view.
	if err := loadBackup(r, dir, badgerOptions(dir).WithSyncWrites(false), upgradeBackup); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	v, problems, err := openView(dir, "the backup")
	if err == nil && problems != nil {
		err = fmt.Errorf("the backup is damaged: %s", strings.Join(problems, "; "))
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	v.tmp = tmp
	return v, nil
}

// openView opens the store in dir read-only after checking it for damage
// as Open does; a damaged one is not opened, and problems says why. name
// is the store's for the errors.
func openView(dir, name string) (v *View, problems []string, err error) {
	if problems, err = inspect(dir); err != nil || len(problems) > 0 {
		return nil, problems, err
	}
	db, err := badger.Open(badgerOptions(dir).WithReadOnly(true))
	if err != nil {
		return nil, []string{fmt.Sprintf("the database does not open: %v", err)}, nil
	}
	// A later release's layout is refused, as Open refuses it. An older
	// one is read as this one (a view cannot upgrade it: it is read-only),
	// which holds while every step in upgrades leaves the layout as it
	// was; a view of a backup was upgraded as it was loaded.
	if v, err := readSchema(db); err == nil && v > SchemaVersion {
		db.Close()
		return nil, nil, &SchemaError{Dir: name, Version: v}
	}
	if problems, err = verifyOpen(dir, db); err != nil || len(problems) > 0 {
		db.Close()
		return nil, problems, err
	}
	return &View{db: db}, nil, nil
}

// Close closes the view and removes its temporary directory.
func (v *View) Close() error {
	err := v.db.Close()
	if rerr := os.RemoveAll(v.tmp); err == nil {
		err = rerr
	}
	return err
}

// ScanAcct hands fn every accounting record, in the order the jobs ended,
// with its submitted spec (Spec) and its effective spec as accounting
// keeps it (Effective); fn returns true to stop. A record that does not
// decode comes to fn as err, naming it, and the scan goes on if fn says
// so: a tool may name it and read the rest (the controller's ScanAcct
// stops at it).
func (v *View) ScanAcct(fn func(j *api.Job, err error) bool) error {
	_, err := scanAcct(v.db, nil, 0, 0, true, fn)
	return err
}

// Finished returns the finished jobs (DONE or EXIT) that the controller
// still holds, in id order, each with its submitted spec (Spec; nil if
// the store has none) and its effective spec (Effective). They have no
// accounting record yet, unless the controller was forgetting them as
// the view was taken. They are read as Load reads the live jobs.
func (v *View) Finished() ([]*api.Job, error) {
	var done []*api.Job
	err := v.db.View(func(txn *badger.Txn) error {
		jobs, err := loadJobs(txn, 0, math.MaxInt64)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if j.State == api.JobState_DONE || j.State == api.JobState_EXIT {
				done = append(done, j)
			}
		}
		effs, err := loadEffective(txn, done)
		if err != nil {
			return err
		}
		// An array's elements share their specs, decoded once.
		type specs struct{ spec, eff *api.JobSpec }
		byID := map[int64]specs{}
		for _, j := range done {
			s, ok := byID[j.JobId]
			if !ok {
				s.eff = &api.JobSpec{}
				if err := proto.Unmarshal(effs[j.JobId], s.eff); err != nil {
					return fmt.Errorf("decode the effective spec of job %d: %w", j.JobId, err)
				}
				s.spec, err = getSpec(txn, specKey('s', j.JobId))
				if errors.Is(err, badger.ErrKeyNotFound) {
					s.spec, err = nil, nil
				}
				if err != nil {
					return fmt.Errorf("job %d: %w", j.JobId, err)
				}
				byID[j.JobId] = s
			}
			j.Spec, j.Effective = s.spec, s.eff
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the finished jobs held: %w", err)
	}
	return done, nil
}

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"xce/lib/api"
)

// bsub -M without a unit is in LSF_UNIT_FOR_LIMITS of $LSF_ENVDIR/lsf.conf,
// the unit workflow tools convert to; KB without one.
func TestMemLimitUnitFromLSFConf(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lsf.conf"), []byte("LSF_UNIT_FOR_LIMITS=MB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := sys.getenv
	defer func() { sys.getenv = old }()
	for _, tc := range []struct {
		envdir, m string
		kb        int64
	}{
		{dir, "4000", 4000 << 10},
		{dir, "2G", 2 << 20},
		{t.TempDir(), "4000", 4000}, // no lsf.conf there: KB
	} {
		sys.getenv = func(k string) string {
			if k == "LSF_ENVDIR" {
				return tc.envdir
			}
			return ""
		}
		s := &api.JobSpec{}
		if err := fillSpec(s, &bsubOpts{memLimit: tc.m}); err != nil {
			t.Fatal(err)
		}
		if s.MemLimitKb != tc.kb {
			t.Errorf("-M %s with LSF_ENVDIR=%s: %d KB, want %d", tc.m, tc.envdir, s.MemLimitKb, tc.kb)
		}
	}
}

// bsub -sp 99999999999 wrapped to 1215752191 on its way into the int32 of
// the request; beyond int32 it is a bad priority.
func TestUserPriorityRange(t *testing.T) {
	for _, tc := range []struct {
		sp   int
		want int32
		ok   bool
	}{{5, 5, true}, {2147483647, 2147483647, true}, {99999999999, 0, false}, {2147483648, 0, false}, {-1, 0, false}} {
		s := &api.JobSpec{}
		err := fillSpec(s, &bsubOpts{userPrio: tc.sp})
		if tc.ok != (err == nil) || s.UserPriority != tc.want || err != nil && err.Error() != strconv.Itoa(tc.sp)+": Bad user priority" {
			t.Errorf("-sp %d: %d, %v", tc.sp, s.UserPriority, err)
		}
	}
}

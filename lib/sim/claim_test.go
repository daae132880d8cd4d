package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xce/lib/resreq"
	"xce/lib/sched"
)

// TestClaim: a claim of nearly all of a host's memory is allocated by
// the replay's first cycle and keeps a job asking for more than is left
// from starting; without it the job starts at once.
func TestClaim(t *testing.T) {
	// Job 1 asks 2000 MB (field 10, KB per processor); job 2 none.
	line := func(id, submit int) string {
		return fmt.Sprintf("%d %d -1 100 1 -1 -1 1 1000 2048000 1 1 -1 -1 1 -1 -1 -1\n", id, submit)
	}
	tr := mustSWF(t, "; MaxProcs: 2\n"+line(1, 0)+swfLine(2, 0, 100, 1, 1000, 1, 1))
	set := resreq.MustParse(fmt.Sprintf("rusage[mem=%d]", bigMem-1000)).Simple.Rusage.Or[0]
	for _, c := range []struct {
		claims []sched.Claim
		want   float64
	}{{nil, 0}, {[]sched.Claim{{Name: "most", Rusage: set}}, -1}} {
		r, err := Run(tr, Options{Hosts: 1, Slots: 2, Claims: c.claims})
		if err != nil {
			t.Fatal(err)
		}
		got := starts(r)
		if got[1] != c.want || got[2] != 0 {
			t.Errorf("claims %d: starts %v, want job 1 at %v, job 2 at 0", len(c.claims), got, c.want)
		}
		if held := r.HeldClaims(); len(c.claims) > 0 && held["most"].Host != "h1" {
			t.Errorf("the claim was not allocated on h1: %+v", held)
		}
	}
}

// TestClaimFile: a claims file's claim is parsed against the run's
// resources and held as Options.Claims are; a bad file is refused.
func TestClaimFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "claims.toml")
	os.WriteFile(path, []byte(fmt.Sprintf("[[claim]]\nname = \"most\"\nrusage = \"rusage[mem=%d]\"\nhosts = [\"h1\"]\n", bigMem-1000)), 0o644)
	reqs, err := ReadClaims(path)
	if err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("%d %d -1 100 1 -1 -1 1 1000 2048000 1 1 -1 -1 1 -1 -1 -1\n", 1, 0)
	r, err := Run(mustSWF(t, "; MaxProcs: 2\n"+line), Options{Hosts: 1, Slots: 2, ClaimRequests: reqs})
	if err != nil {
		t.Fatal(err)
	}
	if got := starts(r); got[1] != -1 || r.HeldClaims()["most"].Host != "h1" {
		t.Errorf("starts %v, claims %v: want job 1 kept off the claimed memory", got, r.HeldClaims())
	}
	for _, bad := range []struct{ text, want string }{
		{"[[claim]]\nname = \"x\"\n", "required"},
		{"[[claim]]\nname = \"x\"\nrusage = \"rusage[mem=1]\"\n[[claim]]\nname = \"x\"\nrusage = \"rusage[mem=1]\"\n", "twice"},
		{"[[claim]]\nname = \"x\"\nrusage = \"rusage[mem=1]\"\nusers = [\"a\"]\n", "a claim has"},
	} {
		os.WriteFile(path, []byte(bad.text), 0o644)
		if _, err := ReadClaims(path); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.text, err, bad.want)
		}
	}
}

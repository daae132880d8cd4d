package cli

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"xce/lib/api"
)

// TestNNodes: bsub -nnodes N (Parsl's LSF template) is N whole hosts: N
// tasks one per host on exclusive hosts; with -n it is refused.
func TestNNodes(t *testing.T) {
	spec := func(args ...string) (*api.JobSpec, error) {
		fs := pflag.NewFlagSet("bsub", pflag.ContinueOnError)
		var o bsubOpts
		bsubFlags(fs, &o)
		words, err := lsfArgs(fs, args, false)
		if err != nil {
			return nil, err
		}
		if err := fs.Parse(words); err != nil {
			return nil, err
		}
		s := &api.JobSpec{}
		return s, fillSpec(s, &o)
	}
	s, err := spec("-nnodes", "3", "-R", "select[mem>1]")
	if err != nil {
		t.Fatal(err)
	}
	if s.MinTasks != 3 || s.MaxTasks != 3 || !s.Exclusive || !slices.Equal(s.ResReq, []string{"select[mem>1]", "span[ptile=1]"}) {
		t.Errorf("-nnodes 3: tasks %d,%d exclusive %v resreq %q", s.MinTasks, s.MaxTasks, s.Exclusive, s.ResReq)
	}
	if _, err := spec("-nnodes", "2", "-n", "4"); err == nil || err.Error() != "The -n and -nnodes options are mutually exclusive" {
		t.Errorf("-nnodes with -n: %v", err)
	}
	if _, err := spec("-nnodes", "-1"); err == nil {
		t.Error("-nnodes -1 accepted")
	}
}

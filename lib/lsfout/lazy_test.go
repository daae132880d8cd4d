package lsfout

import (
	"io"
	"testing"

	"xce/lib/api"
	"xce/lib/testenv"
)

// TestFormattingBuildsNoDescriptors: bjobs, bjobs -l, -sum, bhist -l and
// bacct -l output format jobs of every state without building lib/api's
// descriptors, which would cost a command a millisecond (tools/lazypb;
// an enum's String reads the generated name table). It runs in a fresh
// process: another test may have reflected already.
func TestFormattingBuildsNoDescriptors(t *testing.T) {
	if !testenv.InFreshProcess(t) {
		return
	}
	if api.File_api_proto != nil {
		t.Fatal("descriptors built before the test began")
	}
	jobs, opt := allJobs(), testJobsOptions()
	for name, write := range map[string]func() error{
		"bjobs":      func() error { return WriteJobs(io.Discard, jobs, opt) },
		"bjobs -l":   func() error { return WriteJobsLong(io.Discard, jobs, opt) },
		"bjobs -sum": func() error { return WriteJobsSum(io.Discard, jobs, false) },
		"bhist -l":   func() error { return WriteHistoryLong(io.Discard, jobs, nil, opt) },
		"bacct -l":   func() error { return WriteAcct(io.Discard, jobs, AcctFilter{}, true, opt) },
	} {
		if err := write(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if api.File_api_proto != nil {
			t.Fatalf("%s built lib/api's descriptors", name)
		}
	}
}

package trace

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestReadSWFCPU: field 6, the average CPU time per allocated processor,
// gives the job's CPU time; -1 gives none.
func TestReadSWFCPU(t *testing.T) {
	tr, err := ReadSWF(strings.NewReader("1 0 -1 100 4 50 -1 4 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"+
		"2 0 -1 100 4 -1 -1 4 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"), "c.swf")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 2 || tr.Jobs[0].CPU != 200*time.Second || tr.Jobs[1].CPU != 0 {
		t.Errorf("jobs %+v; want CPU 200 s and none", tr.Jobs)
	}
}

// TestReadLSBAcctCPU: lsb.acct's ru_utime and ru_stime (the first two
// fields of the resource usage) give the job's CPU time; -1 (LSF had
// none) counts nothing, and a field that is not a number does not refuse
// the record.
func TestReadLSBAcctCPU(t *testing.T) {
	rest := strings.Repeat(" -1", 17)
	var in []string
	for i, ru := range []string{"12.5 3.5", "-1 2", "-1 -1", "x 3"} {
		in = append(in, lsbRecord(map[string]string{"jobId": fmt.Sprint(201 + i), "rusage": ru + rest}, 0))
	}
	tr, err := ReadLSBAcct(strings.NewReader(strings.Join(in, "\n")), "lsb.acct")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]time.Duration{201: 16 * time.Second, 202: 2 * time.Second, 203: 0, 204: 3 * time.Second}
	if len(tr.Jobs) != len(want) || len(tr.Malformed) != 0 {
		t.Fatalf("jobs %+v, malformed %v", tr.Jobs, tr.Malformed)
	}
	for _, j := range tr.Jobs {
		if j.CPU != want[j.ID] || j.Limit != time.Hour {
			t.Errorf("job %d: CPU %v, limit %v; want %v and 1h (the fields after the usage still read)", j.ID, j.CPU, j.Limit, want[j.ID])
		}
	}
}

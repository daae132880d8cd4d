package trace

import (
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

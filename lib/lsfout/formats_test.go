package lsfout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// bhist cuts a long job name from the left, to "*" and its end, as bjobs
// does; -w keeps it whole.
func TestHistoryCutsNameFromLeft(t *testing.T) {
	j := &api.Job{JobId: 7, State: api.JobState_PEND, SubmitTime: 1,
		Spec: &api.JobSpec{User: "u", JobName: "averylongjobname_42", Command: "true"}}
	opt := JobsOptions{Now: time.Unix(10, 0)}
	var b bytes.Buffer
	if err := WriteHistory(&b, []*api.Job{j}, nil, opt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n7       u       *bname_42 ") {
		t.Errorf("bhist:\n%s", b.String())
	}
	b.Reset()
	opt.Wide = true
	WriteHistory(&b, []*api.Job{j}, nil, opt)
	if !strings.Contains(b.String(), " averylongjobname_42 ") {
		t.Errorf("bhist -w:\n%s", b.String())
	}
}

package sched

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	s := snapshot(hosts("a 2 r15s=1", "b 2"), mkJob(1, "", "n=3"), mkJob(2, "select[mem>64000]"), mkJob(3, "span[hosts=1]", "n=2"))
	d := Schedule(s)
	t.Log(render(s, d))
}

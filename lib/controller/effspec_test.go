package controller

import (
	"bytes"
	"maps"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// Jobs of one submission pattern share one effective spec, also after a
// restart; another pattern has its own; a spec no job holds is forgotten.
func TestEffSpecsInterned(t *testing.T) {
	c, _ := newTestController(t, 4, -1)
	spec := func(cmd string) *api.JobSpec {
		return &api.JobSpec{Command: cmd, Hold: true, SubmitCwd: "/tmp"}
	}
	a1, err1 := c.Submit(alice, spec("sleep 1"))
	a2, err2 := c.Submit(alice, spec("sleep 1"))
	b1, err3 := c.Submit(alice, spec("sleep 2"))
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	effOf := func(id int64) *effSpec {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.jobs[key{id, 0}].eff
	}
	if effOf(a1.JobId) != effOf(a2.JobId) {
		t.Error("two submissions of one pattern hold two effective specs")
	}
	if effOf(a1.JobId) == effOf(b1.JobId) {
		t.Error("two patterns share an effective spec")
	}
	if got := effOf(b1.JobId).GetCommand(); got != "sleep 2" {
		t.Errorf("command %q", got)
	}

	// A table holding only a spec nothing else holds forgets it.
	var tab effSpecs
	raw := func() []byte {
		e, err := tab.intern(spec("sleep 3"))
		if err != nil {
			t.Fatal(err)
		}
		raw := append([]byte(nil), e.raw...)
		if again, _ := tab.decode(raw); again != e {
			t.Error("decoding an interned encoding made another spec")
		}
		return raw
	}()
	for i := 0; ; i++ {
		runtime.GC()
		tab.mu.Lock()
		n := len(tab.m)
		tab.mu.Unlock()
		if n == 0 {
			break
		}
		if i == 100 {
			t.Fatal("an effective spec no job holds stays in the table")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if tab.lookup(raw) != nil {
		t.Error("a forgotten spec was found")
	}
}

// splitOrigin's hand encoding decodes to the map it took out, is the same
// bytes whatever the map's order, and uses the field's real number.
func TestSplitOrigin(t *testing.T) {
	if n := (&api.JobSpec{}).ProtoReflect().Descriptor().Fields().ByName("origin").Number(); n != originField {
		t.Fatalf("origin is field %d, splitOrigin writes %d", n, originField)
	}
	origin := map[string]string{"queue": "cluster default", "run_limit_sec": "profile fluent", "res_req": "", "": "x", "é": strings.Repeat("v", 300)}
	var first []byte
	for range 20 {
		spec := &api.JobSpec{Command: "true", Origin: maps.Clone(origin)}
		raw := splitOrigin(spec)
		if spec.Origin != nil {
			t.Fatal("the origin was left in the spec")
		}
		if first == nil {
			first = raw
		} else if !bytes.Equal(raw, first) {
			t.Fatal("the encoding depends on the map's order")
		}
		var back api.JobSpec
		if err := proto.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(back.Origin, origin) {
			t.Fatalf("decoded %v, want %v", back.Origin, origin)
		}
	}
	if raw := splitOrigin(&api.JobSpec{}); raw != nil {
		t.Errorf("no origin encoded as %q", raw)
	}
}

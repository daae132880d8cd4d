package controller

import (
	"context"
	"testing"
	"time"

	"xce/lib/api/rpc"
	"xce/lib/interactive"
)

// TestBattachSessionRelay: a remote worker's session is opened with its
// own id, the caller's frames (acks too) go to the worker under that id,
// the worker's frames come back until its exit status, and frames of
// another session are not this one's.
func TestBattachSessionRelay(t *testing.T) {
	w := newWorkerConn("hostB", "")
	in := make(chan *rpc.BattachFrame, 4)
	got := make(chan *rpc.BattachFrame, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.BattachSession(context.Background(), &rpc.BattachRequest{JobId: 5, Shell: "/bin/sh"}, in, func(f *rpc.BattachFrame) { got <- f })
	}()
	sent := func() *rpc.BattachFrame {
		t.Helper()
		for range 500 {
			w.mu.Lock()
			if len(w.out) > 0 {
				m := w.out[0]
				w.out = w.out[1:]
				w.mu.Unlock()
				return m.GetBattachFrame()
			}
			w.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("nothing sent to the worker")
		return nil
	}
	open := sent()
	if open.GetOpen().GetJobId() != 5 || open.Id == 0 || open.GetOpen().GetId() != open.Id {
		t.Fatalf("the open frame: %v", open)
	}
	id := open.Id
	in <- &rpc.BattachFrame{Type: int32(interactive.Stdin), Payload: []byte("ls\n")}
	if f := sent(); f.Id != id || string(f.Payload) != "ls\n" {
		t.Errorf("the caller's input went as %v", f)
	}
	w.battachFrame(&rpc.BattachFrame{Id: id + 1, Type: int32(interactive.Stdout), Payload: []byte("not mine")})
	w.battachFrame(&rpc.BattachFrame{Id: id, Type: int32(interactive.Stdout), Payload: []byte("out")})
	w.battachFrame(&rpc.BattachFrame{Id: id, Type: int32(interactive.Exit), Payload: []byte{0, 0, 0, 4}})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end at the exit status")
	}
	close(got)
	var frames []*rpc.BattachFrame
	for f := range got {
		frames = append(frames, f)
	}
	if len(frames) != 2 || string(frames[0].Payload) != "out" || byte(frames[1].Type) != interactive.Exit {
		t.Errorf("the caller got %v, want the output and the exit status", frames)
	}
	w.mu.Lock()
	left := len(w.sessions)
	w.mu.Unlock()
	if left != 0 {
		t.Errorf("%d sessions left registered", left)
	}
}

package worker

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/interactive"
	"xce/lib/testenv"
)

// TestBattachSession: battach with a terminal runs the runtime's exec
// -it under a pseudo-terminal (the command sees one), relays output as
// it comes within the window the caller's acks open, input, end of input
// and the exit status; the caller's going ends it. (A fake podman stands
// in: its exec runs the shell on the host.)
func TestBattachSession(t *testing.T) {
	shep := testenv.BuildShepherd(t)
	w, rs := newWorker(t, shep)
	bin := t.TempDir()
	fake := "#!/bin/sh\ncase \"$1\" in\nrun) exec sleep 60;;\nexec) [ -t 0 ] && echo on-a-tty; while [ $# -gt 1 ]; do shift; done; exec \"$1\";;\nesac\nexit 0\n"
	if err := os.WriteFile(filepath.Join(bin, "podman"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	j := job(1, "sleep 60", dir)
	j.Spec.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
	j.Effective = &api.JobSpec{Container: "podman[image(img)]"}
	if err := w.Start(j); err != nil {
		t.Fatal(err)
	}
	killAtEnd(t, w, rs, 1)

	// session runs one session: frames are sent in, each output frame
	// acked as a caller does; it returns the output and exit status.
	session := func(shell string, frames ...*rpc.BattachFrame) (string, int32, string) {
		t.Helper()
		in := make(chan *rpc.BattachFrame, 64)
		var out bytes.Buffer
		status, errMsg := int32(-1), ""
		done := make(chan struct{})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		go func() {
			defer close(done)
			w.BattachSession(ctx, &rpc.BattachRequest{Id: 7, JobId: 1, Shell: shell}, in, func(f *rpc.BattachFrame) {
				switch {
				case f.Id != 7:
					t.Errorf("a frame of session %d, want 7", f.Id)
				case f.Error != "":
					errMsg = f.Error
				case byte(f.Type) == interactive.Stdout:
					out.Write(f.Payload)
					in <- &rpc.BattachFrame{Ack: 1}
				case byte(f.Type) == interactive.Exit:
					status = int32(binary.BigEndian.Uint32(f.Payload))
				}
			})
		}()
		for _, f := range frames {
			in <- f
		}
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("the session with %s did not end; output so far %q", shell, out.String())
		}
		return out.String(), status, errMsg
	}
	stdin := func(s string) *rpc.BattachFrame {
		return &rpc.BattachFrame{Type: int32(interactive.Stdin), Payload: []byte(s)}
	}
	size := &rpc.BattachFrame{Type: int32(interactive.Winsize), Payload: interactive.WinsizePayload(33, 101)}

	// Far more output than the window holds comes through with the acks.
	out, status, msg := session("/bin/sh", size, stdin("stty size; echo x-$((1+2)); head -c 1000000 /dev/zero | tr '\\0' y | wc -c; head -c 300000 /dev/zero | tr '\\0' z; exit 5\n"))
	if msg != "" || status != 5 {
		t.Fatalf("session: status %d, error %q; output %q", status, msg, out)
	}
	for _, want := range []string{"on-a-tty", "33 101", "x-3", "1000000"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q: %.300q", want, out)
		}
	}
	if n := strings.Count(out, "z"); n < 300000 {
		t.Errorf("%d of the 300000 bytes of output came through", n)
	}

	// End of input ends cat.
	out, status, _ = session("/bin/cat", stdin("abc\n"), &rpc.BattachFrame{Type: int32(interactive.EOF)})
	if status != 0 || !strings.Contains(out, "abc") {
		t.Errorf("cat: status %d, output %q", status, out)
	}

	// The caller's going ends the session: no exit status.
	_, status, _ = session("/bin/sh", stdin("sleep 100\n"), &rpc.BattachFrame{Close: true})
	if status != -1 {
		t.Errorf("a session whose caller went ended with status %d", status)
	}

	// Another job's: refused.
	in := make(chan *rpc.BattachFrame)
	var refused string
	w.BattachSession(context.Background(), &rpc.BattachRequest{JobId: 2}, in, func(f *rpc.BattachFrame) { refused = f.Error })
	if refused != "Job <2> does not run on this host" {
		t.Errorf("a job not here: %q", refused)
	}
}

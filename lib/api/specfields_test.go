package api

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestKeepFields(t *testing.T) {
	spec := &JobSpec{Command: "sleep 1", Queue: "q", JobName: "n", User: "u", SubmitHost: "h",
		ResReq: []string{"a", "b"}, Env: []string{"A=1"}, Origin: map[string]string{"x": "y"}, RunLimitSec: 60}
	raw, err := proto.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	got := &JobSpec{}
	if err := proto.Unmarshal(KeepFields(raw, []int32{1, 3, 72, 9}), got); err != nil {
		t.Fatal(err)
	}
	want := &JobSpec{Command: "sleep 1", Queue: "q", User: "u", ResReq: []string{"a", "b"}}
	if !proto.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	if n := len(KeepFields(raw, nil)); n != 0 {
		t.Errorf("nothing kept: %d bytes", n)
	}
	bad := append(raw[:len(raw):len(raw)], 0xff)
	if string(KeepFields(bad, []int32{1})) != string(bad) {
		t.Error("a malformed message was not returned whole")
	}
}

func FuzzKeepFields(f *testing.F) {
	raw, _ := proto.Marshal(&JobSpec{Command: "x", Queue: "q", ResReq: []string{"r"}})
	f.Add(raw)
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := KeepFields(raw, []int32{1, 3})
		var a, b JobSpec
		if proto.Unmarshal(raw, &a) == nil {
			// What decodes whole decodes kept, with the kept fields equal.
			if err := proto.Unmarshal(out, &b); err != nil {
				t.Fatalf("kept bytes of a valid message do not decode: %v", err)
			}
			if a.Command != b.Command || a.Queue != b.Queue {
				t.Fatalf("kept %q %q, want %q %q", b.Command, b.Queue, a.Command, a.Queue)
			}
		}
	})
}

func TestDropFields(t *testing.T) {
	spec := &JobSpec{Command: "sleep 1", Queue: "q", Env: []string{"TOKEN=secret", "A=1"}, EnvSpec: "all, TOKEN=secret", RunLimitSec: 60}
	raw, err := proto.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	got := &JobSpec{}
	if err := proto.Unmarshal(DropFields(raw, JobSpecEnvField, JobSpecEnvSpecField), got); err != nil {
		t.Fatal(err)
	}
	if want := (&JobSpec{Command: "sleep 1", Queue: "q", RunLimitSec: 60}); !proto.Equal(got, want) {
		t.Errorf("dropped to %v, want %v", got, want)
	}
	noEnv, _ := proto.Marshal(&JobSpec{Command: "x"})
	if out := DropFields(noEnv, JobSpecEnvField); &out[0] != &noEnv[0] {
		t.Error("a spec without the field was copied")
	}
	bad := append(raw[:len(raw):len(raw)], 0xff)
	if out := DropFields(bad, JobSpecEnvField); out != nil {
		t.Errorf("a malformed message kept %d bytes", len(out))
	}
}

func FuzzDropFields(f *testing.F) {
	raw, _ := proto.Marshal(&JobSpec{Command: "x", Env: []string{"A=1"}})
	f.Add(raw)
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := DropFields(raw, JobSpecEnvField)
		var a, b JobSpec
		if proto.Unmarshal(raw, &a) == nil {
			if err := proto.Unmarshal(out, &b); err != nil {
				t.Fatalf("what is left of a valid message does not decode: %v", err)
			}
			if len(b.Env) != 0 || a.Command != b.Command {
				t.Fatalf("left env %q, command %q (want %q)", b.Env, b.Command, a.Command)
			}
		}
	})
}

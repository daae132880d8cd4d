package api_test

import (
	"sync"
	"testing"

	"google.golang.org/protobuf/reflect/protoregistry"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/testenv"
)

// TestDescriptorsBuiltOnFirstUse: a process that links lib/api builds no
// descriptor until it reflects on a message (tools/lazypb); then the file
// is registered whole, and a file of another package that imports it
// resolves the import to it, not to a placeholder. It runs in a fresh
// process of its own: anything else in this test binary may have
// reflected already.
func TestDescriptorsBuiltOnFirstUse(t *testing.T) {
	if !testenv.InFreshProcess(t) {
		return
	}
	for _, path := range []string{"api.proto", "rpc/worker.proto", "rpc/controller.proto"} {
		if _, err := protoregistry.GlobalFiles.FindFileByPath(path); err == nil {
			t.Fatalf("%s registered before any message was reflected on", path)
		}
	}
	if api.File_api_proto != nil {
		t.Fatal("api.proto built before its first use")
	}
	// An enum's name comes from the generated table: formatting a state
	// builds nothing.
	if got := api.JobState_PSUSP.String(); got != "PSUSP" || api.File_api_proto != nil {
		t.Fatalf("JobState_PSUSP.String() = %q, descriptors built: %v", got, api.File_api_proto != nil)
	}

	// The first uses race: each must see the whole file.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := api.JobState(99).String(); got != "99" {
				t.Errorf("JobState(99).String() = %q", got)
			}
			if f := (&api.JobSpec{}).ProtoReflect().Descriptor().Fields().ByName("command"); f == nil {
				t.Error("JobSpec has no field command")
			}
		}()
	}
	wg.Wait()
	if _, err := protoregistry.GlobalFiles.FindFileByPath("api.proto"); err != nil {
		t.Fatalf("after the first use: %v", err)
	}
	if _, err := protoregistry.GlobalTypes.FindMessageByName("xce.api.v1.JobSpec"); err != nil {
		t.Fatalf("after the first use: %v", err)
	}

	// rpc/worker.proto imports api.proto; its first use builds it with
	// the import resolved.
	fd := (&rpc.WorkerMessage{}).ProtoReflect().Descriptor().ParentFile()
	imports := fd.Imports()
	found := false
	for i := range imports.Len() {
		imp := imports.Get(i)
		if imp.Path() == "api.proto" {
			found = true
			if imp.IsPlaceholder() {
				t.Error("rpc/worker.proto's import of api.proto is a placeholder")
			}
		}
	}
	if !found {
		t.Fatal("rpc/worker.proto does not import api.proto")
	}
	if got := (&rpc.WorkerMessage{}).ProtoReflect().Descriptor().FullName(); got != "xce.api.v1.WorkerMessage" {
		t.Errorf("WorkerMessage's descriptor is %s", got)
	}
}

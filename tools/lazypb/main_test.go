package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLazy: the init function goes, the builder runs once on first use,
// every use of the type tables builds first, and the builder first builds
// each other package's file the Go types name (once per package, in their
// order).
func TestLazy(t *testing.T) {
	src, err := os.ReadFile("testdata/eager.pb.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Lazy(src)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		"\tsync \"sync\"\n",
		"var file_t_proto_once sync.Once\n",
		"func file_t_proto_init() { file_t_proto_once.Do(file_t_proto_build) }\n",
		"func file_t_proto_build() {\n\tother.Shade(0).Descriptor() ",
		"// its imports' descriptors first\n\t(*api.JobSpec)(nil).ProtoReflect() // its imports' descriptors first\n\tif File_t_proto != nil {",
		"func (Color) Descriptor() protoreflect.EnumDescriptor {\n\tfile_t_proto_init()\n\treturn file_t_proto_enumTypes[0].Descriptor()",
		"func (Color) Type() protoreflect.EnumType {\n\tfile_t_proto_init()\n\treturn &file_t_proto_enumTypes[0]",
		"func (x *M) ProtoReflect() protoreflect.Message {\n\tfile_t_proto_init()\n\tmi := &file_t_proto_msgTypes[0]",
		"func (x Color) String() string {\n\tif name, ok := Color_name[int32(x)]; ok {\n\t\treturn name\n\t}\n\treturn protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))\n}",
		// The builder's own use of the tables is left alone.
		"\t}\n\tfile_t_proto_msgTypes[0].OneofWrappers",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"func init()", "(*api.Job)(nil).ProtoReflect()"} {
		if strings.Contains(got, gone) {
			t.Errorf("output has %q:\n%s", gone, got)
		}
	}
	again, err := Lazy(out)
	if err != nil || string(again) != got {
		t.Errorf("a second rewrite changed the file (err %v)", err)
	}
	if _, err := Lazy([]byte("package t\n")); err == nil {
		t.Error("a file that is not protoc-gen-go's was rewritten")
	}
}

// TestGeneratedFilesAreLazy: the committed protoc-gen-go files (every
// *.pb.go under lib/api but the vtproto and grpc ones, as make proto
// picks them) are the rewrite's output.
func TestGeneratedFilesAreLazy(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../lib/api/*.pb.go", "../../lib/api/*/*.pb.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_vtproto.pb.go") && !strings.HasSuffix(f, "_grpc.pb.go") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 4 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Lazy(src)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if string(out) != string(src) {
			t.Errorf("%s is not lazypb's output: run make proto", f)
		}
	}
}

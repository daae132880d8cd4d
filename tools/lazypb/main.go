// Command lazypb rewrites protoc-gen-go's output so that a file's
// descriptors are built on first use instead of at program start.
//
// protoc-gen-go builds every message's and enum's descriptor, and
// registers the file, in an init function. lib/api's is the largest
// initialisation a command runs before main (a third of a millisecond and
// 86 KB for api.proto alone), and the commands never need it: they encode
// and decode with the vtproto-generated methods, which use no reflection.
// After the rewrite the descriptors are built, once, by the first call
// that reflects on one of the file's messages or enums (ProtoReflect,
// an enum's Descriptor or Type; an enum's String reads the generated
// name table and builds only for a number without a name). A file first
// builds the descriptors of the other packages' files it imports, so that
// its imports resolve in the registry as they did when every file was
// built at init.
//
// `make proto` runs it on the generated files; running it again changes
// nothing.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"regexp"
	"slices"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: lazypb FILE.pb.go...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		if err := rewriteFile(path); err != nil {
			fmt.Fprintln(os.Stderr, "lazypb:", err)
			os.Exit(1)
		}
	}
}

func rewriteFile(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := Lazy(src)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, src) {
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}

var (
	// protoc-gen-go's eager registration: func init() { file_x_proto_init() }
	eagerInitRE = regexp.MustCompile(`(?m)^func init\(\) \{ (file_\w+_proto)_init\(\) \}\n`)
	// The uses of a file's type tables outside its builder: a message's
	// ProtoReflect and an enum's Descriptor and Type.
	tableUseRE = regexp.MustCompile(`(?m)^\t(mi := &|return &|return )(file_\w+_proto)_(msgTypes|enumTypes)\[\d+\](\.Descriptor\(\))?\n`)
	// Another package's message or enum among a file's Go types.
	depTypeRE = regexp.MustCompile(`(?m)^\t\(\*(\w+)\.(\w+)\)\(nil\),`)
	depEnumRE = regexp.MustCompile(`(?m)^\t\((\w+)\.(\w+)\)\(0\),`)
	// An enum's String, which looks its name up in the descriptor.
	enumStringRE = regexp.MustCompile(`(?m)^func \(x (\w+)\) String\(\) string \{\n\treturn protoimpl\.X\.EnumStringOf\(x\.Descriptor\(\), protoreflect\.EnumNumber\(x\)\)\n\}\n`)
	importSync   = regexp.MustCompile(`(?m)^\tsync "sync"\n`)
	importBlock  = regexp.MustCompile(`(?m)^import \(\n`)
)

// Lazy returns src, a protoc-gen-go file, with its descriptors built on
// first use. A file already rewritten is returned unchanged.
func Lazy(src []byte) ([]byte, error) {
	m := eagerInitRE.FindSubmatchIndex(src)
	if m == nil {
		if bytes.Contains(src, []byte("_proto_once sync.Once")) {
			return src, nil // rewritten before
		}
		return nil, fmt.Errorf("no protoc-gen-go init function")
	}
	file := string(src[m[2]:m[3]])
	var b bytes.Buffer
	b.Write(src[:m[0]])
	fmt.Fprintf(&b, `// %[1]s_once builds the file's descriptors on first use, not at
// program start (tools/lazypb).
var %[1]s_once sync.Once

func %[1]s_init() { %[1]s_once.Do(%[1]s_build) }

`, file)
	rest := src[m[1]:]

	builder := []byte("func " + file + "_init() {\n")
	i := bytes.Index(rest, builder)
	if i < 0 {
		return nil, fmt.Errorf("no %s_init function", file)
	}
	b.Write(rest[:i])
	fmt.Fprintf(&b, "func %s_build() {\n", file)
	for _, dep := range importedPackages(src) {
		fmt.Fprintf(&b, "\t%s // its imports' descriptors first\n", dep)
	}
	b.Write(rest[i+len(builder):])
	out := b.Bytes()

	// Every use of the type tables first has the file built.
	out = tableUseRE.ReplaceAllFunc(out, func(line []byte) []byte {
		return append([]byte("\t"+file+"_init()\n"), line...)
	})
	// An enum's String reads the generated name table first: formatting
	// a state is no reason to build the descriptors.
	out = enumStringRE.ReplaceAll(out, []byte(`func (x $1) String() string {
	if name, ok := ${1}_name[int32(x)]; ok {
		return name
	}
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}
`))
	if !importSync.Match(out) {
		loc := importBlock.FindIndex(out)
		if loc == nil {
			return nil, fmt.Errorf("no import block")
		}
		out = append(out[:loc[1]:loc[1]], append([]byte("\tsync \"sync\"\n"), out[loc[1]:]...)...)
	}
	return format.Source(out)
}

// importedPackages returns a call that builds the descriptors of each
// other Go package whose messages or enums the file's Go types name (on
// that package's first such type), in the order the types are listed.
func importedPackages(src []byte) []string {
	start := bytes.Index(src, []byte("_goTypes = []any{\n"))
	if start < 0 {
		return nil
	}
	end := bytes.Index(src[start:], []byte("\n}\n"))
	if end < 0 {
		return nil
	}
	types := src[start : start+end]
	type use struct {
		at        int
		pkg, call string
	}
	var uses []use
	for _, m := range depTypeRE.FindAllSubmatchIndex(types, -1) {
		pkg, name := string(types[m[2]:m[3]]), string(types[m[4]:m[5]])
		uses = append(uses, use{m[0], pkg, fmt.Sprintf("(*%s.%s)(nil).ProtoReflect()", pkg, name)})
	}
	for _, m := range depEnumRE.FindAllSubmatchIndex(types, -1) {
		pkg, name := string(types[m[2]:m[3]]), string(types[m[4]:m[5]])
		uses = append(uses, use{m[0], pkg, fmt.Sprintf("%s.%s(0).Descriptor()", pkg, name)})
	}
	slices.SortFunc(uses, func(a, b use) int { return a.at - b.at })
	var calls []string
	seen := map[string]bool{}
	for _, u := range uses {
		if !seen[u.pkg] {
			seen[u.pkg] = true
			calls = append(calls, u.call)
		}
	}
	return calls
}

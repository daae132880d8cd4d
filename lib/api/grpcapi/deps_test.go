package grpcapi

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMessagesLinkNoGRPC keeps grpc-go out of the message packages, the
// shepherd and the commands (lib/cli, lib/client, xcetop): its package
// init and size cost every command and every job's shepherd part of a
// millisecond at start, and the commands speak gRPC without it
// (lib/client's h2.go, lib/rpcstatus). A service or a grpc status belongs
// in this package.
func TestMessagesLinkNoGRPC(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	for _, pkg := range []string{"xce/lib/api", "xce/lib/api/rpc", "xce/daemon/shepherd", "xce/lib/cli", "xce/lib/client", "xce/xcetop"} {
		// Each dependency with its imports, to name who brings grpc in.
		out, err := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			importer, imports, _ := strings.Cut(line, " ")
			if isGRPC(importer) {
				continue // reported at its importer
			}
			for _, imp := range strings.Fields(imports) {
				if isGRPC(imp) {
					t.Errorf("%s links grpc-go: %s imports %s", pkg, importer, imp)
				}
			}
		}
	}
}

func isGRPC(path string) bool {
	return path == "google.golang.org/grpc" || strings.HasPrefix(path, "google.golang.org/grpc/")
}

package tests

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A command's work before main, as the Go runtime reports it with
// GODEBUG=inittrace=1: how many packages run initialisation and the bytes
// they allocate. The budgets are the measured figures (60 packages and
// about 116 KB for every command) with a little room; lib/api's part
// grows by about 80 bytes with each message type the protocol gains. They stay there
// because a command links no grpc-go (lib/client speaks gRPC itself), no
// TLS (a call to a remote controller runs xce-dial, lib/tlsdial) and no
// net/http (lib/client frames HTTP/2 itself); lib/api's descriptors
// (86 KB) are built on first use, which a command's vtproto coding never
// makes (tools/lazypb); tables such as lib/lsfout's -o fields are built
// when first used. Counts and bytes, not time: they do not depend on how
// busy the machine is. When a change trips them,
// `GODEBUG=inittrace=1 bin/bjobs -h 2>&1 >/dev/null | sort -k8 -n` shows
// which package's init grew; make what it does lazy, or do not link it.
const (
	initPackagesBudget = 64
	// lib/api's MessageInfo slots are one allocation of over 32 KB, which
	// the runtime hands out in whole 8 KB pages: the claim, gang, borrow
	// and battach messages took it over a page boundary (42 KB to 51 KB),
	// and the whole command from 121 KB to 129 KB.
	initBytesBudget = 134 << 10
)

// Packages that a command must not initialise: grpc-go (with its
// resolvers, balancers, channelz and logging set up at init, about a
// fifth of a command's start), and the request tracing and HTML templates
// it would bring; TLS, X.509 and net/http, which only xce-dial needs.
var initForbidden = []string{
	"google.golang.org/grpc",
	"golang.org/x/net/trace",
	"html/template",
	"crypto/tls",
	"crypto/x509",
	"net/http",
}

type initStats struct {
	packages []string
	bytes    int
	allocs   int
}

// commandInit runs a command's -h with inittrace on and sums its lines
// ("init PKG @T ms, C ms clock, B bytes, A allocs").
func commandInit(t *testing.T, name string) initStats {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), "-h")
	cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1", "XCE_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if _, exited := err.(*exec.ExitError); !exited {
			t.Fatalf("%s: %v", name, err)
		}
	} // the exit status of -h does not matter here
	var st initStats
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: unexpected inittrace line %q", name, sc.Text())
		}
		st.packages = append(st.packages, f[1])
		st.bytes += b
		st.allocs += a
	}
	if len(st.packages) == 0 {
		t.Fatalf("%s -h printed no inittrace lines:\n%s", name, stderr.String())
	}
	return st
}

func TestCmdsInitBudget(t *testing.T) {
	for _, name := range commands {
		if name == "xcetop" {
			continue // the interactive dashboard, started once, not per call
		}
		st := commandInit(t, name)
		t.Logf("%s: %d packages initialised, %d bytes in %d allocations", name, len(st.packages), st.bytes, st.allocs)
		if len(st.packages) > initPackagesBudget {
			t.Errorf("%s initialises %d packages before main, budget %d:\n%s", name, len(st.packages), initPackagesBudget, strings.Join(st.packages, " "))
		}
		if st.bytes > initBytesBudget {
			t.Errorf("%s allocates %d bytes at init, budget %d", name, st.bytes, initBytesBudget)
		}
		for _, p := range st.packages {
			for _, bad := range initForbidden {
				if p == bad || strings.HasPrefix(p, bad+"/") {
					t.Errorf("%s initialises %s", name, p)
				}
			}
		}
	}
}

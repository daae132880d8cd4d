# XCE: `make run` builds everything and starts the single-host controller;
# `make test` runs the whole suite. Nothing here needs more than Go, make,
# git and a C compiler; tools are fetched through the Go module proxy.

GO        ?= go
BIN       := bin
COMMANDS  := bsub bjobs bkill bstop bresume bqueues bhosts bhist bpeek lsid lshosts lsload busers bacct badmin bapp bswitch brequeue btop bbot bwait bparams bugroup bmgroup bmod bjgroup lsadmin lsinfo blaunch blimits brsvadd brsvdel brsvs brsvjob brsvmod bgadd bgdel bgmod bclaim battach
TOOLS     := $(CURDIR)/.tools
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build run test lint bench soak proto clean man completions install package

# The commands and the per-job shepherd are built without cgo: a static
# binary starts in half the time, and they start often. xced keeps cgo so
# that user lookups go through the system's NSS (LDAP, SSSD). Everything
# is built without grpc-go's request tracing (golang.org/x/net/trace and
# its HTML templates, initialised by every command otherwise), which
# nothing here reads. tests/harness_test.go builds the same way.
GOTAGS    := grpcnotrace
# The release and the source revision every binary prints with -V and
# xced --version (lib/version): VERSION=1.2.3 make build for a release.
VERSION   ?= 0.1.0
REVISION  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo +dirty)
LDFLAGS   := -X xce/lib/version.release=$(VERSION) -X xce/lib/version.revision=$(REVISION)
GOBUILD   = $(GO) build -tags $(GOTAGS) -ldflags '$(LDFLAGS)'
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GOBUILD) -o $(BIN)/ $(addprefix ./,$(COMMANDS))
	CGO_ENABLED=0 $(GOBUILD) -o $(BIN)/xce-shepherd ./daemon/shepherd
	CGO_ENABLED=0 $(GOBUILD) -o $(BIN)/xce-dial ./daemon/dial
	CGO_ENABLED=0 $(GOBUILD) -o $(BIN)/xcetop ./xcetop
	$(GOBUILD) -o $(BIN)/xced ./daemon

run: build
	$(BIN)/xced

# The end-to-end tests build the binaries from source in their TestMain,
# which go test's result cache cannot see: they always run (-count=1), so
# that a change to xced or a command is never passed on a cached result.
# The concurrent packages run under the race detector, and only there:
# running them without it as well repeated the same tests. lib/store runs
# both ways, since its kill-during-submission test is skipped under -race.
RACE_ONLY_PKGS = ./lib/controller/ ./lib/worker/ ./lib/exec/ ./lib/agent/ ./lib/clusterauth/ ./lib/gpu/ ./lib/replica/ ./lib/client/ ./lib/unixrpc/ ./lib/interactive/
RACE_PKGS = ./lib/store/ $(RACE_ONLY_PKGS)

test: build lint
	$(GO) test $$($(GO) list ./... | grep -v '^xce/tests$$' | grep -vxF "$$($(GO) list $(RACE_ONLY_PKGS))")
	$(GO) test -count=1 -timeout 25m ./tests/
	$(GO) test -race $(RACE_PKGS)
	$(GO) test -race -short ./lib/top/...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench: build
	$(GO) test -run XXX -bench . -benchtime 1x ./tests/ -timeout 45m -args -bench-report
	$(GO) test -run '^$$' -bench 'SimulatedRun|Cycle100Buckets|Cycle1000Buckets|PlacementsPerSecond|Growth|PreemptCycle|CUCycle|InstancesCycle|JobGroupCycle|GangCycle|ResourceModelCycle' -benchtime 3x ./lib/sched/
	$(GO) test -run '^$$' -bench 'JobMemory' -benchtime 1x ./lib/controller/
	$(GO) test -run '^$$' -bench 'DispatchPace' -benchtime 1x ./lib/controller/
	$(GO) test -run '^$$' -bench 'Restart' -benchtime 3x ./lib/controller/
	$(GO) test -run '^$$' -bench 'Simulate' -benchtime 1x -timeout 60m ./lib/sim/
	$(GO) test -run '^$$' -bench 'JobOverhead|JobFloor' -benchtime 1x ./lib/worker/
	$(GO) test -run '^$$' -bench 'WarmRun' -benchtime 1x ./lib/exec/
	$(GO) test -run '^$$' -bench 'Scrape' -benchtime 200x ./lib/metrics/
	$(GO) test -run '^$$' -bench 'LoneWrite' -benchtime 3x ./lib/replica/

# make soak: the fault-injection suite (tests/fault_test.go) with 50 kill -9
# restarts per test instead of make test's 5 (SOAK_RESTARTS=N to change).
SOAK_RESTARTS ?= 50
soak: build
	$(GO) test ./tests/ -run 'TestFault' -count=1 -v -timeout 60m -args -fault-restarts $(SOAK_RESTARTS)

proto:
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@v1.75.0
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
	GOBIN=$(TOOLS) $(GO) install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto@v0.6.1-0.20240319094008-0393e58bdf10
	cd lib/api && PATH=$(TOOLS):$$PATH buf generate
	$(GO) run ./tools/lazypb $(filter-out %_vtproto.pb.go %_grpc.pb.go,$(wildcard lib/api/*.pb.go lib/api/*/*.pb.go))

# man/ and completions/ are generated from the commands' definitions and
# man/src (tools/genman), then committed; tools/genman's test fails when they
# are out of date.
man:
	$(GO) run ./tools/genman

completions: man

# make install PREFIX=/usr/local [DESTDIR=...]: the commands, xced and the
# shepherd, the man pages, and the bash and zsh completions.
PREFIX    ?= /usr/local
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 755 $(BIN)/* $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/man1/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/man5/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 man/man8/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 644 completions/bash/* $(DESTDIR)$(PREFIX)/share/bash-completion/completions/
	install -m 644 completions/zsh/_* $(DESTDIR)$(PREFIX)/share/zsh/site-functions/

# make package: dist/xce_VERSION_ARCH.deb and dist/xce-VERSION.ARCH.rpm, the
# whole suite with its systemd units and /etc/xce/xce.toml (packaging/).
# nfpm is the Go-native packager: it writes both formats from one
# definition, without dpkg-deb or rpmbuild here. VERSION defaults to the
# latest vX.Y.Z tag (0.0.0 without one) plus the commit count and hash, so
# that every commit's package sorts after the one before.
NFPM      := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.48.0
GIT_TAG   := $(shell git describe --tags --match 'v[0-9]*' --abbrev=0 2>/dev/null | sed 's/^v//')
VERSION   ?= $(or $(GIT_TAG),0.0.0)+git$(shell git rev-list --count HEAD 2>/dev/null).$(shell git rev-parse --short HEAD 2>/dev/null)
DIST      := dist
package: build
	@mkdir -p $(DIST)
	XCE_BIN=$(BIN) XCE_VERSION=$(VERSION) GOARCH=$$($(GO) env GOARCH) $(GO) run $(NFPM) package --config packaging/nfpm.yaml --packager deb --target $(DIST)/
	XCE_BIN=$(BIN) XCE_VERSION=$(VERSION) GOARCH=$$($(GO) env GOARCH) $(GO) run $(NFPM) package --config packaging/nfpm.yaml --packager rpm --target $(DIST)/
	XCE_TEST_PACKAGE=1 $(GO) test -count=1 ./tests/ -run '^TestPackage(Deb|Rpm)$$'

clean:
	rm -rf $(BIN) $(DIST)

# XCE: `make run` builds everything and starts the single-host controller;
# `make test` runs the whole suite. Nothing here needs more than Go, make,
# git and a C compiler; tools are fetched through the Go module proxy.

GO        ?= go
BIN       := bin
COMMANDS  := bsub bjobs bkill bstop bresume bqueues bhosts bhist bpeek lsid lshosts lsload busers bacct badmin bapp bswitch brequeue btop bbot bwait
TOOLS     := $(CURDIR)/.tools
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build run test lint race bench proto clean

# The commands and the per-job shepherd are built without cgo: a static
# binary starts in half the time, and they start often. xced keeps cgo so
# that user lookups go through the system's NSS (LDAP, SSSD).
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ $(addprefix ./,$(COMMANDS))
	CGO_ENABLED=0 $(GO) build -o $(BIN)/xce-shepherd ./daemon/shepherd
	CGO_ENABLED=0 $(GO) build -o $(BIN)/xcetop ./xcetop
	$(GO) build -o $(BIN)/xced ./daemon

run: build
	$(BIN)/xced

test: build lint
	$(GO) test ./...
	$(GO) test -race ./lib/controller/ ./lib/store/ ./lib/worker/ ./lib/exec/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench: build
	$(GO) test -run XXX -bench . -benchtime 1x ./tests/ -timeout 30m -args -bench-report

proto:
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@v1.75.0
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
	cd lib/api && PATH=$(TOOLS):$$PATH buf generate

clean:
	rm -rf $(BIN)

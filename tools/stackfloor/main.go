// Command stackfloor is the empty-controller RSS row's reference
// (tests/shortjobs_bench_test.go): the least a controller built on this
// project's stack holds at rest. It opens the store xced uses (lib/store,
// Badger) in the directory its argument names, serves an empty gRPC server
// on a socket there, links hashicorp/raft as xced does, and waits to be
// killed. Nothing of the controller is in it.
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	_ "github.com/hashicorp/raft" // linked, as in xced
	"google.golang.org/grpc"

	"xce/lib/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: stackfloor DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	st, err := store.Open(filepath.Join(dir, "state"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer st.Close()
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := grpc.NewServer()
	go srv.Serve(ln)
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	srv.Stop()
}

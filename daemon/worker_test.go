package main

import (
	"io"
	"strings"
	"testing"
)

// `xced worker` needs the controller, the token file and its directory.
func TestWorkerCommandNeedsFlags(t *testing.T) {
	cmd := workerCommand()
	cmd.SetArgs([]string{"--name", "hostA"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	if err == nil {
		t.Fatal("xced worker ran without --controller, --token-file and --dir")
	}
	for _, flag := range []string{"controller", "token-file", "dir"} {
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("error %q does not name --%s", err, flag)
		}
	}
}

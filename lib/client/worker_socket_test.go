package client

import (
	"strings"
	"testing"

	"xce/lib/api"
)

// On an execution host with no controllers named, the local socket is
// the worker's: a command says what to set, for unary and streamed calls.
func TestWorkerSocketWithoutControllers(t *testing.T) {
	t.Setenv("XCE_CONTROLLERS", "")
	t.Setenv("LSF_ENVDIR", t.TempDir())
	serveLocal(t, workerSocket{f: &fake{name: "worker", tok: newTok(t)}})
	c := dialT(t)
	_, err := c.Info(ctxT(t), &api.ClusterInfoRequest{})
	if err == nil || !strings.Contains(err.Error(), "set XCE_CONTROLLERS=") || !strings.Contains(err.Error(), "LSF_MASTER_LIST") {
		t.Errorf("Info: %v", err)
	}
	_, err = c.Query(ctxT(t), &api.QueryRequest{})
	if err == nil || !strings.Contains(err.Error(), "set XCE_CONTROLLERS=") || strings.Contains(err.Error(), "method Query not implemented") && !strings.Contains(err.Error(), "xced worker") {
		t.Errorf("Query: %v", err)
	}
}

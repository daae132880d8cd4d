// Package client finds the XCE controller and dials it: every command and
// xcetop use it. It speaks gRPC over HTTP/2 itself (h2.go), without
// grpc-go, whose package initialisation and size cost a short command as
// much as its call (TestCommandsLinkNoGRPC keeps it out). The controller's directory is $XCE_DIR when set, else the
// XCE_DIR of $LSF_ENVDIR/lsf.conf (xced writes one in DIR/conf); otherwise
// the caller's own default directory when a controller runs there, else the
// system one. Its socket is DIR/xced.sock.
//
// # Several controllers
//
// When the cluster has controller candidates ($XCE_CONTROLLERS, else
// LSF_MASTER_LIST of lsf.conf; see Controllers), one of them is the
// leader and the others are standbys that answer every call with
// api.NotLeader. A call then goes to the local socket first: the leader
// serves it; a standby, or the socket of `xced worker` (which serves only
// Credential), makes the client dial the candidates over TCP, proving
// the user's uid and gid with the proofs the local socket mints for each
// TLS session (clusterauth.UserCredentials), and follow the redirects to
// the leader. TLS runs in xce-dial, next to the command (lib/tlsdial), so
// that no command links it. While none is elected, or the candidates do
// not answer, it tries them again for up to $XCE_FAILOVER_TIMEOUT
// (default 30s). A call is sent again only when no leader can have acted
// on it.
package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"xce/lib/api"
	"xce/lib/lsfenv"
)

// SocketName is the controller's socket inside its directory.
const SocketName = "xced.sock"

// SystemDir is the state directory of a controller run by root.
const SystemDir = "/var/lib/xce"

// DefaultDir is where xced keeps its state when started with no --dir: a
// per-user directory, or SystemDir for root.
func DefaultDir() string {
	if os.Geteuid() == 0 {
		return SystemDir
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "xce")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), fmt.Sprintf("xce-%d", os.Getuid()))
	}
	return filepath.Join(home, ".local", "state", "xce")
}

// Dir returns the directory of the controller this process talks to.
func Dir() string { return dirOf((&lsfConf{}).get) }

// lsfConf reads lsf.conf once, when first asked.
type lsfConf struct {
	c    *lsfenv.Conf
	read bool
}

func (l *lsfConf) get() *lsfenv.Conf {
	if !l.read {
		l.read = true
		if c, err := lsfenv.Load(os.Getenv); err == nil {
			l.c = c
		}
	}
	return l.c
}

func dirOf(conf func() *lsfenv.Conf) string {
	if d := os.Getenv("XCE_DIR"); d != "" {
		return d
	}
	if c := conf(); c != nil && c.Get("XCE_DIR") != "" {
		return c.Get("XCE_DIR") // LSF_ENVDIR names the controller's conf/ (lib/lsfenv)
	}
	own := DefaultDir()
	if _, err := os.Stat(filepath.Join(own, SocketName)); err == nil {
		return own
	}
	if _, err := os.Stat(filepath.Join(SystemDir, SocketName)); err == nil {
		return SystemDir
	}
	return own
}

// Client is a connection to the controller. Its methods are the
// Controller service's calls (calls.go).
type Client struct {
	cc  caller
	fo  *failover // with controller candidates
	Dir string
}

// ErrNotRunning says no controller answers at the expected socket.
var ErrNotRunning = errors.New("controller not running")

// Dial connects to the controller. It checks that the socket exists so
// that a missing controller is reported at once and precisely.
func Dial() (*Client, error) {
	conf := &lsfConf{}
	dir := dirOf(conf.get)
	sock := filepath.Join(dir, SocketName)
	cands := Controllers(os.Getenv, conf.get)
	if len(cands) == 0 {
		// A candidate's own directory names the candidates in the lsf.conf
		// it writes (DIR/conf), so XCE_DIR alone finds the leader.
		if c, err := lsfenv.LoadFile(filepath.Join(dir, "conf", lsfenv.ConfName)); err == nil {
			cands = parseList(strings.Fields(c.Get("LSF_MASTER_LIST")))
		}
	}
	if _, err := os.Stat(sock); err != nil {
		if len(cands) > 0 {
			return nil, fmt.Errorf("%w: no xced or xced worker socket at %s, which vouches for this user to the controllers %s; start `xced worker` on this host, or set XCE_DIR", ErrNotRunning, sock, strings.Join(cands, " "))
		}
		return nil, notRunning(sock)
	}
	if len(cands) == 0 {
		return &Client{cc: localOnly{newH2Redialer(sock), sock}, Dir: dir}, nil
	}
	fo := newFailover(newH2Redialer(sock), sock, cands, failoverTimeout(os.Getenv))
	return &Client{cc: fo, fo: fo, Dir: dir}, nil
}

func notRunning(sock string) error {
	return fmt.Errorf("%w: no xced socket at %s; start the controller with `xced` (or `xced --dir DIR` and set XCE_DIR=DIR)", ErrNotRunning, sock)
}

// Close closes the connections.
func (c *Client) Close() error { return c.cc.Close() }

// NotRunningError turns a failed call into the not-running error when the
// socket is there but nothing answers (a stale socket), or, with
// controller candidates, when no leader answered in time.
func (c *Client) NotRunningError() error {
	if c.fo != nil {
		return fmt.Errorf("%w: no leader among the controllers %s answered within %s (XCE_FAILOVER_TIMEOUT), nor the local socket %s", ErrNotRunning,
			strings.Join(c.fo.cands, " "), c.fo.timeout, filepath.Join(c.Dir, SocketName))
	}
	return notRunning(filepath.Join(c.Dir, SocketName))
}

// Jobs is a query's result with each job's specs, pending reason and usage
// attached.
type Jobs struct {
	Jobs     []*api.Job
	NotFound []*api.JobRef
}

// Query runs a query and assembles its streamed replies.
func (c *Client) Query(ctx context.Context, req *api.QueryRequest) (*Jobs, error) {
	out := &Jobs{}
	nf, err := c.QueryEach(ctx, req, func(jobs []*api.Job) error {
		out.Jobs = append(out.Jobs, jobs...)
		return nil
	})
	out.NotFound = nf
	return out, err
}

// QueryEach runs a query and hands each streamed part to fn as it comes,
// so that a listing of many jobs is printed while the rest still travels.
// It returns the job ids that named no job.
//
// The specs are received encoded and decoded once per distinct encoding:
// jobs of one submission pattern (an array's elements, a workflow's many
// similar jobs) share one decoded spec, which callers must not change.
func (c *Client) QueryEach(ctx context.Context, req *api.QueryRequest, fn func([]*api.Job) error) ([]*api.JobRef, error) {
	stream, err := c.queryStream(ctx, req)
	if err != nil {
		return nil, err
	}
	var notFound []*api.JobRef
	dec := specDecoder{}
	for {
		// A QueryReply on the wire, with its spec maps' values left
		// encoded (lib/api's QueryReplyEncoded).
		part := &api.QueryReplyEncoded{}
		err := stream.RecvMsg(part)
		if errors.Is(err, io.EOF) {
			return notFound, nil
		}
		if err != nil {
			return nil, err
		}
		notFound = append(notFound, part.NotFound...)
		effective, err := dec.decodeAll(part.Effective)
		if err != nil {
			return nil, err
		}
		specs, err := dec.decodeAll(part.Specs)
		if err != nil {
			return nil, err
		}
		for i, j := range part.Jobs {
			j.Effective = effective[j.JobId]
			// Without the submitted spec (not asked for), the effective one
			// answers for it: they differ only where defaults applied.
			j.Spec = specs[j.JobId]
			if j.Spec == nil {
				j.Spec = j.Effective
			}
			if i < len(part.PendReasons) {
				j.PendReason = part.PendReasons[i]
			}
			if i < len(part.Usage) && isRunning(j.State) {
				j.Usage = part.Usage[i]
			}
		}
		if err := fn(part.Jobs); err != nil {
			return nil, err
		}
	}
}

// specDecoder decodes a query's specs, each distinct encoding once.
type specDecoder struct {
	seen map[string]*api.JobSpec
}

// maxSharedSpecs bounds the decoded specs a query keeps for reuse, so
// that a listing of many different jobs is not held whole.
const maxSharedSpecs = 4096

// decodeAll decodes spec map entries into a map by job id (the last entry
// for an id wins, as for a map on the wire).
func (d *specDecoder) decodeAll(entries []*api.EncodedSpec) (map[int64]*api.JobSpec, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if d.seen == nil || len(d.seen) > maxSharedSpecs {
		d.seen = make(map[string]*api.JobSpec, min(len(entries), maxSharedSpecs))
	}
	out := make(map[int64]*api.JobSpec, len(entries))
	for _, e := range entries {
		spec, ok := d.seen[string(e.Value)]
		if !ok {
			spec = &api.JobSpec{}
			if err := spec.UnmarshalVT(e.Value); err != nil {
				return nil, fmt.Errorf("decode the spec of job %d: %w", e.Key, err)
			}
			d.seen[string(e.Value)] = spec
		}
		out[e.Key] = spec
	}
	return out, nil
}

func isRunning(s api.JobState) bool {
	return s == api.JobState_RUN || s == api.JobState_USUSP || s == api.JobState_SSUSP
}

package worker

// An interactive job's terminal relayed to a bsub on another host
// (bsub -I, -Ip, -Is).
//
// The controller leaves a job's interactive address out when the shepherd
// cannot dial bsub's socket itself (the job runs on another host, or bsub
// reached the controller over TCP). The worker then listens on the job's
// relay socket, RunDir/ID.IDX/term.sock (root's directory, 0711; the
// socket answers the job's uid only, as task.sock does), and names it in
// the launch (api.Launch.interactive_addr). The shepherd dials it and
// speaks lib/interactive's frames; the worker carries each up its link to
// the controller (TermLink) and bsub's frames, which the controller sends
// down, to the shepherd (TermDown).
//
// Both ways are bounded: the worker sends at most termWindow bytes of the
// job's output the controller has not acknowledged (it stops reading the
// shepherd, whose terminal then fills and holds the job back), and
// acknowledges bsub's input once written to the shepherd, which the
// controller waits for before it reads more of bsub's.
//
// A hang-up from the controller (bsub went away), the link's loss, or the
// worker's end closes the shepherd's connection: the shepherd hangs the
// job up, as a closed terminal would.

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/interactive"
)

// TermSocketName is the relay socket's name in the job's directory.
const TermSocketName = "term.sock"

// TermWindow is how many bytes of a relayed terminal's frames either side
// sends before the other acknowledges them.
const TermWindow = 256 << 10

// termDrain bounds how long the relay waits for the shepherd's last
// frames once the shepherd has gone.
const termDrain = 5 * time.Second

// TermLink carries relayed terminals' frames and acknowledgements to the
// controller; a call may wait while the link's queue is full, and says
// false when there is no link.
type TermLink interface {
	TermUp(*rpc.TermData) bool
	TermAckUp(*rpc.TermAck) bool
}

// termTable is the worker's relayed terminals.
type termTable struct {
	mu     sync.Mutex
	link   TermLink
	relays map[jobKey]*termRelay
}

// SetTermLink sets where relayed terminals' frames go.
func (w *Worker) SetTermLink(l TermLink) {
	w.trm.mu.Lock()
	w.trm.link = l
	w.trm.mu.Unlock()
}

func (w *Worker) termLink() TermLink {
	w.trm.mu.Lock()
	defer w.trm.mu.Unlock()
	return w.trm.link
}

// termRelayed says whether a job's terminal is relayed by this worker: an
// interactive job whose spec names no address of bsub's.
func termRelayed(job *api.Job) bool {
	if job.GetSpec().GetInteractive() == api.Interactive_BATCH && job.GetEffective().GetInteractive() == api.Interactive_BATCH {
		return false
	}
	return job.GetSpec().GetInteractiveAddr() == "" && job.GetEffective().GetInteractiveAddr() == ""
}

// termRelay is one job's relayed terminal.
type termRelay struct {
	w  *Worker
	k  jobKey
	ln net.Listener

	mu      sync.Mutex
	cond    *sync.Cond
	conn    *interactive.Conn
	unacked int64           // output sent up, not acknowledged
	in      []*rpc.TermData // bsub's frames, not yet written
	inWake  chan struct{}
	closed  bool
}

// openTerm listens on the job's relay socket for its shepherd (uid only).
func (w *Worker) openTerm(k jobKey, uid int) error {
	path := filepath.Join(w.JobDir(k.id, k.idx), TermSocketName)
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	// In root's own directory: the path is root's to change.
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return err
	}
	r := &termRelay{w: w, k: k, ln: ln, inWake: make(chan struct{}, 1)}
	r.cond = sync.NewCond(&r.mu)
	w.trm.mu.Lock()
	if w.trm.relays == nil {
		w.trm.relays = map[jobKey]*termRelay{}
	}
	if old := w.trm.relays[k]; old != nil {
		old.hangUp()
	}
	w.trm.relays[k] = r
	w.trm.mu.Unlock()
	go r.serve(uid)
	return nil
}

// serve takes the shepherd's connection and relays it until it ends.
func (r *termRelay) serve(uid int) {
	defer r.w.dropTerm(r)
	var c net.Conn
	for {
		nc, err := r.ln.Accept()
		if err != nil {
			return
		}
		if id, err := peerUID(nc); err != nil || id != uid {
			slog.Warn("refused a connection to a job's terminal socket: not the job's user", "job", r.k.id, "index", r.k.idx,
				"peer_uid", id, "job_uid", uid, "err", err)
			nc.Close()
			continue
		}
		c = nc
		break
	}
	// One shepherd per dispatch: no other connection is taken.
	r.ln.Close()
	conn := interactive.Wrap(c)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		conn.Close()
		return
	}
	r.conn = conn
	r.mu.Unlock()
	go r.writeIn(conn)
	link := r.w.termLink()
	for {
		typ, p, err := conn.Recv()
		if err != nil {
			break
		}
		if !r.reserve(int64(len(p))) {
			break
		}
		if link == nil || !link.TermUp(&rpc.TermData{JobId: r.k.id, Index: r.k.idx, Type: int32(typ), Payload: p}) {
			break
		}
	}
	if link != nil {
		link.TermUp(&rpc.TermData{JobId: r.k.id, Index: r.k.idx, Close: true})
	}
	r.hangUp()
}

// reserve waits until n more bytes fit in the window; false once closed.
func (r *termRelay) reserve(n int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.closed && r.unacked > 0 && r.unacked+n > TermWindow {
		r.cond.Wait()
	}
	r.unacked += n
	return !r.closed
}

// writeIn writes bsub's frames to the shepherd, acknowledging each.
func (r *termRelay) writeIn(conn *interactive.Conn) {
	for {
		r.mu.Lock()
		for len(r.in) == 0 && !r.closed {
			r.mu.Unlock()
			<-r.inWake
			r.mu.Lock()
		}
		if r.closed {
			r.mu.Unlock()
			return
		}
		f := r.in[0]
		r.in = r.in[1:]
		r.mu.Unlock()
		if err := conn.Send(byte(f.Type), f.Payload); err != nil {
			r.hangUp()
			return
		}
		if link := r.w.termLink(); link != nil && len(f.Payload) > 0 {
			link.TermAckUp(&rpc.TermAck{JobId: r.k.id, Index: r.k.idx, Bytes: int64(len(f.Payload))})
		}
	}
}

// hangUp ends the relay: the shepherd's connection closes, and with it
// the job's terminal.
func (r *termRelay) hangUp() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	conn := r.conn
	r.in = nil
	r.cond.Broadcast()
	r.mu.Unlock()
	select {
	case r.inWake <- struct{}{}:
	default:
	}
	r.ln.Close()
	if conn != nil {
		conn.Close()
	}
}

func (w *Worker) dropTerm(r *termRelay) {
	w.trm.mu.Lock()
	if w.trm.relays[r.k] == r {
		delete(w.trm.relays, r.k)
	}
	w.trm.mu.Unlock()
	os.Remove(filepath.Join(w.JobDir(r.k.id, r.k.idx), TermSocketName))
}

func (w *Worker) termRelay(id int64, idx int32) *termRelay {
	w.trm.mu.Lock()
	defer w.trm.mu.Unlock()
	return w.trm.relays[jobKey{id, idx}]
}

// TermDown takes a frame of bsub's for a job's relayed terminal, or its
// hang-up. It does not wait: the controller sends no more than the
// window before the acknowledgements.
func (w *Worker) TermDown(td *rpc.TermData) {
	r := w.termRelay(td.JobId, td.Index)
	if r == nil {
		return
	}
	if td.Close {
		r.hangUp()
		return
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.in = append(r.in, td)
	r.mu.Unlock()
	select {
	case r.inWake <- struct{}{}:
	default:
	}
}

// TermAcked takes the controller's acknowledgement of a job's output.
func (w *Worker) TermAcked(a *rpc.TermAck) {
	r := w.termRelay(a.JobId, a.Index)
	if r == nil {
		return
	}
	r.mu.Lock()
	r.unacked = max(0, r.unacked-a.Bytes)
	r.cond.Broadcast()
	r.mu.Unlock()
}

// TermLinkLost hangs up every relayed terminal: the link to the
// controller, and so to bsub, is gone.
func (w *Worker) TermLinkLost() {
	w.trm.mu.Lock()
	var rs []*termRelay
	for _, r := range w.trm.relays {
		rs = append(rs, r)
	}
	w.trm.mu.Unlock()
	for _, r := range rs {
		r.hangUp()
	}
}

// endTerm is the job's end here: the relay stops taking connections, and
// one still open gets termDrain to deliver the shepherd's last frames.
func (w *Worker) endTerm(k jobKey) {
	r := w.termRelay(k.id, k.idx)
	if r == nil {
		return
	}
	r.ln.Close()
	time.AfterFunc(termDrain, r.hangUp)
}

// errNoTermLink is a relayed terminal without a way to the controller.
var errNoTermLink = errors.New("no way to the controller from this worker for the interactive job's terminal")

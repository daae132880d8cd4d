package agent

// Interactive jobs' terminals relayed to bsub (lib/worker/term.go): the
// worker's frames and acknowledgements go up the stream (emit waits while
// the stream's queue is full, which holds the job's output back), bsub's
// come down to the worker. The stream's loss hangs the terminals up.

import "xce/lib/api/rpc"

// TermUp is the worker's TermLink: a frame of a job side.
func (a *agent) TermUp(td *rpc.TermData) bool {
	return a.emit(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_Term{Term: td}})
}

// TermAckUp is the worker's TermLink: bsub's input taken.
func (a *agent) TermAckUp(ack *rpc.TermAck) bool {
	return a.emit(&rpc.WorkerMessage{Msg: &rpc.WorkerMessage_TermAck{TermAck: ack}})
}

package client

import (
	"context"

	"xce/lib/rpcstatus"
)

// localOnly is the caller of a client with no controller candidates: the
// local socket is all there is. When that socket is an `xced worker`'s
// (an execution host), which answers only Credential, the command says
// what to set instead of "method Query not implemented".
type localOnly struct {
	*h2Redialer
	sock string
}

func (l localOnly) Invoke(ctx context.Context, method string, in, out vtMessage) error {
	return l.explain(l.h2Redialer.Invoke(ctx, method, in, out))
}

func (l localOnly) ServerStream(ctx context.Context, method string, in vtMessage) (recvStream, error) {
	s, err := l.h2Redialer.ServerStream(ctx, method, in)
	if err != nil {
		return nil, l.explain(err)
	}
	return localOnlyStream{s, l}, nil
}

type localOnlyStream struct {
	recvStream
	l localOnly
}

func (s localOnlyStream) RecvMsg(m vtMessage) error { return s.l.explain(s.recvStream.RecvMsg(m)) }

// explain turns Unimplemented from the local socket into what to do.
func (l localOnly) explain(err error) error {
	if err == nil || rpcstatus.CodeOf(err) != rpcstatus.Unimplemented {
		return err
	}
	return rpcstatus.Errorf(rpcstatus.Unimplemented, "%s is the socket of an `xced worker` (an execution host), not of the controller (%s): set XCE_CONTROLLERS=HOST:PORT[,HOST:PORT...] to the controllers, or LSF_MASTER_LIST in the lsf.conf of $LSF_ENVDIR", l.sock, rpcstatus.MessageOf(err))
}

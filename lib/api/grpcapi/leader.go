package grpcapi

import (
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/rpcstatus"
)

// NotLeaderReason is the ErrorInfo reason of a standby controller's
// answer: the call was not acted on, and should go to the leader. The
// commands read it with lib/rpcstatus, which owns the name.
const NotLeaderReason = rpcstatus.NotLeaderReason

// NotLeader is a standby controller's answer to a call it does not serve:
// codes.Unavailable with an ErrorInfo naming the leader's address
// (HOST:PORT), or none while no leader is elected. Nothing was done, so a
// client may send the same call to the leader.
func NotLeader(leader string) error {
	msg := "this controller is a standby; the leader is " + leader
	if leader == "" {
		msg = "this controller is a standby and no leader is elected yet"
	}
	st := status.New(codes.Unavailable, msg)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: NotLeaderReason, Domain: "xce", Metadata: map[string]string{"leader": leader}}); err == nil {
		st = d
	}
	return st.Err()
}

// LeaderOf tells whether err is a standby's NotLeader answer, and the
// leader it named ("" when none is elected).
func LeaderOf(err error) (leader string, ok bool) {
	st, isStatus := status.FromError(err)
	if !isStatus {
		var se interface{ GRPCStatus() *status.Status }
		if !errors.As(err, &se) {
			return "", false
		}
		st = se.GRPCStatus()
	}
	for _, d := range st.Details() {
		if ei, isInfo := d.(*errdetails.ErrorInfo); isInfo && ei.Reason == NotLeaderReason {
			return ei.Metadata["leader"], true
		}
	}
	return "", false
}

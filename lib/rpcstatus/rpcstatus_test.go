package rpcstatus_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"xce/lib/api/grpcapi"
	"xce/lib/rpcstatus"
)

// onWire is how a client sees a grpc-go server's status: code, message
// and the encoded details of its trailers.
func onWire(t testing.TB, err error) error {
	st := status.Convert(err)
	b, merr := proto.Marshal(st.Proto())
	if merr != nil {
		t.Fatal(merr)
	}
	return rpcstatus.WithDetails(rpcstatus.Code(st.Code()), st.Message(), b)
}

func TestLeaderOf(t *testing.T) {
	other, _ := status.New(codes.Unavailable, "x").WithDetails(&errdetails.ErrorInfo{Reason: "OTHER", Metadata: map[string]string{"leader": "h:1"}})
	mixed, _ := status.New(codes.Unavailable, "x").WithDetails(&errdetails.DebugInfo{Detail: "d"},
		&errdetails.ErrorInfo{Reason: rpcstatus.NotLeaderReason, Domain: "xce", Metadata: map[string]string{"a": "b", "leader": "h2:7869"}})
	for _, tc := range []struct {
		name   string
		err    error
		leader string
		ok     bool
	}{
		{"leader named", onWire(t, grpcapi.NotLeader("host1:7869")), "host1:7869", true},
		{"none elected", onWire(t, grpcapi.NotLeader("")), "", true},
		{"wrapped", fmt.Errorf("submit: %w", onWire(t, grpcapi.NotLeader("h:1"))), "h:1", true},
		{"other reason", onWire(t, other.Err()), "", false},
		{"among other details", onWire(t, mixed.Err()), "h2:7869", true},
		{"no details", rpcstatus.New(rpcstatus.Unavailable, "down"), "", false},
		{"not a status", errors.New("x"), "", false},
		{"nil", nil, "", false},
		{"garbage details", rpcstatus.WithDetails(rpcstatus.Unavailable, "x", []byte{0x1a, 0xff, 0x01}), "", false},
	} {
		leader, ok := rpcstatus.LeaderOf(tc.err)
		if leader != tc.leader || ok != tc.ok {
			t.Errorf("%s: LeaderOf = %q, %v; want %q, %v", tc.name, leader, ok, tc.leader, tc.ok)
		}
	}
}

func TestCodes(t *testing.T) {
	// The names and values are gRPC's.
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if got, want := rpcstatus.Code(c).String(), c.String(); got != want {
			t.Errorf("code %d: %q, grpc-go %q", c, got, want)
		}
	}
	if got := rpcstatus.Code(99).String(); got != "Code(99)" {
		t.Errorf("unknown code: %q", got)
	}
	e := rpcstatus.New(rpcstatus.PermissionDenied, "no")
	if got, want := e.Error(), status.Error(codes.PermissionDenied, "no").Error(); got != want {
		t.Errorf("Error() = %q, grpc-go %q", got, want)
	}
	wrapped := fmt.Errorf("x: %w", e)
	if rpcstatus.CodeOf(wrapped) != rpcstatus.PermissionDenied || rpcstatus.MessageOf(wrapped) != "no" {
		t.Errorf("wrapped: %v %q", rpcstatus.CodeOf(wrapped), rpcstatus.MessageOf(wrapped))
	}
	if rpcstatus.CodeOf(nil) != rpcstatus.OK || rpcstatus.CodeOf(errors.New("e")) != rpcstatus.Unknown || rpcstatus.MessageOf(errors.New("e")) != "e" {
		t.Error("CodeOf/MessageOf of nil or a plain error")
	}
	if rpcstatus.FromContextError(context.DeadlineExceeded).Code() != rpcstatus.DeadlineExceeded || rpcstatus.FromContextError(context.Canceled).Code() != rpcstatus.Canceled {
		t.Error("FromContextError")
	}
}

func FuzzLeaderOf(f *testing.F) {
	st := status.Convert(grpcapi.NotLeader("host1:7869"))
	b, _ := proto.Marshal(st.Proto())
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, details []byte) {
		rpcstatus.LeaderOf(rpcstatus.WithDetails(rpcstatus.Unavailable, "x", details)) // must not panic
	})
}

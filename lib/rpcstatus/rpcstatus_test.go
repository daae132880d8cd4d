package rpcstatus

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
)

// onWire is how a client sees a grpc-go server's status: code, message
// and the encoded details of its trailers.
func onWire(t testing.TB, err error) error {
	st := status.Convert(err)
	b, merr := proto.Marshal(st.Proto())
	if merr != nil {
		t.Fatal(merr)
	}
	return WithDetails(Code(st.Code()), st.Message(), b)
}

func TestLeaderOf(t *testing.T) {
	if NotLeaderReason != grpcapi.NotLeaderReason {
		t.Fatalf("NotLeaderReason %q, the server's %q", NotLeaderReason, grpcapi.NotLeaderReason)
	}
	other, _ := status.New(codes.Unavailable, "x").WithDetails(&errdetails.ErrorInfo{Reason: "OTHER", Metadata: map[string]string{"leader": "h:1"}})
	mixed, _ := status.New(codes.Unavailable, "x").WithDetails(&errdetails.DebugInfo{Detail: "d"},
		&errdetails.ErrorInfo{Reason: NotLeaderReason, Domain: "xce", Metadata: map[string]string{"a": "b", "leader": "h2:7869"}})
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
		{"no details", New(Unavailable, "down"), "", false},
		{"not a status", errors.New("x"), "", false},
		{"nil", nil, "", false},
		{"garbage details", WithDetails(Unavailable, "x", []byte{0x1a, 0xff, 0x01}), "", false},
	} {
		leader, ok := LeaderOf(tc.err)
		if leader != tc.leader || ok != tc.ok {
			t.Errorf("%s: LeaderOf = %q, %v; want %q, %v", tc.name, leader, ok, tc.leader, tc.ok)
		}
	}
}

func TestCodes(t *testing.T) {
	// The names and values are gRPC's.
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if got, want := Code(c).String(), c.String(); got != want {
			t.Errorf("code %d: %q, grpc-go %q", c, got, want)
		}
	}
	if got := Code(99).String(); got != "Code(99)" {
		t.Errorf("unknown code: %q", got)
	}
	e := New(PermissionDenied, "no")
	if got, want := e.Error(), status.Error(codes.PermissionDenied, "no").Error(); got != want {
		t.Errorf("Error() = %q, grpc-go %q", got, want)
	}
	wrapped := fmt.Errorf("x: %w", e)
	if CodeOf(wrapped) != PermissionDenied || MessageOf(wrapped) != "no" {
		t.Errorf("wrapped: %v %q", CodeOf(wrapped), MessageOf(wrapped))
	}
	if CodeOf(nil) != OK || CodeOf(errors.New("e")) != Unknown || MessageOf(errors.New("e")) != "e" {
		t.Error("CodeOf/MessageOf of nil or a plain error")
	}
	if FromContextError(context.DeadlineExceeded).Code() != DeadlineExceeded || FromContextError(context.Canceled).Code() != Canceled {
		t.Error("FromContextError")
	}
}

func FuzzLeaderOf(f *testing.F) {
	st := status.Convert(grpcapi.NotLeader("host1:7869"))
	b, _ := proto.Marshal(st.Proto())
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, details []byte) {
		LeaderOf(WithDetails(Unavailable, "x", details)) // must not panic
	})
}

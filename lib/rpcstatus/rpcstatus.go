// Package rpcstatus owns the status of a gRPC call as XCE's commands see
// it without grpc-go (lib/client speaks the protocol itself): the codes,
// an error that carries code, message and details, and the details a
// standby controller's NotLeader answer names its leader in. Its codes
// and texts are gRPC's, so a command's messages read as they did when it
// used grpc-go.
package rpcstatus

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Code is a gRPC status code.
type Code uint32

// The gRPC status codes.
const (
	OK Code = iota
	Canceled
	Unknown
	InvalidArgument
	DeadlineExceeded
	NotFound
	AlreadyExists
	PermissionDenied
	ResourceExhausted
	FailedPrecondition
	Aborted
	OutOfRange
	Unimplemented
	Internal
	Unavailable
	DataLoss
	Unauthenticated
)

var codeNames = [...]string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
	"Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

// String is the code's name, as grpc-go writes it.
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Code(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Error is a call's failure: its status other than OK.
type Error struct {
	code    Code
	msg     string
	details []byte // google.rpc.Status, encoded, as grpc-status-details-bin
}

// New is the status code with msg.
func New(code Code, msg string) *Error { return &Error{code: code, msg: msg} }

// Errorf is New with a formatted message.
func Errorf(code Code, format string, a ...any) *Error {
	return New(code, fmt.Sprintf(format, a...))
}

// WithDetails is the status with the encoded google.rpc.Status its
// trailers carried (grpc-status-details-bin).
func WithDetails(code Code, msg string, details []byte) *Error {
	return &Error{code: code, msg: msg, details: details}
}

// Error reads as grpc-go's status errors do.
func (e *Error) Error() string {
	return "rpc error: code = " + e.code.String() + " desc = " + e.msg
}

// Code is the status code.
func (e *Error) Code() Code { return e.code }

// Message is the status message.
func (e *Error) Message() string { return e.msg }

// FromError is err's status: ok is false when err is none, and then the
// status is Unknown with err's text (OK for nil).
func FromError(err error) (e *Error, ok bool) {
	if err == nil {
		return &Error{code: OK}, false
	}
	if errors.As(err, &e) {
		return e, true
	}
	return &Error{code: Unknown, msg: err.Error()}, false
}

// CodeOf is err's code: OK for nil, Unknown for an error without one.
func CodeOf(err error) Code {
	e, _ := FromError(err)
	return e.code
}

// MessageOf is err's status message, or its text when it has none.
func MessageOf(err error) string {
	e, _ := FromError(err)
	return e.msg
}

// FromContextError is the status of a call whose context ended with err.
func FromContextError(err error) *Error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return New(DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return New(Canceled, err.Error())
	}
	return New(Unknown, err.Error())
}

// NotLeaderReason is the ErrorInfo reason of a standby controller's
// answer (lib/api/grpcapi's NotLeader).
const NotLeaderReason = "XCE_NOT_LEADER"

// The types of the details this package reads.
const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// LeaderOf tells whether err is a standby's NotLeader answer, and the
// leader it named ("" when none is elected). The details are read from
// their encoding: google.rpc.Status{3: repeated Any{1: type_url, 2:
// value}}, ErrorInfo{1: reason, 3: map metadata}.
func LeaderOf(err error) (leader string, ok bool) {
	e, isStatus := FromError(err)
	if !isStatus || len(e.details) == 0 {
		return "", false
	}
	eachField(e.details, func(num protowire.Number, v []byte) {
		if num != 3 || ok {
			return
		}
		var typ string
		var value []byte
		eachField(v, func(num protowire.Number, v []byte) {
			switch num {
			case 1:
				typ = string(v)
			case 2:
				value = v
			}
		})
		if typ != errorInfoType {
			return
		}
		var reason string
		var meta map[string]string
		eachField(value, func(num protowire.Number, v []byte) {
			switch num {
			case 1:
				reason = string(v)
			case 3:
				var k, val string
				eachField(v, func(num protowire.Number, v []byte) {
					switch num {
					case 1:
						k = string(v)
					case 2:
						val = string(v)
					}
				})
				if meta == nil {
					meta = map[string]string{}
				}
				meta[k] = val
			}
		})
		if reason == NotLeaderReason {
			leader, ok = meta["leader"], true
		}
	})
	return leader, ok
}

// eachField calls fn with each length-delimited field of a message; it
// skips the others and stops at the first malformed one.
func eachField(b []byte, fn func(protowire.Number, []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return
			}
			fn(num, v)
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return
		}
		b = b[n:]
	}
}

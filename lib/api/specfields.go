package api

import "google.golang.org/protobuf/encoding/protowire"

// KeepFields is the encoded message raw with only the fields numbered in
// keep (QueryRequest.spec_fields), in their order, without decoding it:
// the controller keeps specs encoded. A malformed raw is returned whole.
func KeepFields(raw []byte, keep []int32) []byte {
	out := make([]byte, 0, len(raw)/2)
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return raw
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return raw
		}
		for _, k := range keep {
			if int32(num) == k {
				out = append(out, b[:n+m]...)
				break
			}
		}
		b = b[n+m:]
	}
	return out
}

// DropFields is the encoded message raw without the fields numbered in
// drop, without decoding it; raw itself when it has none of them. A
// malformed raw is returned without any of its fields (nil).
func DropFields(raw []byte, drop ...int32) []byte {
	var out []byte
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil
		}
		skip := false
		for _, d := range drop {
			skip = skip || int32(num) == d
		}
		switch {
		case skip && out == nil:
			out = append(make([]byte, 0, len(raw)), raw[:len(raw)-len(b)]...)
		case !skip && out != nil:
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if out == nil {
		return raw
	}
	return out
}

// JobSpec's fields that hold environment values (env, and env_spec: -env
// as given), which the controller takes out of another user's job.
const (
	JobSpecEnvField     = 62
	JobSpecEnvSpecField = 25
)

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

package api

import "google.golang.org/protobuf/proto"

// Marshal encodes m with its generated code (api_vtproto.pb.go) where it
// has some, as every message of this package and of rpc does: the
// generated coder sizes and writes a message without protobuf-go's
// reflection, several times faster. The bytes are the same wire format;
// as with proto.Marshal, map entries are in no set order, so it is not
// for an encoding that must be the same for the same content (a key, an
// interned spec).
func Marshal(m proto.Message) ([]byte, error) {
	if v, ok := m.(interface{ MarshalVT() ([]byte, error) }); ok {
		return v.MarshalVT()
	}
	return proto.Marshal(m)
}

package client

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"xce/lib/api"
	_ "xce/lib/api/rpc"
)

// The generated code reads what protobuf-go writes and writes what it
// reads, for messages with scalars, repeated fields, maps and nested
// messages, large ones too.
func TestVTCodecMatchesProto(t *testing.T) {
	spec := &api.JobSpec{
		Command: "sleep 10", Queue: "normal", JobName: "j", MinTasks: 2, MaxTasks: 4,
		ResReq: []string{"rusage[mem=100]", "span[hosts=1]"}, RunLimitSec: 3600, Hold: true,
		Origin: map[string]string{"LSB_X": "1", "PATH": "/bin"},
	}
	big := proto.Clone(spec).(*api.JobSpec)
	big.Command = string(make([]byte, 64<<10))
	msgs := []proto.Message{
		spec, big,
		&api.SubmitRequest{Spec: spec},
		&api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all", Refs: []*api.JobRef{{JobId: 1}, {JobId: 2, ArrayIndex: 3}}},
		&api.Job{JobId: 7, State: api.JobState_PEND, Spec: spec, PendReason: "held"},
	}
	for _, m := range msgs {
		vm := m.(vtMessage)
		data := make([]byte, vm.SizeVT())
		if _, err := vm.MarshalToSizedBufferVT(data); err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		got := m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(data, got); err != nil {
			t.Fatalf("%T: protobuf-go cannot read the codec's encoding: %v", m, err)
		}
		if !proto.Equal(got, m) {
			t.Errorf("%T: codec wrote %v, want %v", m, got, m)
		}
		want, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back := m.ProtoReflect().New().Interface()
		if err := back.(vtMessage).UnmarshalVT(want); err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if !proto.Equal(back, m) {
			t.Errorf("%T: codec read %v, want %v", m, back, m)
		}
	}
}

// Every message of lib/api's files, each field set, goes through the
// generated code unchanged: lib/api/*_vtproto.pb.go is regenerated (make
// proto) with every change of a .proto, or a new field would be dropped.
func TestVTCodecEveryField(t *testing.T) {
	n := 0
	for _, path := range []string{"api.proto", "rpc/controller.proto", "rpc/worker.proto"} {
		fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
		if err != nil {
			t.Fatal(err)
		}
		var all []protoreflect.MessageDescriptor
		var walk func(ms protoreflect.MessageDescriptors)
		walk = func(ms protoreflect.MessageDescriptors) {
			for i := range ms.Len() {
				if !ms.Get(i).IsMapEntry() {
					all = append(all, ms.Get(i))
				}
				walk(ms.Get(i).Messages())
			}
		}
		walk(fd.Messages())
		for _, md := range all {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
			if err != nil {
				t.Fatal(err)
			}
			m := mt.New()
			fill(m, 2)
			msg := m.Interface()
			vm, ok := msg.(vtMessage)
			if !ok {
				t.Errorf("%s has no generated marshal code: run make proto", md.FullName())
				continue
			}
			data := make([]byte, vm.SizeVT())
			if _, err := vm.MarshalToSizedBufferVT(data); err != nil {
				t.Fatalf("%s: %v", md.FullName(), err)
			}
			got := mt.New().Interface()
			if err := proto.Unmarshal(data, got); err != nil || !proto.Equal(got, msg) {
				t.Errorf("%s: the generated code wrote %v (%v), want %v: run make proto", md.FullName(), got, err, msg)
			}
			want, _ := proto.Marshal(msg)
			back := mt.New().Interface()
			if err := back.(vtMessage).UnmarshalVT(want); err != nil || !proto.Equal(back, msg) {
				t.Errorf("%s: the generated code read %v (%v), want %v: run make proto", md.FullName(), back, err, msg)
			}
			n++
		}
	}
	if n < 50 {
		t.Errorf("only %d messages checked", n)
	}
}

// fill sets every field of m (nested messages to depth levels).
func fill(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && m.WhichOneof(fd.ContainingOneof()) != nil {
			continue
		}
		switch {
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind && depth == 0 {
				continue
			}
			mp := m.Mutable(fd).Map()
			v := mp.NewValue()
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				fill(v.Message(), depth-1)
			} else {
				v = scalar(fd.MapValue())
			}
			mp.Set(scalar(fd.MapKey()).MapKey(), v)
		case fd.IsList():
			if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
				if depth == 0 {
					continue
				}
				l := m.Mutable(fd).List()
				e := l.NewElement()
				fill(e.Message(), depth-1)
				l.Append(e)
				continue
			}
			m.Mutable(fd).List().Append(scalar(fd))
		case fd.Kind() == protoreflect.MessageKind:
			if depth == 0 {
				continue
			}
			fill(m.Mutable(fd).Message(), depth-1)
		default:
			m.Set(fd, scalar(fd))
		}
	}
}

// scalar is a value of a non-message field other than its default.
func scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		vs := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vs.Get(vs.Len() - 1).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(-7)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(-1 << 40)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(7)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(1 << 40)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(1.5)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(2.25)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("s-" + string(fd.Name()))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("b-" + string(fd.Name())))
	}
	panic("unexpected kind " + fd.Kind().String())
}

package client

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/reflect/protoregistry"

	"xce/lib/api/grpcapi"
)

// TestClientHasEveryMethod: every method of the Controller service is a
// Client method taking its request and, for a unary one, returning its
// reply, so a method added to the service is not forgotten here.
func TestClientHasEveryMethod(t *testing.T) {
	svc := grpcapi.File_grpcapi_services_proto.Services().ByName("Controller")
	if svc == nil {
		t.Fatal("no Controller service")
	}
	if want := "/" + string(svc.FullName()) + "/"; want != controllerService {
		t.Fatalf("controllerService %q, the service's prefix %q", controllerService, want)
	}
	// The streaming calls' Client methods, which read the stream.
	streams := map[string]string{"Query": "QueryEach", "Accounting": "Accounting", "Watch": "Watch"}
	// The two-way calls' Client methods: bsub's relayed terminal
	// (attach.go) and battach's on a terminal (battach.go).
	bidis := map[string]string{"Attach": "Attach", "BattachStream": "BattachSession"}
	ct := reflect.TypeOf(&Client{})
	ms := svc.Methods()
	for i := range ms.Len() {
		md := ms.Get(i)
		name := string(md.Name())
		in, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			t.Fatal(err)
		}
		out, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
		if err != nil {
			t.Fatal(err)
		}
		inType, outType := reflect.TypeOf(in.New().Interface()), reflect.TypeOf(out.New().Interface())
		if m, bidi := bidis[name]; bidi && md.IsStreamingClient() && md.IsStreamingServer() {
			if _, ok := ct.MethodByName(m); !ok {
				t.Errorf("%s: no Client method %s", name, m)
			}
			continue
		}
		if md.IsStreamingClient() {
			t.Errorf("%s: client streaming; the Client has no such calls", name)
			continue
		}
		if md.IsStreamingServer() {
			m, ok := ct.MethodByName(streams[name])
			if !ok || m.Type.NumIn() < 3 || m.Type.In(2) != inType {
				t.Errorf("%s: server streaming, with no Client method reading it (want %q taking %v)", name, streams[name], inType)
			}
			continue
		}
		m, ok := ct.MethodByName(name)
		if !ok {
			t.Errorf("the Client has no method %s", name)
			continue
		}
		if m.Type.NumIn() != 3 || m.Type.In(2) != inType || m.Type.NumOut() != 2 || m.Type.Out(0) != outType {
			t.Errorf("Client.%s is %v, want func(context.Context, %v) (%v, error)", name, m.Type, inType, outType)
		}
	}
}

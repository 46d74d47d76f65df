package server_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"pactd.dev/pactd/server"
)

// TestReflectionCarriesTheProtoComments asks both ports' reflection, over
// the wire as grpcurl does, for the file that defines pact.v1.AgentService
// and finds the comments written in proto/pact/v1/agent.proto on the
// service, on a method and on a request field.
func TestReflectionCarriesTheProtoComments(t *testing.T) {
	cfg := testConfig(t, "", t.TempDir(), "PACT_GRPC_LISTEN=127.0.0.1:0")
	gln := loopback(t)
	inst := startWith(t, cfg, server.Deps{Listeners: server.Listeners{GRPC: gln}})

	// Paths in descriptor.proto's SourceCodeInfo: service = [6, index],
	// method = [6, s, 2, index], message = [4, index], field = [4, m, 2, index].
	for _, port := range []struct{ name, addr string }{{"main", inst.addr}, {"native-grpc", gln.Addr().String()}} {
		t.Run(port.name, func(t *testing.T) {
			conn, err := grpc.NewClient(port.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			files := fileContainingSymbol(t, conn, "pact.v1.AgentService")
			fd := files["pact/v1/agent.proto"]
			if fd == nil {
				t.Fatalf("reflection returned %v, not pact/v1/agent.proto", keys(files))
			}
			svc := slices.IndexFunc(fd.GetService(), func(s *descriptorpb.ServiceDescriptorProto) bool { return s.GetName() == "AgentService" })
			msg := slices.IndexFunc(fd.GetMessageType(), func(m *descriptorpb.DescriptorProto) bool { return m.GetName() == "RegisterAgentRequest" })
			if svc < 0 || msg < 0 {
				t.Fatalf("agent.proto lacks AgentService or RegisterAgentRequest")
			}
			method := slices.IndexFunc(fd.GetService()[svc].GetMethod(), func(m *descriptorpb.MethodDescriptorProto) bool { return m.GetName() == "RegisterAgent" })
			field := slices.IndexFunc(fd.GetMessageType()[msg].GetField(), func(f *descriptorpb.FieldDescriptorProto) bool { return f.GetName() == "issuer" })
			for _, c := range []struct {
				path []int32
				want string
			}{
				{[]int32{6, int32(svc)}, "AgentService onboards personal agents (PAs)"},
				{[]int32{6, int32(svc), 2, int32(method)}, "RegisterAgent registers a PA by its exact issuer string and JWKS URI."},
				{[]int32{4, int32(msg), 2, int32(field)}, "The exact issuer (iss) string the agent signs with."},
			} {
				if got := leadingComment(fd, c.path); !strings.Contains(got, c.want) {
					t.Errorf("comment at %v = %q, want it to contain %q", c.path, got, c.want)
				}
			}
			// Positive control of the fallback: the health service, which is
			// not in the API's descriptor set, still resolves.
			if h := fileContainingSymbol(t, conn, "grpc.health.v1.Health"); h["grpc/health/v1/health.proto"] == nil {
				t.Errorf("grpc.health.v1.Health resolved to %v", keys(h))
			}
		})
	}
}

func fileContainingSymbol(t *testing.T, conn *grpc.ClientConn, symbol string) map[string]*descriptorpb.FileDescriptorProto {
	t.Helper()
	stream, err := grpc_reflection_v1.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stream.CloseSend() }()
	if err := stream.Send(&grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol},
	}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		t.Fatalf("reflection of %s: %v", symbol, e)
	}
	out := map[string]*descriptorpb.FileDescriptorProto{}
	for _, raw := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		var fd descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(raw, &fd); err != nil {
			t.Fatal(err)
		}
		out[fd.GetName()] = &fd
	}
	return out
}

func leadingComment(fd *descriptorpb.FileDescriptorProto, path []int32) string {
	for _, loc := range fd.GetSourceCodeInfo().GetLocation() {
		if slices.Equal(loc.GetPath(), path) {
			return loc.GetLeadingComments()
		}
	}
	return ""
}

func keys(m map[string]*descriptorpb.FileDescriptorProto) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

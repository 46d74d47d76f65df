// Package apidesc holds the descriptors of pactd's API with their source
// info (the .proto comments), so reflection tells a client what each service,
// method and field means: `grpcurl describe pact.v1.AgentService` shows the
// documentation, not only the shapes.
//
// pact.binpb is generated, never edited: scripts/test.sh rebuilds it and
// fails on a difference. After editing a .proto:
//
//	go tool -modfile=tools/go.mod buf build --as-file-descriptor-set -o internal/apidesc/pact.binpb
package apidesc

import (
	_ "embed"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// MaxRequestBytes bounds every RPC request message of the API, on every
// wire (Connect, gRPC-Web and native gRPC): the server's read limit and the
// one the RPC benchmarks apply.
const MaxRequestBytes = 256 << 10

// MaxHeaderBytes bounds a request's headers on both of the server's ports
// (net/http's MaxHeaderBytes on the main port, the HTTP/2 header list on
// the native gRPC port).
const MaxHeaderBytes = 64 << 10

//go:embed pact.binpb
var raw []byte

var files = sync.OnceValues(func() (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("apidesc: %w", err)
	}
	f, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("apidesc: %w", err)
	}
	return f, nil
})

// Files returns the API's documented descriptors (pact.v1, hdtp.v1 and their
// imports).
func Files() (*protoregistry.Files, error) { return files() }

// Resolver returns a resolver that answers from the documented descriptors
// and falls back to the descriptors linked into the binary (grpc.health.v1,
// the reflection service itself), for reflection handlers.
func Resolver() (protodesc.Resolver, error) {
	f, err := files()
	if err != nil {
		return nil, err
	}
	return chain{f, protoregistry.GlobalFiles}, nil
}

// chain asks each resolver in turn.
type chain []protodesc.Resolver

// FindFileByPath implements protodesc.Resolver.
func (c chain) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	for _, r := range c {
		if fd, err := r.FindFileByPath(path); err == nil {
			return fd, nil
		}
	}
	return nil, protoregistry.NotFound
}

// FindDescriptorByName implements protodesc.Resolver.
func (c chain) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	for _, r := range c {
		if d, err := r.FindDescriptorByName(name); err == nil {
			return d, nil
		}
	}
	return nil, protoregistry.NotFound
}

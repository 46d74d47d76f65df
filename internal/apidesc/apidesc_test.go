package apidesc_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	_ "pactd.dev/pactd/gen/hdtp/v1" // registers the compiled descriptors
	_ "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/apidesc"
)

// shape is a file's descriptor without documentation and file options
// (which buf's managed mode sets only when generating code).
func shape(fd protoreflect.FileDescriptor) *descriptorpb.FileDescriptorProto {
	p := protodesc.ToFileDescriptorProto(fd)
	p.SourceCodeInfo = nil
	p.Options = nil
	return p
}

// TestMatchesTheGeneratedCode: the embedded descriptors are those of the
// protos the Go code was generated from (a stale pact.binpb fails here even
// without buf), and they carry documentation.
func TestMatchesTheGeneratedCode(t *testing.T) {
	files, err := apidesc.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"pact", "hdtp"} {
		n := 0
		files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
			if !strings.HasPrefix(fd.Path(), pkg+"/") {
				return true
			}
			n++
			compiled, err := protoregistry.GlobalFiles.FindFileByPath(fd.Path())
			if err != nil {
				t.Errorf("%s is in pact.binpb but not in the generated code: regenerate pact.binpb", fd.Path())
				return true
			}
			if got, want := shape(fd), shape(compiled); !proto.Equal(got, want) {
				t.Errorf("%s differs from the generated code: regenerate internal/apidesc/pact.binpb", fd.Path())
			}
			if fd.SourceLocations().Len() == 0 {
				t.Errorf("%s has no source info", fd.Path())
			}
			return true
		})
		compiled := 0
		protoregistry.GlobalFiles.RangeFilesByPackage(protoreflect.FullName(pkg+".v1"), func(protoreflect.FileDescriptor) bool { compiled++; return true })
		if n == 0 || n != compiled {
			t.Errorf("pact.binpb has %d %s files, the generated code %d", n, pkg, compiled)
		}
	}
	d, err := files.FindDescriptorByName("pact.v1.AgentService")
	if err != nil {
		t.Fatal(err)
	}
	if c := d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments; !strings.Contains(c, "AgentService onboards personal agents") {
		t.Errorf("AgentService's comment = %q", c)
	}
}

package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"pactd.dev/pactd/internal/apidesc"
)

// TestDocsAPIIsFresh: docs/api.md is what the generator writes from the
// descriptors in this tree, so a .proto comment or a role changed without
// regenerating the page fails here (and in scripts/test.sh's freshness
// step).
func TestDocsAPIIsFresh(t *testing.T) {
	want, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/api.md is stale: run go run ./cmd/pactd-apidoc -o docs/api.md and commit it")
	}
}

// TestEveryRPCWithItsRoles: every RPC of both packages has its row under
// its service, every request, response, message and enum has its section,
// and the roles are the design's for RPCs whose callers it fixes.
func TestEveryRPCWithItsRoles(t *testing.T) {
	page, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	files, err := apidesc.Files()
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	rpcs := 0
	for _, pkg := range packages {
		files.RangeFilesByPackage(pkg, func(fd protoreflect.FileDescriptor) bool {
			for i := range fd.Services().Len() {
				s := fd.Services().Get(i)
				_, section, ok := strings.Cut(text, "\n### "+string(s.FullName())+"\n")
				if !ok {
					t.Errorf("no section for %s", s.FullName())
					continue
				}
				section, _, _ = strings.Cut(section, "\n### ")
				for j := range s.Methods().Len() {
					rpcs++
					if m := s.Methods().Get(j); !strings.Contains(section, "\n| `"+string(m.Name())+"` | ") {
						t.Errorf("%s has no row for %s", s.FullName(), m.Name())
					}
				}
			}
			for _, d := range typesOf(fd) {
				if !strings.Contains(text, "\n### "+string(d.FullName())+"\n") {
					t.Errorf("no section for %s", d.FullName())
				}
			}
			return true
		})
	}
	if rpcs < 50 {
		t.Fatalf("found %d RPCs; the descriptors hold more, so the walk is broken", rpcs)
	}
	for rpc, want := range map[string]string{
		"VerifyAgentRequest": "admin, frontend", // the frontend's call on every A2A request
		"GetAgentCard":       "admin, frontend",
		"Serve":              "admin, frontend",
		"IntrospectToken":    "admin, frontend",
		"RegisterAgent":      "admin", // onboarding is the operator's
		"CreateBrand":        "admin",
		"RotateSigningKey":   "admin",
		"CreateCredential":   "admin",
		"CreateIdentity":     "admin", // an HDTP owner action
		"ValidateChain":      "admin, frontend",
	} {
		m := regexp.MustCompile("\n\\| `" + rpc + "` \\| [^|]* \\| ([a-z, ]+) \\| ").FindStringSubmatch(text)
		if m == nil || m[1] != want {
			t.Errorf("%s's roles: %v, want %q", rpc, m, want)
		}
	}
}

// TestEscape: comment text stays literal text in Markdown: markup
// characters escaped outside code spans, pipes escaped in table cells
// (code spans too), and the headings' anchors as renderers make them.
func TestEscape(t *testing.T) {
	for _, c := range []struct {
		in      string
		inCell  bool
		want    string
		comment string
	}{
		{"Bearer <token>", false, "Bearer &lt;token&gt;", "an HTML-looking word"},
		{"X-*-CERT and a\\b", false, `X-\*-CERT and a\\b`, "emphasis and escapes"},
		{"update_mask and _x_", false, `update_mask and \_x_`, "an underscore that starts a word"},
		{"# not a heading", false, `\# not a heading`, "a leading hash"},
		{"`a|b <c>` | d", true, "`a\\|b <c>` \\| d", "code span kept, pipes escaped in a cell"},
		{"`a|b`", false, "`a|b`", "pipes are fine outside a cell"},
	} {
		if got := escape(c.in, c.inCell); got != c.want {
			t.Errorf("%s: escape(%q, %v) = %q, want %q", c.comment, c.in, c.inCell, got, c.want)
		}
	}
	if got := cell("one\n\n  two |\nthree"); got != `one two \| three` {
		t.Errorf("cell = %q", got)
	}
	for in, want := range map[string]string{
		"pact.v1.AgentService":       "pactv1agentservice",
		"pact.v1 messages and enums": "pactv1-messages-and-enums",
		"hdtp.v1.Card_Sig":           "hdtpv1card_sig",
	} {
		if got := anchor(in); got != want {
			t.Errorf("anchor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunRefusesArguments: a stray argument is an error, not a page.
func TestRunRefusesArguments(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"docs/api.md"}, &out); err == nil || out.Len() != 0 {
		t.Errorf("run with an argument: %v, wrote %d bytes", err, out.Len())
	}
}

package invite_test

import (
	"crypto/sha256"
	"strings"
	"testing"

	"pactd.dev/pactd/hdtp/invite"
)

// TestNewParse: a minted token parses to its hash, through its path too;
// tokens differ; every other string is refused, the near misses included.
func TestNewParse(t *testing.T) {
	tok, h := invite.New()
	tok2, h2 := invite.New()
	if tok == tok2 || h.Equal(h2) {
		t.Fatal("two tokens are the same")
	}
	if len(tok) != invite.Len || !strings.HasPrefix(tok, "inv_") {
		t.Fatalf("token %q", tok)
	}
	if h != sha256.Sum256([]byte(tok)) {
		t.Fatal("the hash is not SHA-256 of the token")
	}
	if got, ok := invite.Parse(tok); !ok || !got.Equal(h) {
		t.Fatal("a minted token does not parse to its hash")
	}
	if got, ok := invite.FromPath(invite.Path(tok)); !ok || !got.Equal(h) {
		t.Fatal("the path does not parse")
	}
	body := tok[len("inv_"):]
	for _, bad := range []string{
		"", "inv_", tok + "A", tok[:len(tok)-1], "INV_" + body, "inv-" + body,
		"inv_" + body[:31] + "=", "inv_" + body[:31] + " ", "inv_" + body[:15] + "\n" + body[16:],
		"inv_" + body[:31] + "+", "inv_8Qq1xZk3", strings.Repeat("a", 36),
	} {
		if _, ok := invite.Parse(bad); ok {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"/i/" + tok + "/", "/i//" + tok, "/x/" + tok, "i/" + tok, "/i/" + tok + "?x"} {
		if _, ok := invite.FromPath(bad); ok {
			t.Errorf("FromPath(%q) accepted", bad)
		}
	}
}

// FuzzParse: no input stops the parser, and an accepted token is exactly
// Len characters whose hash is SHA-256 of it.
func FuzzParse(f *testing.F) {
	tok, _ := invite.New()
	f.Add(tok)
	f.Add("inv_8Qq1xZk3")
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := invite.Parse(s)
		if !ok {
			return
		}
		if len(s) != invite.Len || h != sha256.Sum256([]byte(s)) {
			t.Fatalf("accepted %q", s)
		}
	})
}

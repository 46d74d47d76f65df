package jws

import (
	"strings"
	"testing"
)

// TestPolicyOrder: Parse reports the first failure in the documented order
// (size, segments, base64url, header object, alg, typ, forbidden, only,
// kid), and lets through exactly what the policy allows.
func TestPolicyOrder(t *testing.T) {
	seg := func(s string) string { return Encode([]byte(s)) }
	tok := func(hdr string) string { return seg(hdr) + "." + seg(`{}`) + "." }
	own := Policy{MaxBytes: 512, Algs: []string{ES256}, Typ: "at+jwt", Only: []string{"alg", "kid", "typ"},
		KID: KIDRule{Required: true, NonEmpty: true, MaxBytes: 8}}
	third := Policy{MaxBytes: 512, Algs: []string{ES256, "RS256"}, Forbidden: ForbiddenHeaders(),
		KID: KIDRule{NonEmpty: true}, Eager: true}
	for _, c := range []struct {
		name string
		p    Policy
		tok  string
		want Failure
	}{
		{"ok/own", own, tok(`{"alg":"ES256","kid":"k1","typ":"at+jwt"}`), OK},
		{"ok/third-no-kid", third, tok(`{"alg":"RS256","typ":"anything","x5t":"a"}`), OK},
		{"size", own, strings.Repeat("a", 513), FailSize},
		{"segments", own, "a.b", FailSegments},
		{"encoding/header", own, "a=.b.", FailEncoding},
		{"encoding/payload-lazy-is-not-judged", own, seg(`{"alg":"ES256","kid":"k1","typ":"at+jwt"}`) + ".!!.", OK},
		{"encoding/payload-eager", third, seg(`{"alg":"none"}`) + ".!!.", FailEncoding},
		{"header/duplicate", own, tok(`{"alg":"ES256","\u0061lg":"ES256"}`), FailHeader},
		{"header/whitespace", own, tok(` {"alg":"ES256"}`), FailHeader},
		{"alg/none", third, tok(`{"alg":"none","jwk":{}}`), FailAlg},
		{"alg/not-string", own, tok(`{"alg":1}`), FailAlg},
		{"typ/missing", own, tok(`{"alg":"ES256","x5u":"u"}`), FailTyp},
		{"typ/other", own, tok(`{"alg":"ES256","typ":"JWT"}`), FailTyp},
		{"forbidden/jku", third, tok(`{"alg":"ES256","jku":"https://x","kid":""}`), FailForbidden},
		{"forbidden/escaped", third, tok(`{"alg":"ES256","\u0063rit":["exp"]}`), FailForbidden},
		{"only", own, tok(`{"alg":"ES256","typ":"at+jwt","cty":"x"}`), FailForbidden},
		{"kid/missing", own, tok(`{"alg":"ES256","typ":"at+jwt"}`), FailKID},
		{"kid/empty", third, tok(`{"alg":"ES256","kid":""}`), FailKID},
		{"kid/long", own, tok(`{"alg":"ES256","typ":"at+jwt","kid":"123456789"}`), FailKID},
		{"kid/not-string", third, tok(`{"alg":"ES256","kid":7}`), FailKID},
	} {
		got, fail := c.p.Parse(c.tok)
		if fail != c.want {
			t.Errorf("%s: failure %d, want %d", c.name, fail, c.want)
		}
		if fail == OK && got.Segments.SigningInput != c.tok[:strings.LastIndexByte(c.tok, '.')] {
			t.Errorf("%s: signing input %q", c.name, got.Segments.SigningInput)
		}
	}
}

// TestForbiddenHeaders: the list is the documented one, ForbiddenHeader
// matches escaped names, and ForbiddenHeaders cannot change it.
func TestForbiddenHeaders(t *testing.T) {
	list := ForbiddenHeaders()
	if got := strings.Join(list, ","); got != "jwk,jku,x5u,x5c,crit,b64,zip,enc" {
		t.Fatalf("ForbiddenHeaders = %s", got)
	}
	list[0] = "kid"
	if ForbiddenHeaders()[0] != "jwk" {
		t.Fatal("the list changed through a returned copy")
	}
	if f := ForbiddenHeader(Name{Raw: []byte(`\u006aku`), Escaped: true}); f != "jku" {
		t.Fatalf("escaped jku: %q", f)
	}
	if f := ForbiddenHeader(Name{Raw: []byte("x5t")}); f != "" {
		t.Fatalf("x5t: %q", f)
	}
}

package pajwt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwa"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"

	"pactd.dev/pactd/token/jws"
	"pactd.dev/pactd/token/jws/jwstest"
	"pactd.dev/pactd/token/pajwt"
)

// signRaw signs raw header and claims JSON with the fuzz world's key
// (ES256, low S).
func (w *fuzzWorld) signRaw(tb testing.TB, header, claims string) string {
	tb.Helper()
	input := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
	sig, err := jws.SignES256(w.priv, []byte(input))
	if err != nil {
		tb.Fatal(err)
	}
	return input + "." + b64.EncodeToString(sig)
}

// jwxAccepts is lestrrat-go/jwx/v3's verdict, configured strictly: compact
// only, the exact key and ES256. It is given the token as pajwt reads it
// out of "Bearer " + tok: spaces and tabs at the end and spaces after
// "Bearer " are the Authorization header's framing (RFC 9110 OWS, RFC 6750
// 1*SP), not part of the token.
func (w *fuzzWorld) jwxAccepts(tok string) bool {
	tok = strings.TrimLeft(strings.TrimRight(tok, " \t"), " ")
	_, err := jwxjws.Verify([]byte(tok), jwxjws.WithKey(jwa.ES256(), &w.priv.PublicKey), jwxjws.WithCompact())
	return err == nil
}

// diffSeeds are header and claims texts for the differential: the valid
// ones, and variants a confused or hostile PA would sign.
func diffSeeds() [][2]string {
	const h = `{"alg":"ES256","typ":"JWT","kid":"fz"}`
	claims := `{"iss":"` + testIssuer + `","sub":"` + testSubject + `","aud":"` + testAudience + `","iat":1780000000,"exp":1780000120}`
	return [][2]string{
		{h, claims},
		{`{"alg":"ES256"}`, claims},
		{`{"alg":"ES256","kid":"fz","x5t":5}`, claims},
		{`{"alg":"ES256","kid":"fz","cty":7}`, claims},
		{`{"alg":"ES256","kid":"fz","typ":"application/jwt"}`, claims},
		{`{"alg":"ES256","kid":"fz","alg":"ES256"}`, claims},
		{`{"\u0061lg":"ES256","kid":"fz"}`, claims},
		{"{ \"alg\" :\n\"ES256\" }", claims},
		{" " + h, claims},
		{h, strings.Replace(claims, `"sub"`, `"\u0073ub"`, 1)},
		{h, strings.Replace(claims, `}`, `,"sub":"other"}`, 1)},
		{h, strings.Replace(claims, `}`, `,"nbf":1780000000,"jti":"j"}`, 1)},
		{h, "\n" + claims + "\r\n"},
		{h, strings.Replace(claims, `}`, `,"x":{"y":[1,{"z":null}]}}`, 1)},
	}
}

// TestVerifyDifferentialWithJWX: every seed and every jwstest mutation of
// it at a spread of positions; whatever pajwt accepts, jwx accepts.
// Positive controls: the valid token and its high-S twin pass both.
func TestVerifyDifferentialWithJWX(t *testing.T) {
	t.Parallel()
	w := newFuzzWorld(t)
	ctx := context.Background()
	for _, tok := range []string{w.valid, jwstest.HighS(w.valid)} {
		if _, err := w.uncached.Verify(ctx, "Bearer "+tok, w.book.lookup); err != nil || !w.jwxAccepts(tok) {
			t.Fatalf("ok/control: pajwt %v, jwx %v", err, w.jwxAccepts(tok))
		}
	}
	accepted := 0
	for _, seed := range diffSeeds() {
		tok := w.signRaw(t, seed[0], seed[1])
		for op := range jwstest.Ops {
			for pos := 0; pos < len(tok); pos += 1 + len(tok)/17 {
				for _, b := range []byte{0, 1, 2, 'A', '.', ' ', 0xff} {
					m := jwstest.Mutate(tok, op, pos, b)
					if _, err := w.uncached.Verify(ctx, "Bearer "+m, w.book.lookup); err == nil {
						accepted++
						if !w.jwxAccepts(m) {
							t.Fatalf("seed %q op %d: pajwt accepts %q, jwx refuses", seed[0], op, m)
						}
					}
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no mutant was accepted: the comparison compared nothing")
	}
}

// FuzzVerifyDifferential signs a fuzzed header and claims text with the
// fuzz world's key, mutates the token with jwstest, and fails when pajwt
// accepts a token that jwx, configured strictly, refuses.
func FuzzVerifyDifferential(f *testing.F) {
	for i, s := range diffSeeds() {
		f.Add(s[0], s[1], uint8(i), uint16(i*5), byte(i))
	}
	w := newFuzzWorld(f)
	f.Fuzz(func(t *testing.T, header, claims string, op uint8, pos uint16, b byte) {
		if len(header) > 1024 || len(claims) > 2048 {
			return
		}
		tok := jwstest.Mutate(w.signRaw(t, header, claims), int(op), int(pos), b)
		if _, err := w.uncached.Verify(context.Background(), "Bearer "+tok, w.book.lookup); err == nil && !w.jwxAccepts(tok) {
			t.Fatalf("pajwt accepts %q, jwx refuses", tok)
		}
	})
}

// TestMistypedRegisteredHeaderRefused: cty, x5t and x5t#S256 are ignored
// when they are strings (RFC 7515 §4.1 defines them as strings) and refused
// as Malformed when they are not, which jwx refuses too (the differential
// found it). The string forms are the positive controls.
func TestMistypedRegisteredHeaderRefused(t *testing.T) {
	t.Parallel()
	w := newFuzzWorld(t)
	claims := `{"iss":"` + testIssuer + `","sub":"` + testSubject + `","aud":"` + testAudience + `","iat":1780000000,"exp":1780000120}`
	for _, tt := range []struct {
		name, header string
		want         pajwt.Reason
	}{
		{"ok/x5t-string", `{"alg":"ES256","kid":"fz","x5t":"abc"}`, pajwt.ReasonUnspecified},
		{"ok/cty-string", `{"alg":"ES256","kid":"fz","cty":"JWT","x5t#S256":"abc"}`, pajwt.ReasonUnspecified},
		{"fail/x5t-number", `{"alg":"ES256","kid":"fz","x5t":5}`, pajwt.ReasonMalformed},
		{"fail/x5t-s256-null", `{"alg":"ES256","kid":"fz","x5t#S256":null}`, pajwt.ReasonMalformed},
		{"fail/cty-object", `{"alg":"ES256","kid":"fz","cty":{}}`, pajwt.ReasonMalformed},
		{"fail/escaped-cty-array", `{"alg":"ES256","kid":"fz","\u0063ty":[]}`, pajwt.ReasonMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.uncached.Verify(context.Background(), "Bearer "+w.signRaw(t, tt.header, claims), w.book.lookup)
			if got := pajwt.ReasonOf(err); got != tt.want || (tt.want == pajwt.ReasonUnspecified) != (err == nil) {
				t.Fatalf("err = %v (reason %q), want reason %q", err, got, tt.want)
			}
		})
	}
}

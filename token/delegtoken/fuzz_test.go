package delegtoken_test

import (
	"errors"
	"strings"
	"testing"

	"pactd.dev/pactd/token/delegtoken"
	"pactd.dev/pactd/token/jws/jwstest"
)

// FuzzVerify feeds arbitrary strings, and every jwstest mutation of a
// valid token (bytes overwritten, inserted, deleted or duplicated, spans
// and segments duplicated or dropped, whitespace and CR/LF, padded,
// standard-alphabet and non-canonical re-encodings, the high-S twin), to
// Verify. Properties: it never
// panics; a refusal is always an *Error (the keys never fail here); the
// answer is deterministic; only the genuine token verifies, so no mutation
// of it ever does.
func FuzzVerify(f *testing.F) {
	ks := newKeySet(f)
	v := delegtoken.NewVerifier(ks, clock)
	want := delegtoken.Expect{Issuer: brandA + "/oauth", Audience: brandA, ClientID: paIss}
	valid := forgeES256(ks.Key, header(ks.KID, "at+jwt"), mustJSON(claimsFor(brandA)), false)
	if _, err := v.Verify(f.Context(), valid, want); err != nil {
		f.Fatalf("seed token does not verify: %v", err)
	}
	parts := strings.Split(valid, ".")
	for _, seed := range []string{
		valid, "", ".", "..", "...", "a.b.c", valid + ".", parts[0] + "." + parts[1] + ".",
		b64([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + parts[1] + ".",
		b64([]byte(`{"alg":"HS256","kid":"`+ks.KID+`","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2],
		b64([]byte(`{"alg":"ES256","kid":"`+ks.KID+`","typ":"at+jwt","jwk":{}}`)) + "." + parts[1] + "." + parts[2],
		b64([]byte(`{"alg":"ES256","kid":"`+ks.KID+`","typ":"pact-consent+jwt"}`)) + "." + parts[1] + "." + parts[2],
		b64([]byte(`[]`)) + "." + b64([]byte(`{}`)) + "." + parts[2],
		strings.Repeat("A", delegtoken.MaxTokenBytes+1),
	} {
		f.Add(seed, uint16(0), byte('A'))
	}
	f.Add("", uint16(len(parts[0])+5), byte('x'))
	f.Add("", uint16(len(valid)-1), byte('B'))
	f.Fuzz(func(t *testing.T, tok string, pos uint16, b byte) {
		check := func(tok string) {
			c1, err1 := v.Verify(t.Context(), tok, want)
			c2, err2 := v.Verify(t.Context(), tok, want)
			if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) || c1.GrantID != c2.GrantID {
				t.Fatalf("not deterministic: %v / %v", err1, err2)
			}
			if err1 == nil {
				if tok != valid {
					t.Fatalf("a token that is not the genuine one verified: %q", tok)
				}
				return
			}
			var re *delegtoken.Error
			if !errors.As(err1, &re) || re.Reason == "" {
				t.Fatalf("refusal is not an *Error with a reason: %v", err1)
			}
		}
		check(tok)
		for op := range jwstest.Ops {
			check(jwstest.Mutate(valid, op, int(pos), b))
		}
	})
}

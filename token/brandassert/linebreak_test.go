package brandassert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"pactd.dev/pactd/token/jose"
)

// assertionFixture is a verifier with one signed-login Brand and its key,
// the purpose and clock, the claims of a valid assertion for code, and the
// code.
type assertionFixture struct {
	v      Verifier
	b      Brand
	p      Purpose
	now    time.Time
	key    *ecdsa.PrivateKey
	claims string
	code   string
}

func newAssertionFixture(t *testing.T) assertionFixture {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := jose.NewECKey("k1", &key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := jose.NewKeySet(k)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const publicURL, issuer, code = "https://provider.example", "https://login.acme.example", "BCDF-GHJK"
	b := Brand{ID: "signed", Issuer: issuer, JWKSURI: issuer + "/jwks.json"}
	p := Purpose{Aud: publicURL + "/a2a/signed/oauth/consent", UserCode: code}
	claims := `{"iss":"` + issuer + `","aud":"` + publicURL + `/a2a/signed/oauth/consent","sub":"user-42","jti":"j1","iat":1796032800,"exp":1796032920,"user_code":"` + code + `"}`
	return assertionFixture{v: testVerifier(fixedKeys{ks}), b: b, p: p, now: now, key: key, claims: claims, code: code}
}

// TestAssertionLineBreakAnywhereIsRefused inserts CR, LF and CRLF at every
// position of a genuine Brand login assertion. The parser front end decodes
// all three segments as strict base64url before any key is touched, so each
// is MALFORMED, whatever the segment. The untouched assertion is the
// positive control.
func TestAssertionLineBreakAnywhereIsRefused(t *testing.T) {
	f := newAssertionFixture(t)
	v, b, p, now := f.v, f.b, f.p, f.now
	valid := fuzzSign(t, f.key, `{"alg":"ES256","kid":"k1"}`, f.claims)
	if _, err := v.Verify(t.Context(), b, valid, p, now); err != nil {
		t.Fatalf("ok/control: the genuine assertion is refused: %v", err)
	}
	for i := 0; i <= len(valid); i++ {
		for _, br := range []string{"\n", "\r", "\r\n"} {
			_, err := v.Verify(t.Context(), b, valid[:i]+br+valid[i:], p, now)
			var r *Refusal
			if !errors.As(err, &r) || r.Reason != reasonMalformed {
				t.Fatalf("fail/%q-at-%d: %v, want refusal %v", br, i, err, reasonMalformed)
			}
		}
	}
}

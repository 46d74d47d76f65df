package delegation

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"pactd/db"
	"pactd/internal/jose"
)

// assertionFixture is a service with one signed-login Brand and its key,
// the claims of a valid assertion for code, and the code.
type assertionFixture struct {
	svc    *Service
	b      db.Brand
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
	svc := New(Deps{BrandKeys: fixedKeys{ks}, PublicURL: publicURL, Now: func() time.Time { return now }})
	b := db.Brand{ID: "signed", Delegation: db.Delegation{Enabled: true, AssertionIssuer: issuer, AssertionJWKSURI: issuer + "/jwks.json"}}
	claims := `{"iss":"` + issuer + `","aud":"` + publicURL + `/a2a/signed/oauth/consent","sub":"user-42","jti":"j1","iat":1796032800,"exp":1796032920,"user_code":"` + code + `"}`
	return assertionFixture{svc: svc, b: b, key: key, claims: claims, code: code}
}

// TestAssertionLineBreakAnywhereIsRefused inserts CR, LF and CRLF at every
// position of a genuine Brand login assertion. The parser front end decodes
// all three segments as strict base64url before any key is touched, so each
// is MALFORMED, whatever the segment. The untouched assertion is the
// positive control.
func TestAssertionLineBreakAnywhereIsRefused(t *testing.T) {
	f := newAssertionFixture(t)
	svc, b, code := f.svc, f.b, f.code
	valid := fuzzSign(t, f.key, `{"alg":"ES256","kid":"k1"}`, f.claims)
	if _, err := svc.verifyAssertion(t.Context(), b, valid, code); err != nil {
		t.Fatalf("ok/control: the genuine assertion is refused: %v", err)
	}
	for i := 0; i <= len(valid); i++ {
		for _, br := range []string{"\n", "\r", "\r\n"} {
			_, err := svc.verifyAssertion(t.Context(), b, valid[:i]+br+valid[i:], code)
			var r *assertionRefusal
			if !errors.As(err, &r) || r.reason != reasonMalformed {
				t.Fatalf("fail/%q-at-%d: %v, want refusal %v", br, i, err, reasonMalformed)
			}
		}
	}
}

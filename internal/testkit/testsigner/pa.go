package testsigner

import (
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// PA is the one fake personal agent of the tests: a Signer whose public
// key is published as a JWKS on loopback. Its URL is what tests register
// as the agent's issuer; the JWKS answers at every path, so
// URL+"/jwks.json" is its jwks_uri.
type PA struct {
	*Signer
	// URL is the loopback origin that serves the JWKS.
	URL string
}

// NewPA returns a PA with a fresh P-256 key named kid and its JWKS served
// until the test ends.
func NewPA(t testing.TB, kid string) *PA {
	t.Helper()
	pa := &PA{Signer: New(t, kid)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pa.JWKS())
	}))
	t.Cleanup(srv.Close)
	pa.URL = srv.URL
	return pa
}

// JWKS returns the Signer's public key as a JWK Set:
// {"keys":[{"kty":"EC","crv":"P-256","x":…,"y":…,"kid":KID,"alg":"ES256","use":"sig"}]}.
func (s *Signer) JWKS() []byte {
	raw, err := s.Key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		panic(err) // a P-256 key always encodes
	}
	b64 := base64.RawURLEncoding.EncodeToString
	return fmt.Appendf(nil, `{"keys":[{"kty":"EC","crv":"P-256","x":%q,"y":%q,"kid":%q,"alg":"ES256","use":"sig"}]}`,
		b64(raw[1:33]), b64(raw[33:]), s.KID)
}

// JWT returns the compact JWS of claims under header, both JSON objects
// written as given. The header's alg picks the signature: "HS256" is the
// algorithm-confusion attack (an HMAC keyed with the compressed public
// key), "none" has an empty signature, and any other alg (ES256, or one a
// verifier must refuse) gets an ES256 signature with the key (low S), so
// only the alg can be wrong.
func (s *Signer) JWT(t testing.TB, header, claims map[string]any) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	var sig []byte
	switch header["alg"] {
	case "HS256":
		m := hmac.New(sha256.New, elliptic.MarshalCompressed(elliptic.P256(), s.Key.X, s.Key.Y))
		m.Write([]byte(input))
		sig = m.Sum(nil)
	case "none":
	default:
		if sig, err = s.sign(input); err != nil {
			t.Fatal(err)
		}
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

package testsigner

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
)

// The PA's JWKS is its key, and its JWTs verify under that key with the
// header and claims as given; HS256 is keyed with the compressed public key.
func TestPAServesItsKeyAndSignsJWTs(t *testing.T) {
	pa := NewPA(t, "k1")
	resp, err := http.Get(pa.URL + "/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", body, err)
	}
	k := set.Keys[0]
	x, _ := base64.RawURLEncoding.DecodeString(k["x"])
	y, _ := base64.RawURLEncoding.DecodeString(k["y"])
	if k["kty"] != "EC" || k["crv"] != "P-256" || k["kid"] != "k1" || k["alg"] != "ES256" ||
		new(big.Int).SetBytes(x).Cmp(pa.Key.X) != 0 || new(big.Int).SetBytes(y).Cmp(pa.Key.Y) != 0 {
		t.Fatalf("JWKS %s is not the PA's key", body)
	}

	tok := pa.JWT(t, map[string]any{"alg": "ES256", "kid": "k1", "typ": "JWT"}, map[string]any{"sub": "u"})
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%q is not compact", tok)
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if string(hdr) != `{"alg":"ES256","kid":"k1","typ":"JWT"}` {
		t.Errorf("header %s", hdr)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if len(sig) != 64 || !ecdsa.Verify(&pa.Key.PublicKey, sum[:], r, s) {
		t.Fatal("the ES256 signature does not verify under the PA's key")
	}
	if s.Cmp(new(big.Int).Rsh(elliptic.P256().Params().N, 1)) > 0 {
		t.Error("high S")
	}

	hs := strings.Split(pa.JWT(t, map[string]any{"alg": "HS256"}, map[string]any{}), ".")
	m := hmac.New(sha256.New, elliptic.MarshalCompressed(elliptic.P256(), pa.Key.X, pa.Key.Y))
	m.Write([]byte(hs[0] + "." + hs[1]))
	if got, _ := base64.RawURLEncoding.DecodeString(hs[2]); !hmac.Equal(got, m.Sum(nil)) {
		t.Error("HS256 is not keyed with the compressed public key")
	}
	if none := strings.Split(pa.JWT(t, map[string]any{"alg": "none"}, map[string]any{}), "."); none[2] != "" {
		t.Errorf("alg none has signature %q", none[2])
	}
}

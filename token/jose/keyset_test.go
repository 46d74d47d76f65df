package jose_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pactd.dev/pactd/token/jose"
)

func TestParseJWKS(t *testing.T) {
	t.Parallel()
	ec := newECKey(t)
	ec2 := newECKey(t)
	rs := newRSAKey(t, 2048)
	rs1024 := newRSAKey(t, 1024)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	okEC := ecJWK(t, &ec.PublicKey, "ec1", map[string]any{"alg": "ES256", "use": "sig"})
	many := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = ecJWK(t, &ec.PublicKey, fmt.Sprintf("k%d", i), nil)
		}
		return out
	}
	raw := func(s string) []byte { return []byte(s) }
	offCurve := ecJWK(t, &ec.PublicKey, "bad", nil)
	offCurve["y"] = offCurve["x"]

	tests := []struct {
		name    string
		doc     []byte
		wantErr error
		wantLen int
	}{
		{name: "ok/ec-p256", doc: jwksDoc(t, okEC), wantLen: 1},
		{name: "ok/rsa-2048", doc: jwksDoc(t, rsaJWK(&rs.PublicKey, "r1", map[string]any{"alg": "RS256", "use": "sig"})), wantLen: 1},
		{name: "ok/mixed-and-kidless", doc: jwksDoc(t, okEC, ecJWK(t, &ec2.PublicKey, "", nil), rsaJWK(&rs.PublicKey, "", nil)), wantLen: 3},
		{name: "ok/empty-set", doc: jwksDoc(t), wantLen: 0},
		{name: "ok/key-ops-verify", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"key_ops": []string{"verify"}})), wantLen: 1},
		{name: "ok/unknown-members-ignored", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"x5t": "abc", "ext": true})), wantLen: 1},
		{name: "ok/exactly-max-keys", doc: jwksDoc(t, many(100)...), wantLen: 100},
		{name: "ok/same-key-two-kids", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "a", nil), ecJWK(t, &ec.PublicKey, "b", nil)), wantLen: 2},

		{name: "fail/too-many-keys", doc: jwksDoc(t, many(101)...), wantErr: jose.ErrTooManyKeys},
		{name: "fail/ec-private-d", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"d": "AAAA"})), wantErr: jose.ErrPrivateKeyMaterial},
		{name: "fail/rsa-private-p", doc: jwksDoc(t, rsaJWK(&rs.PublicKey, "r", map[string]any{"p": "AAAA"})), wantErr: jose.ErrPrivateKeyMaterial},
		{name: "fail/rsa-private-q", doc: jwksDoc(t, rsaJWK(&rs.PublicKey, "r", map[string]any{"q": "AAAA"})), wantErr: jose.ErrPrivateKeyMaterial},
		{name: "fail/rsa-private-dp", doc: jwksDoc(t, rsaJWK(&rs.PublicKey, "r", map[string]any{"dp": "AAAA"})), wantErr: jose.ErrPrivateKeyMaterial},
		{name: "fail/rsa-private-dq", doc: jwksDoc(t, rsaJWK(&rs.PublicKey, "r", map[string]any{"dq": "AAAA"})), wantErr: jose.ErrPrivateKeyMaterial},
		{name: "fail/rsa-private-qi", doc: jwksDoc(t, rsaJWK(&rs.PublicKey, "r", map[string]any{"qi": "AAAA"})), wantErr: jose.ErrPrivateKeyMaterial},
		{name: "fail/ec-with-k", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"k": "AAAA"})), wantErr: jose.ErrPrivateKeyMaterial},
		{name: "fail/oct", doc: jwksDoc(t, map[string]any{"kty": "oct", "k": "c2VjcmV0", "kid": "h"}), wantErr: jose.ErrSymmetricKey},
		{name: "fail/oct-among-good", doc: jwksDoc(t, okEC, map[string]any{"kty": "oct", "k": "c2VjcmV0"}), wantErr: jose.ErrSymmetricKey},
		{name: "fail/rsa-1024", doc: jwksDoc(t, rsaJWK(&rs1024.PublicKey, "r", nil)), wantErr: jose.ErrWeakRSAKey},
		{name: "fail/p384", doc: jwksDoc(t, ecJWK(t, &p384.PublicKey, "p384", nil)), wantErr: jose.ErrUnsupportedCurve},
		{name: "fail/p521", doc: jwksDoc(t, ecJWK(t, &p521.PublicKey, "p521", nil)), wantErr: jose.ErrUnsupportedCurve},
		{name: "fail/secp256k1", doc: jwksDoc(t, map[string]any{"kty": "EC", "crv": "secp256k1", "x": okEC["x"], "y": okEC["y"]}), wantErr: jose.ErrUnsupportedCurve},
		{name: "fail/okp", doc: jwksDoc(t, map[string]any{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}), wantErr: jose.ErrUnsupportedKeyType},
		{name: "fail/duplicate-kid", doc: jwksDoc(t, okEC, ecJWK(t, &ec2.PublicKey, "ec1", nil)), wantErr: jose.ErrDuplicateKID},
		{name: "fail/use-enc", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"use": "enc"})), wantErr: jose.ErrKeyUse},
		{name: "fail/use-not-string", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"use": 1})), wantErr: jose.ErrInvalidKey},
		{name: "fail/key-ops-sign-only", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"key_ops": []string{"sign"}})), wantErr: jose.ErrKeyUse},
		{name: "fail/alg-mismatch-ec", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"alg": "RS256"})), wantErr: jose.ErrKeyAlgorithm},
		{name: "fail/alg-mismatch-rsa", doc: jwksDoc(t, rsaJWK(&rs.PublicKey, "r", map[string]any{"alg": "PS256"})), wantErr: jose.ErrKeyAlgorithm},
		{name: "fail/off-curve", doc: jwksDoc(t, offCurve), wantErr: jose.ErrInvalidKey},
		{name: "fail/short-coordinate", doc: jwksDoc(t, map[string]any{"kty": "EC", "crv": "P-256", "x": "AAAA", "y": okEC["y"]}), wantErr: jose.ErrInvalidKey},
		{name: "fail/missing-kty", doc: jwksDoc(t, map[string]any{"crv": "P-256", "x": okEC["x"], "y": okEC["y"]}), wantErr: jose.ErrInvalidKey},
		{name: "fail/empty-kid", doc: jwksDoc(t, ecJWK(t, &ec.PublicKey, "", map[string]any{"kid": ""})), wantErr: jose.ErrInvalidKey},
		{name: "fail/rsa-even-exponent", doc: jwksDoc(t, map[string]any{"kty": "RSA", "n": rsaJWK(&rs.PublicKey, "", nil)["n"], "e": "BA"}), wantErr: jose.ErrInvalidKey},
		{name: "fail/rsa-exponent-1", doc: jwksDoc(t, map[string]any{"kty": "RSA", "n": rsaJWK(&rs.PublicKey, "", nil)["n"], "e": "AQ"}), wantErr: jose.ErrInvalidKey},
		{name: "fail/bad-base64", doc: jwksDoc(t, map[string]any{"kty": "EC", "crv": "P-256", "x": "!!!", "y": okEC["y"]}), wantErr: jose.ErrInvalidKey},
		{name: "fail/not-json", doc: raw(`{"keys":[`), wantErr: jose.ErrMalformedDocument},
		{name: "fail/not-object", doc: raw(`[]`), wantErr: jose.ErrMalformedDocument},
		{name: "fail/keys-missing", doc: raw(`{}`), wantErr: jose.ErrMalformedDocument},
		{name: "fail/keys-null", doc: raw(`{"keys":null}`), wantErr: jose.ErrMalformedDocument},
		{name: "fail/key-not-object", doc: raw(`{"keys":[1]}`), wantErr: jose.ErrMalformedDocument},
		{name: "fail/duplicate-member", doc: raw(`{"keys":[{"kty":"EC","kty":"oct"}]}`), wantErr: jose.ErrMalformedDocument},
		{name: "fail/duplicate-keys", doc: raw(`{"keys":[],"keys":[]}`), wantErr: jose.ErrMalformedDocument},
		{name: "fail/trailing-data", doc: raw(`{"keys":[]} {}`), wantErr: jose.ErrMalformedDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set, err := jose.ParseJWKS(tt.doc, 0)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !errors.Is(err, jose.ErrBadDocument) {
					t.Fatalf("err = %v, not in class ErrBadDocument", err)
				}
				if set != nil {
					t.Fatal("a refused document returned a key set")
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if set.Len() != tt.wantLen {
				t.Fatalf("Len = %d, want %d", set.Len(), tt.wantLen)
			}
		})
	}
}

func TestParseJWKSIndexes(t *testing.T) {
	t.Parallel()
	ec := newECKey(t)
	rs := newRSAKey(t, 2048)
	doc := jwksDoc(t, ecJWK(t, &ec.PublicKey, "ec", nil), rsaJWK(&rs.PublicKey, "", nil))
	set, err := jose.ParseJWKS(doc, 0)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := set.Lookup("ec")
	if !ok || k.Algorithm() != jose.AlgES256 || k.ECDSA() == nil || !k.ECDSA().Equal(&ec.PublicKey) || k.RSA() != nil {
		t.Fatalf("Lookup(ec) = %+v, %v", k, ok)
	}
	if _, ok := set.Lookup(""); ok {
		t.Fatal(`Lookup("") matched a kid-less key`)
	}
	if _, ok := set.Lookup("EC"); ok {
		t.Fatal("Lookup is not case-sensitive")
	}
	r := set.At(1)
	if r.KID() != "" || r.Algorithm() != jose.AlgRS256 || !r.RSA().Equal(&rs.PublicKey) {
		t.Fatalf("At(1) = %+v", r)
	}
	if got, ok := set.LookupThumbprint(r.Thumbprint()); !ok || got != r {
		t.Fatal("LookupThumbprint did not find the RSA key")
	}
	var other [32]byte
	if _, ok := set.LookupThumbprint(other); ok {
		t.Fatal("LookupThumbprint found a zero thumbprint")
	}
}

// TestThumbprintRFC7638 pins the thumbprint to the RFC 7638 §3.1 example.
func TestThumbprintRFC7638(t *testing.T) {
	t.Parallel()
	const n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
	set, err := jose.ParseJWKS([]byte(`{"keys":[{"kty":"RSA","n":"`+n+`","e":"AQAB","alg":"RS256","kid":"2011-04-29"}]}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	k := set.At(0)
	if got := k.ThumbprintString(); got != "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs" {
		t.Fatalf("thumbprint = %s", got)
	}
	tp := k.Thumbprint()
	if hex.EncodeToString(tp[:]) != "3736cbb1787cb8309c77ee8c3705c5e16ffb9e859715901f1e4c59b11182f57b" {
		t.Fatal("hex thumbprint mismatch")
	}
	// Leading zero bytes in e do not change the thumbprint (minimal form).
	set2, err := jose.ParseJWKS([]byte(`{"keys":[{"kty":"RSA","n":"`+n+`","e":"AAEAAQ"}]}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if set2.At(0).Thumbprint() != tp {
		t.Fatal("padded exponent changed the thumbprint")
	}
}

func TestNewKeySetAndMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	ec := newECKey(t)
	rs := newRSAKey(t, 2048)
	ek, err := jose.NewECKey("e1", &ec.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := jose.NewRSAKey("", &rs.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	set, err := jose.NewKeySet(ek, rk)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := set.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), `"d"`) {
		t.Fatalf("public JWKS carries d: %s", doc)
	}
	back, err := jose.ParseJWKS(doc, 0)
	if err != nil {
		t.Fatalf("reparse: %v (%s)", err, doc)
	}
	if back.Len() != 2 || back.At(0).Thumbprint() != ek.Thumbprint() || back.At(1).Thumbprint() != rk.Thumbprint() || back.At(0).KID() != "e1" {
		t.Fatalf("round trip changed the set: %s", doc)
	}

	// Failures.
	if _, err := jose.NewKeySet(ek, ek); !errors.Is(err, jose.ErrDuplicateKID) {
		t.Fatalf("duplicate kid: %v", err)
	}
	if _, err := jose.NewKeySet(jose.Key{}); !errors.Is(err, jose.ErrInvalidKey) {
		t.Fatalf("zero key: %v", err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if _, err := jose.NewECKey("x", &p384.PublicKey); !errors.Is(err, jose.ErrUnsupportedCurve) {
		t.Fatalf("P-384: %v", err)
	}
	weak := newRSAKey(t, 1024)
	if _, err := jose.NewRSAKey("x", &weak.PublicKey); !errors.Is(err, jose.ErrWeakRSAKey) {
		t.Fatalf("RSA-1024: %v", err)
	}
	if _, err := jose.NewRSAKey("x", &rsa.PublicKey{N: rs.N, E: 1}); !errors.Is(err, jose.ErrInvalidKey) {
		t.Fatalf("e=1: %v", err)
	}
}

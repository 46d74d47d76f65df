package jose_test

import (
	"crypto"
	"errors"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"pactd.dev/pactd/token/jose"
)

// TestKeySetsAgreeWithJWX cross-checks JWK handling with lestrrat-go/jwx/v3:
// for every document ParseJWKS accepts, jwx parses and validates the same
// keys with the same kids and RFC 7638 thumbprints, and the set's own
// MarshalJSON output reads back in jwx the same way. Documents that PACT
// refuses (private members, oct keys, RSA under 2048 bits, duplicate kids,
// a point off the curve) are refused by ParseJWKS with their sentinel
// whatever jwx makes of them: jwx serves as the oracle here, not as the
// policy.
func TestKeySetsAgreeWithJWX(t *testing.T) {
	t.Parallel()
	ec, ec2 := newECKey(t), newECKey(t)
	rs, rs4096 := newRSAKey(t, 2048), newRSAKey(t, 4096)
	accepted := map[string][]byte{
		"ec":      jwksDoc(t, ecJWK(t, &ec.PublicKey, "e1", map[string]any{"alg": "ES256", "use": "sig"})),
		"rsa":     jwksDoc(t, rsaJWK(&rs.PublicKey, "r1", map[string]any{"alg": "RS256"})),
		"rsa4096": jwksDoc(t, rsaJWK(&rs4096.PublicKey, "r4", nil)),
		"mixed":   jwksDoc(t, ecJWK(t, &ec.PublicKey, "e1", nil), ecJWK(t, &ec2.PublicKey, "", nil), rsaJWK(&rs.PublicKey, "r1", nil)),
	}
	for name, doc := range accepted {
		t.Run("ok/"+name, func(t *testing.T) {
			ks, err := jose.ParseJWKS(doc, 0)
			if err != nil {
				t.Fatalf("ParseJWKS: %v", err)
			}
			compare(t, ks, doc)
			out, err := ks.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			compare(t, ks, out)
		})
	}

	offCurve := ecJWK(t, &ec.PublicKey, "bad", nil)
	offCurve["y"] = offCurve["x"]
	refused := []struct {
		name string
		doc  []byte
		want error
	}{
		{"ec-private-d", jwksDoc(t, ecJWK(t, &ec.PublicKey, "e", map[string]any{"d": "AAAA"})), jose.ErrPrivateKeyMaterial},
		{"oct", jwksDoc(t, map[string]any{"kty": "oct", "k": "c2VjcmV0", "kid": "s"}), jose.ErrSymmetricKey},
		{"rsa-1024", jwksDoc(t, rsaJWK(&newRSAKey(t, 1024).PublicKey, "r", nil)), jose.ErrWeakRSAKey},
		{"duplicate-kid", jwksDoc(t, ecJWK(t, &ec.PublicKey, "k", nil), ecJWK(t, &ec2.PublicKey, "k", nil)), jose.ErrDuplicateKID},
		{"off-curve", jwksDoc(t, offCurve), jose.ErrInvalidKey},
	}
	for _, tt := range refused {
		t.Run("fail/"+tt.name, func(t *testing.T) {
			if _, err := jose.ParseJWKS(tt.doc, 0); !errors.Is(err, tt.want) {
				t.Fatalf("ParseJWKS = %v, want %v", err, tt.want)
			}
			_, jerr := jwk.Parse(tt.doc)
			t.Logf("jwx jwk.Parse: %v", jerr) // for the record; PACT's rule decides
		})
	}
}

// compare checks that jwx reads doc into the keys of ks: same count, kids
// and thumbprints, each key valid for jwx.
func compare(t *testing.T, ks *jose.KeySet, doc []byte) {
	t.Helper()
	set, err := jwk.Parse(doc)
	if err != nil {
		t.Fatalf("jwx refuses %s: %v", doc, err)
	}
	if set.Len() != ks.Len() {
		t.Fatalf("jwx reads %d keys, ParseJWKS %d", set.Len(), ks.Len())
	}
	for i := range ks.Len() {
		want := ks.At(i)
		k, _ := set.Key(i)
		if err := k.Validate(); err != nil {
			t.Fatalf("key %d: jwx validation: %v", i, err)
		}
		if kid, _ := k.KeyID(); kid != want.KID() {
			t.Fatalf("key %d: jwx kid %q, ours %q", i, kid, want.KID())
		}
		tp, err := k.Thumbprint(crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if got := want.Thumbprint(); string(tp) != string(got[:]) {
			t.Fatalf("key %d: jwx thumbprint %x, ours %x", i, tp, got)
		}
	}
}

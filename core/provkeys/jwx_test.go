package provkeys_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"

	"pactd.dev/pactd/core/provkeys"
)

// TestThumbprintAndJWKSAgreeWithJWX cross-checks the Provider's key
// publication with lestrrat-go/jwx/v3: the RFC 7638 thumbprint (the kid)
// equals jwx's, the JWKS document pactd serves parses in jwx into the same
// public keys (same thumbprints) under the same kids with alg ES256 and use sig, passes jwx's
// key validation, and a token the ring signs verifies in jwx with the key
// jwx read from that document.
func TestThumbprintAndJWKSAgreeWithJWX(t *testing.T) {
	for range 32 {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		got, err := provkeys.Thumbprint(&priv.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		k, err := jwk.Import(&priv.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		tp, err := k.Thumbprint(crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if want := base64.RawURLEncoding.EncodeToString(tp); got != want {
			t.Fatalf("Thumbprint = %q, jwx says %q", got, want)
		}
	}

	sharedStores(t, func(t *testing.T, open engine) {
		ctx := t.Context()
		c := newClock()
		r := openRing(t, open(t), c)
		if _, err := r.Rotate(ctx); err != nil { // two published keys
			t.Fatalf("Rotate: %v", err)
		}
		doc, err := r.JWKS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		set, err := jwk.Parse(doc)
		if err != nil {
			t.Fatalf("jwx refuses the JWKS: %v\n%s", err, doc)
		}
		keys, order := jwksOf(t, r)
		if set.Len() != len(order) || len(order) != 2 {
			t.Fatalf("jwx reads %d keys, pactd publishes %v", set.Len(), order)
		}
		for i, kid := range order {
			k, ok := set.Key(i)
			if !ok {
				t.Fatalf("key %d missing", i)
			}
			if err := k.Validate(); err != nil {
				t.Fatalf("key %s: jwx validation: %v", kid, err)
			}
			if got, _ := k.KeyID(); got != kid {
				t.Fatalf("key %d kid %q, want %q", i, got, kid)
			}
			tp, err := k.Thumbprint(crypto.SHA256)
			if err != nil || base64.RawURLEncoding.EncodeToString(tp) != kid {
				t.Fatalf("key %s: jwx thumbprint %x, %v", kid, tp, err)
			}
			if alg, _ := k.Algorithm(); alg.String() != "ES256" {
				t.Fatalf("key %s: alg %v", kid, alg)
			}
			if use, _ := k.KeyUsage(); use != "sig" {
				t.Fatalf("key %s: use %q", kid, use)
			}
			// The same thumbprint means the same crv, x and y (RFC 7638 §3).
			if keys[kid] == nil {
				t.Fatalf("key %s not published", kid)
			}
		}
		tok, err := r.Sign(ctx, "pact-receipt+jws", []byte(`{"grantId":"g"}`))
		if err != nil {
			t.Fatal(err)
		}
		kid := signedKID(t, r)
		k, ok := set.LookupKeyID(kid)
		if !ok {
			t.Fatalf("jwx finds no key %s", kid)
		}
		if _, err := jwxjws.Verify([]byte(tok), jwxjws.WithKey(jwa.ES256(), k), jwxjws.WithCompact()); err != nil {
			t.Fatalf("jwx does not verify the ring's token: %v", err)
		}
	})
}

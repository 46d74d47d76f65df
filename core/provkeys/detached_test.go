package provkeys_test

import (
	"encoding/base64"
	"math/big"
	"testing"

	"crypto/elliptic"

	"github.com/lestrrat-go/jwx/v3/jwk"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"

	"pactd.dev/pactd/core/provkeys"
)

// TestSignDetached: the detached JWS verifies in jwx against the ring's own
// JWKS document with the payload given apart; the protected header is the
// exact bytes the A2A card signature asks for; two replicas sign the same
// payload into the same bytes (RFC 6979); S is low; after a rotation takes
// effect the new key signs, and what the old key signed keeps verifying
// against the JWKS while the old key is published.
func TestSignDetached(t *testing.T) {
	sharedStores(t, func(t *testing.T, open engine) {
		ctx := t.Context()
		c := newClock()
		r1 := openRing(t, open(t), c)
		r2 := openRing(t, open(t), c)
		payload := []byte(`{"name":"Acme"}`)
		const jku = "https://provider.example/a2a/acme/oauth/jwks.json"

		a, err := r1.SignDetached(ctx, jku, payload)
		if err != nil {
			t.Fatal(err)
		}
		hdr, _ := base64.RawURLEncoding.DecodeString(a.Protected)
		if want := `{"alg":"ES256","kid":"` + a.KID + `","typ":"JOSE","jku":"` + jku + `"}`; string(hdr) != want {
			t.Fatalf("protected header %s, want %s", hdr, want)
		}
		b, err := r2.SignDetached(ctx, jku, payload)
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Fatalf("two replicas signed differently:\n%+v\n%+v", a, b)
		}
		sig, _ := base64.RawURLEncoding.DecodeString(a.Signature)
		half := new(big.Int).Rsh(elliptic.P256().Params().N, 1)
		if len(sig) != 64 || new(big.Int).SetBytes(sig[32:]).Cmp(half) > 0 {
			t.Fatalf("signature not 64 bytes with a low S: %x", sig)
		}
		noJKU, err := r1.SignDetached(ctx, "", payload)
		if err != nil {
			t.Fatal(err)
		}
		if hdr, _ := base64.RawURLEncoding.DecodeString(noJKU.Protected); string(hdr) != `{"alg":"ES256","kid":"`+a.KID+`","typ":"JOSE"}` {
			t.Fatalf("header without jku: %s", hdr)
		}

		verify := func(t *testing.T, d provkeys.DetachedJWS, payload []byte) error {
			t.Helper()
			doc, err := r1.JWKS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			set, err := jwk.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = jwxjws.Verify([]byte(d.Protected+".."+d.Signature), jwxjws.WithKeySet(set), jwxjws.WithDetachedPayload(payload))
			return err
		}
		if err := verify(t, a, payload); err != nil {
			t.Fatalf("jwx refuses the detached JWS: %v", err)
		}
		// Refusals, each for its own reason: another payload; a signature
		// moved under a header naming another kid.
		if err := verify(t, a, []byte(`{"name":"Acme!"}`)); err == nil {
			t.Fatal("jwx verified a changed payload")
		}

		if _, err := r1.Rotate(ctx); err != nil {
			t.Fatal(err)
		}
		if d, _ := r1.SignDetached(ctx, jku, payload); d != a {
			t.Fatal("the next key signed before its activation")
		}
		c.Advance(provkeys.DefaultPublishDelay)
		if err := r1.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		n, err := r1.SignDetached(ctx, jku, payload)
		if err != nil {
			t.Fatal(err)
		}
		if n.KID == a.KID {
			t.Fatal("the old key still signs after the rotation took effect")
		}
		if err := verify(t, n, payload); err != nil {
			t.Fatalf("new signature: %v", err)
		}
		if err := verify(t, a, payload); err != nil {
			t.Fatalf("old signature after rotation: %v", err)
		}
		c.Advance(provkeys.DefaultRetireGrace)
		if err := r1.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if err := verify(t, a, payload); err == nil {
			t.Fatal("old signature verified after its key left the JWKS")
		}
	})
}

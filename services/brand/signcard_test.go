package brand_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/lestrrat-go/jwx/v3/jwk"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/jcs"
	"pactd.dev/pactd/internal/testclock"
	"pactd.dev/pactd/services/brand"
)

// splitCard takes a served card apart as an A2A verifier does (§8.4.3):
// the signatures array, and the canonical form of the card without it.
func splitCard(t *testing.T, card string) (sigs []map[string]any, payload []byte) {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(card), &obj); err != nil {
		t.Fatalf("card %s: %v", card, err)
	}
	if err := json.Unmarshal(obj["signatures"], &sigs); err != nil {
		t.Fatalf("signatures of %s: %v", card, err)
	}
	delete(obj, "signatures")
	rest, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if payload, err = jcs.Canonicalize(rest); err != nil {
		t.Fatal(err)
	}
	return sigs, payload
}

// TestSignedCard: GetAgentCard's card carries one signature whose detached
// payload is the canonical card without signatures, with the header A2A
// §8.4.2 names (ES256, the active kid, typ JOSE, jku the Brand's JWKS); it
// verifies in jwx against the ring's JWKS before and after a rotation; the
// unsigned members are the bytes the card had before signing.
func TestSignedCard(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		ctx := t.Context()
		s := dbtest.Open(t, dbURL, t.TempDir())
		clock := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		ring, err := provkeys.Open(ctx, provkeys.Config{Store: s, KEK: bytes.Repeat([]byte{1}, 32), Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		svc := brand.New(brand.Deps{Store: s, PublicURL: "https://provider.example", CardSigner: ring, Now: clock.Now})
		if _, err := svc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme <&> \u2028", Description: "Support"}); err != nil {
			t.Fatal(err)
		}
		fetch := func() string {
			t.Helper()
			res, err := svc.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "acme"})
			if err != nil {
				t.Fatal(err)
			}
			return res.GetCardJson()
		}
		verify := func(card string) (kid string, err error) {
			t.Helper()
			sigs, payload := splitCard(t, card)
			if len(sigs) != 1 || len(sigs[0]) != 2 {
				t.Fatalf("signatures %v: want one {protected, signature}", sigs)
			}
			protected, _ := sigs[0]["protected"].(string)
			signature, _ := sigs[0]["signature"].(string)
			var hdr struct{ Alg, Kid, Typ, Jku string }
			raw, _ := base64.RawURLEncoding.DecodeString(protected)
			if err := json.Unmarshal(raw, &hdr); err != nil || hdr.Alg != "ES256" || hdr.Typ != "JOSE" ||
				hdr.Jku != "https://provider.example/a2a/acme/oauth/jwks.json" || hdr.Kid == "" {
				t.Fatalf("protected header %s (%v)", raw, err)
			}
			doc, err := ring.JWKS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			set, err := jwk.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = jwxjws.Verify([]byte(protected+".."+signature), jwxjws.WithKeySet(set), jwxjws.WithDetachedPayload(payload))
			return hdr.Kid, err
		}

		before := fetch()
		unsigned, _, _ := strings.Cut(before, `,"signatures":`)
		if want, err := brand.BuildCard(mustBrand(t, s, "acme"), "https://provider.example/a2a/acme"); err != nil || unsigned+"}" != string(want) {
			t.Fatalf("signed card's members %s}\nwant the unsigned card %s", unsigned, want)
		}
		if !strings.HasSuffix(before, `"}]}`) {
			t.Fatalf("signatures is not the card's last member: %s", before)
		}
		oldKID, err := verify(before)
		if err != nil {
			t.Fatalf("card does not verify: %v", err)
		}
		if again := fetch(); again != before {
			t.Fatalf("the same card and key signed into other bytes:\n%s\n%s", before, again)
		}
		// Refusal: a card changed after signing (another name) does not
		// verify; the unchanged card above is the positive control.
		if _, err := verify(strings.Replace(before, `"name":"Acme`, `"name":"Evil`, 1)); err == nil {
			t.Fatal("a changed card verified")
		}

		if _, err := ring.Rotate(ctx); err != nil {
			t.Fatal(err)
		}
		clock.Advance(provkeys.DefaultPublishDelay)
		if err := ring.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		after := fetch()
		newKID, err := verify(after)
		if err != nil || newKID == oldKID {
			t.Fatalf("after rotation: kid %s (old %s), %v", newKID, oldKID, err)
		}
		if kid, err := verify(before); err != nil || kid != oldKID {
			t.Fatalf("card fetched before the rotation: %v", err)
		}
	})
}

func mustBrand(t *testing.T, s db.Store, id string) db.Brand {
	t.Helper()
	b, err := s.GetBrand(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type failingSigner struct{}

func (failingSigner) SignDetached(context.Context, string, []byte) (provkeys.DetachedJWS, error) {
	return provkeys.DetachedJWS{}, provkeys.ErrStale
}

// TestSignedCardRefusals: no key to sign with gives Unavailable, never an
// unsigned card; SignCard refuses a card that is not one JSON object.
func TestSignedCardRefusals(t *testing.T) {
	s := dbtest.Open(t, "", t.TempDir())
	svc := brand.New(brand.Deps{Store: s, PublicURL: "https://provider.example", CardSigner: failingSigner{}})
	if _, err := svc.CreateBrand(t.Context(), &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
		t.Fatal(err)
	}
	if res, err := svc.GetAgentCard(t.Context(), &pactv1.GetAgentCardRequest{BrandId: "acme"}); connect.CodeOf(err) != connect.CodeUnavailable || res != nil {
		t.Fatalf("GetAgentCard without a key = %v, %v; want Unavailable", res, err)
	}
	for _, bad := range []string{``, `[]`, `{"a":1`, `{"a":1,"a":2}`} {
		if _, err := brand.SignCard(t.Context(), failingSigner{}, []byte(bad), ""); err == nil || errors.Is(err, provkeys.ErrStale) {
			t.Errorf("SignCard(%q) err = %v; want a refusal before signing", bad, err)
		}
	}
}

// BenchmarkGetAgentCard is the card's cost per fetch, signed and unsigned
// (the signature: canonical form, SHA-256 and one deterministic ES256
// signature); the limit beside it is BenchmarkECDSASign.
func BenchmarkGetAgentCard(b *testing.B) {
	ctx := b.Context()
	s := dbtest.Open(b, "", b.TempDir())
	ring, err := provkeys.Open(ctx, provkeys.Config{Store: s, KEK: bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		b.Fatal(err)
	}
	admin := brand.New(brand.Deps{Store: s, PublicURL: "https://provider.example"})
	if _, err := admin.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Description: "Support"}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		signer brand.CardSigner
	}{{"unsigned", nil}, {"signed", ring}} {
		b.Run(tc.name, func(b *testing.B) {
			svc := brand.New(brand.Deps{Store: s, PublicURL: "https://provider.example", CardSigner: tc.signer})
			req := &pactv1.GetAgentCardRequest{BrandId: "acme"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := svc.GetAgentCard(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkECDSASign is the raw limit: crypto/ecdsa's deterministic P-256
// signature of a SHA-256 digest, as SignDetached makes it.
func BenchmarkECDSASign(b *testing.B) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	d := sha256.Sum256([]byte("card"))
	for b.Loop() {
		if _, err := priv.Sign(nil, d[:], crypto.SHA256); err != nil {
			b.Fatal(err)
		}
	}
}

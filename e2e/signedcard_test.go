package e2e_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"

	"pactd.dev/pactd/core/provkeys"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/jcs"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/server"
)

// TestSignedAgentCard fetches a Brand's Agent Card from each frontend, as a
// PA does, and verifies it as A2A 1.0 §8.4.3 says, with jwx: the one
// signature's detached payload is the RFC 8785 canonical card without
// signatures, and its key is found by kid in the JWKS fetched from pactd at
// the Brand's oauth/jwks.json (which the header's jku names, under the
// Provider's public URL). Then the Provider rotates its key and the clock
// passes the new key's activation: the card is signed by the new key, and
// the card fetched before still verifies against the JWKS, which now holds
// both keys. A changed card does not verify (the refusal; the fetched
// cards are the positive control).
func TestSignedAgentCard(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		clock := testclock.New(time.Now())
		w := newWorldWith(t, dbURL, server.Deps{Clock: clock})

		before := w.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", "")
		if before.status != 200 {
			t.Fatalf("card: %d %s", before.status, before.body)
		}
		oldKID := w.verifyCard(t, "acme", before.body)

		admin := pactv1connect.NewTokenServiceClient(http.DefaultClient, w.pactdURL, bearer(adminToken))
		rot, err := admin.RotateSigningKey(t.Context(), &pactv1.RotateSigningKeyRequest{})
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(provkeys.DefaultPublishDelay + time.Second)

		after := w.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", "")
		if after.status != 200 {
			t.Fatalf("card after rotation: %d %s", after.status, after.body)
		}
		if kid := w.verifyCard(t, "acme", after.body); kid != rot.GetKid() || kid == oldKID {
			t.Fatalf("card after rotation signed by %s; want the new key %s (old %s)", kid, rot.GetKid(), oldKID)
		}
		if kid := w.verifyCard(t, "acme", before.body); kid != oldKID {
			t.Fatalf("card fetched before the rotation: kid %s, want %s", kid, oldKID)
		}
		// The delegated Brand's card (a longer card: the OAuth scheme and
		// scopes) verifies too.
		w.verifyCard(t, shop, w.do(t, "GET", "/a2a/"+shop+"/.well-known/agent-card.json", "").body)
	})
}

// verifyCard verifies card (A2A §8.4.3, jwx) against the JWKS pactd
// publishes for the Brand and returns the signing kid; a card that does not
// verify fails the test, and so does one that verifies after a change.
func (w *world) verifyCard(t *testing.T, brand, card string) string {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(card), &obj); err != nil {
		t.Fatalf("card %s: %v", card, err)
	}
	var sigs []map[string]json.RawMessage
	if err := json.Unmarshal(obj["signatures"], &sigs); err != nil || len(sigs) != 1 {
		t.Fatalf("signatures of %s: %v", card, err)
	}
	var protected, signature string
	if json.Unmarshal(sigs[0]["protected"], &protected) != nil || json.Unmarshal(sigs[0]["signature"], &signature) != nil || len(sigs[0]) != 2 {
		t.Fatalf("signature %v: want exactly protected and signature", sigs[0])
	}
	raw, err := base64.RawURLEncoding.DecodeString(protected)
	if err != nil {
		t.Fatal(err)
	}
	var hdr map[string]string
	if err := json.Unmarshal(raw, &hdr); err != nil {
		t.Fatalf("protected header %s: %v", raw, err)
	}
	jku := w.feURL + "/a2a/" + brand + "/oauth/jwks.json"
	if len(hdr) != 4 || hdr["alg"] != "ES256" || hdr["typ"] != "JOSE" || hdr["jku"] != jku || hdr["kid"] == "" {
		t.Fatalf("protected header %s; want alg ES256, typ JOSE, a kid and jku %s", raw, jku)
	}

	res, err := http.Get(w.pactdURL + "/a2a/" + brand + "/oauth/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("JWKS from pactd: %d %v", res.StatusCode, err)
	}
	set, err := jwk.Parse(jwks)
	if err != nil {
		t.Fatalf("JWKS %s: %v", jwks, err)
	}
	delete(obj, "signatures")
	unsigned, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := jcs.Canonicalize(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	compact := []byte(protected + ".." + signature)
	if _, err := jwxjws.Verify(compact, jwxjws.WithKeySet(set), jwxjws.WithDetachedPayload(payload)); err != nil {
		t.Fatalf("card does not verify against pactd's JWKS: %v\ncard %s\nJWKS %s", err, card, jwks)
	}
	obj["name"] = json.RawMessage(`"Someone else"`)
	changed, _ := json.Marshal(obj)
	if changedPayload, _ := jcs.Canonicalize(changed); func() bool {
		_, err := jwxjws.Verify(compact, jwxjws.WithKeySet(set), jwxjws.WithDetachedPayload(changedPayload))
		return err == nil
	}() {
		t.Fatal("a changed card verified")
	}
	return hdr["kid"]
}

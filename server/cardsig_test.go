package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/jcs"
)

// unsignedCard checks that a card GetAgentCard returned ends with a
// signatures array of one JWS that verifies (jwx, detached payload: the
// canonical card without signatures) against the instance's JWKS, and
// returns the card without that member, for tests that compare the card's
// bytes.
func unsignedCard(t *testing.T, inst *instance, card string) string {
	t.Helper()
	rest, sigs, ok := strings.Cut(card, `,"signatures":`)
	if !ok || !strings.HasSuffix(sigs, "}") {
		t.Fatalf("card without a trailing signatures member: %s", card)
	}
	var list []struct{ Protected, Signature string }
	if err := json.Unmarshal([]byte(strings.TrimSuffix(sigs, "}")), &list); err != nil || len(list) != 1 {
		t.Fatalf("signatures %s: %v", sigs, err)
	}
	unsigned := rest + "}"
	payload, err := jcs.Canonicalize([]byte(unsigned))
	if err != nil {
		t.Fatal(err)
	}
	res, err := tokens(inst, frontendToken).GetJwks(t.Context(), &pactv1.GetJwksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := jwk.Parse([]byte(res.GetJwksJson()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jwxjws.Verify([]byte(list[0].Protected+".."+list[0].Signature), jwxjws.WithKeySet(set), jwxjws.WithDetachedPayload(payload)); err != nil {
		t.Fatalf("card signature does not verify: %v\n%s", err, card)
	}
	return unsigned
}

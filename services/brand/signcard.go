package brand

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/internal/jcs"
)

// CardSigner signs an Agent Card's canonical form with the Provider's
// active key (provkeys.Ring satisfies it).
type CardSigner interface {
	SignDetached(ctx context.Context, jku string, payload []byte) (provkeys.DetachedJWS, error)
}

// cardSignature is one member of the card's signatures array (A2A 1.0
// §8.4.2, AgentCardSignature): protected header and signature, no
// unprotected header.
type cardSignature struct {
	Protected string `json:"protected"`
	Signature string `json:"signature"`
}

// SignCard returns the card with a signatures array of one JWS (A2A 1.0
// §8.4): its payload, detached, is the RFC 8785 canonical form of the card
// as given (which has no signatures member); its protected header names
// ES256, the active key's kid, typ JOSE and, as jku, jwksURL, the JWKS
// pactd publishes for the Brand. The card's own members keep their order
// and bytes; signatures is appended as the last member, so a verifier that
// removes it and canonicalizes gets back exactly the signed payload.
func SignCard(ctx context.Context, signer CardSigner, card []byte, jwksURL string) ([]byte, error) {
	if len(card) < 2 || card[0] != '{' || card[len(card)-1] != '}' {
		return nil, errors.New("brand: card is not one JSON object")
	}
	payload, err := jcs.Canonicalize(card)
	if err != nil {
		return nil, fmt.Errorf("brand: canonicalize card: %w", err)
	}
	d, err := signer.SignDetached(ctx, jwksURL, payload)
	if err != nil {
		return nil, err
	}
	sigs, err := json.Marshal([]cardSignature{{Protected: d.Protected, Signature: d.Signature}})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(card)+len(`,"signatures":`)+len(sigs))
	out = append(out, card[:len(card)-1]...)
	if len(card) > 2 { // a member precedes
		out = append(out, ',')
	}
	out = append(out, `"signatures":`...)
	out = append(out, sigs...)
	return append(out, '}'), nil
}

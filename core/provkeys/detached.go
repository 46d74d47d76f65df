package provkeys

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/json"
	"fmt"
	"math/big"
)

// JOSEType is the typ of a JWS that carries no token of its own kind: A2A
// §8.4.2 says an Agent Card signature's typ SHOULD be "JOSE".
const JOSEType = "JOSE"

// DetachedJWS is one JWS over a payload that travels apart from it (RFC 7515
// Appendix F): the two members of a flattened JWS JSON serialization that a
// detached payload leaves, and the kid that signed.
type DetachedJWS struct {
	// Protected is the base64url protected header.
	Protected string
	// Signature is the base64url raw R||S signature (low S).
	Signature string
	// KID is the signing key's kid, as the header names it.
	KID string
}

// SignDetached signs payload with the active key under the protected header
// {"alg":"ES256","kid":<active kid>,"typ":"JOSE"} plus "jku":jku when jku is
// not empty. The nonce is the RFC 6979 deterministic one, so every replica
// signs the same payload with the same key into the same bytes (a signed
// document served by any replica is byte-identical); S is low, as for
// every signature of the ring.
func (r *Ring) SignDetached(ctx context.Context, jku string, payload []byte) (DetachedJWS, error) {
	s, err := r.current(ctx)
	if err != nil {
		return DetachedJWS{}, err
	}
	k := s.signer(r.cfg.Now())
	if k == nil {
		return DetachedJWS{}, ErrNoSigningKey
	}
	raw, err := json.Marshal(struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
		Jku string `json:"jku,omitempty"`
	}{Alg, k.kid, JOSEType, jku})
	if err != nil {
		return DetachedJWS{}, fmt.Errorf("provkeys: encode header: %w", err)
	}
	protected := b64.EncodeToString(raw)
	input := make([]byte, 0, len(protected)+1+b64.EncodedLen(len(payload)))
	input = append(input, protected...)
	input = append(input, '.')
	input = b64.AppendEncode(input, payload)
	sig, err := signDeterministic(k, input)
	if err != nil {
		return DetachedJWS{}, err
	}
	return DetachedJWS{Protected: protected, Signature: b64.EncodeToString(sig), KID: k.kid}, nil
}

// signDeterministic returns the raw R||S ES256 signature of input with the
// RFC 6979 nonce (crypto/ecdsa signs deterministically when given no
// randomness), S brought to the lower half of the group order.
func signDeterministic(k *key, input []byte) ([]byte, error) {
	digest := sha256.Sum256(input)
	der, err := k.priv.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("provkeys: sign: %w", err)
	}
	var rs struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &rs); err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("provkeys: sign: malformed signature")
	}
	n := k.priv.Curve.Params().N
	if rs.S.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
		rs.S.Sub(n, rs.S)
	}
	sig := make([]byte, 64)
	rs.R.FillBytes(sig[:32])
	rs.S.FillBytes(sig[32:])
	return sig, nil
}

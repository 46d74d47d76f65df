package delegtoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
)

// Reason names the rule a refused token or receipt broke. It is for logs,
// metrics and tests, never for the client.
type Reason string

// The refusal reasons, in the order Verify checks them.
const (
	// ReasonOversized: longer than the size bound.
	ReasonOversized Reason = "oversized"
	// ReasonMalformed: not three base64url segments with a JSON object
	// header and payload.
	ReasonMalformed Reason = "malformed"
	// ReasonAlgorithm: alg missing or not ES256.
	ReasonAlgorithm Reason = "algorithm"
	// ReasonType: typ missing or not the one this kind of token must have.
	ReasonType Reason = "type"
	// ReasonHeader: a header member other than alg, kid and typ (jwk, jku,
	// x5u, x5c, crit, b64, …).
	ReasonHeader Reason = "header"
	// ReasonUnknownKey: kid missing or not a published Provider key.
	ReasonUnknownKey Reason = "unknown_key"
	// ReasonSignature: the signature does not verify.
	ReasonSignature Reason = "signature"
	// ReasonAudience: aud missing, not a single string, or not the
	// expected one.
	ReasonAudience Reason = "audience"
	// ReasonIssuer: iss missing, not a string, not the expected one, or
	// not aud + "/oauth".
	ReasonIssuer Reason = "issuer"
	// ReasonExpired: exp is not in the future.
	ReasonExpired Reason = "expired"
	// ReasonIssuedAt: iat is in the future beyond the skew.
	ReasonIssuedAt Reason = "issued_at"
	// ReasonLifetime: exp is not after iat, or more than 1 h after it.
	ReasonLifetime Reason = "lifetime"
	// ReasonClientID: client_id is not the expected PA issuer.
	ReasonClientID Reason = "client_id"
	// ReasonClaims: a required claim (exp, iat, client_id, sub, grant_id,
	// scope, or a receipt field) is missing or of the wrong type.
	ReasonClaims Reason = "claims"
	// ReasonReceiptMismatch: a receipt's claims differ from its JWS payload.
	ReasonReceiptMismatch Reason = "receipt_mismatch"
)

// Error is a refusal: the token or receipt is not acceptable. Any other
// error from Verify or VerifyReceipt is an infrastructure fault (the keys
// could not be loaded) and says nothing about the token.
type Error struct {
	// Reason is the first rule the input broke.
	Reason Reason
}

// Error implements error.
func (e *Error) Error() string { return "delegtoken: refused: " + string(e.Reason) }

func refuse(r Reason) error { return &Error{Reason: r} }

// VerificationKeys finds the Provider's published keys;
// *provkeys.Ring satisfies it. found is false for a kid that is not
// published; err is set only when the keys could not be loaded.
type VerificationKeys interface {
	PublicKey(ctx context.Context, kid string) (pub *ecdsa.PublicKey, found bool, err error)
}

// SigningKeys signs with the Provider's active key; *provkeys.Ring
// satisfies it. Sign returns a compact JWS with the header
// {"alg":"ES256","kid":…,"typ":typ}.
type SigningKeys interface {
	Sign(ctx context.Context, typ string, payload []byte) (string, error)
}

var (
	b64       = base64.RawURLEncoding
	b64Strict = base64.RawURLEncoding.Strict()
	p256      = elliptic.P256().Params()
	halfOrder = new(big.Int).Rsh(p256.N, 1)
)

// verified is a compact JWS whose header and signature passed.
type verified struct {
	kid     string
	payload []byte
}

// verifyJWS runs the header and signature checks shared by tokens and
// receipts. The payload is decoded only after the signature verified.
func verifyJWS(ctx context.Context, keys VerificationKeys, token, wantTyp string, maxBytes int) (verified, error) {
	if len(token) > maxBytes {
		return verified{}, refuse(ReasonOversized)
	}
	h, rest, ok1 := strings.Cut(token, ".")
	p, s, ok2 := strings.Cut(rest, ".")
	// An empty signature segment is still three segments (alg none looks
	// like that); it is refused by the alg check, then by the signature's.
	if !ok1 || !ok2 || strings.Contains(s, ".") || h == "" || p == "" {
		return verified{}, refuse(ReasonMalformed)
	}
	rawHeader, err := b64Strict.DecodeString(h)
	if err != nil {
		return verified{}, refuse(ReasonMalformed)
	}
	header, err := objectMembers(rawHeader)
	if err != nil {
		return verified{}, refuse(ReasonMalformed)
	}
	if alg, ok := stringMember(header, "alg"); !ok || alg != "ES256" {
		return verified{}, refuse(ReasonAlgorithm)
	}
	if typ, ok := stringMember(header, "typ"); !ok || typ != wantTyp {
		return verified{}, refuse(ReasonType)
	}
	for name := range header {
		if name != "alg" && name != "kid" && name != "typ" {
			return verified{}, refuse(ReasonHeader)
		}
	}
	kid, ok := stringMember(header, "kid")
	if !ok || kid == "" || len(kid) > 128 {
		return verified{}, refuse(ReasonUnknownKey)
	}
	pub, found, err := keys.PublicKey(ctx, kid)
	if err != nil {
		return verified{}, err
	}
	if !found {
		return verified{}, refuse(ReasonUnknownKey)
	}
	sig, err := b64Strict.DecodeString(s)
	if err != nil || len(sig) != 64 {
		return verified{}, refuse(ReasonSignature)
	}
	r := new(big.Int).SetBytes(sig[:32])
	ss := new(big.Int).SetBytes(sig[32:])
	// Only the low-S form is accepted (the signer always produces it), so
	// a signature has exactly one valid encoding.
	if r.Sign() == 0 || ss.Sign() == 0 || r.Cmp(p256.N) >= 0 || ss.Cmp(halfOrder) > 0 {
		return verified{}, refuse(ReasonSignature)
	}
	digest := sha256.Sum256([]byte(token[:len(h)+1+len(p)]))
	if !ecdsa.Verify(pub, digest[:], r, ss) {
		return verified{}, refuse(ReasonSignature)
	}
	payload, err := b64Strict.DecodeString(p)
	if err != nil {
		return verified{}, refuse(ReasonMalformed)
	}
	return verified{kid: kid, payload: payload}, nil
}

// objectMembers decodes a JSON object into its members, refusing anything
// that is not exactly one object and any duplicate member name (which
// different parsers would resolve differently, "\u0061lg" and "alg"
// included).
func objectMembers(data []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	if topLevelMembers(data) != len(m) {
		return nil, errors.New("duplicate member")
	}
	return m, nil
}

// topLevelMembers counts the member names of the JSON object in data,
// which must already be known to be valid JSON.
func topLevelMembers(data []byte) int {
	n, depth := 0, 0
	inString, escaped, expectName := false, false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			if depth == 1 && expectName {
				n++
				expectName = false
			}
		case '{':
			depth++
			if depth == 1 {
				expectName = true
			}
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 1 {
				expectName = true
			}
		}
	}
	return n
}

// stringMember returns a member that is a JSON string.
func stringMember(m map[string]json.RawMessage, name string) (string, bool) {
	raw, ok := m[name]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

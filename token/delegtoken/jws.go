package delegtoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/json"
	"errors"

	"pactd.dev/pactd/token/jws"
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

// The envelope of pactd's own tokens (the jws.Policy verifyJWS configures
// with each kind's size bound and typ): alg ES256, typ that kind's, no
// header member but alg, kid and typ, kid a published Provider key id (1 to
// 128 bytes). The payload is decoded only once the signature verified.
var (
	ownAlgs   = []string{jws.ES256}
	ownHeader = []string{"alg", "kid", "typ"}
	ownKID    = jws.KIDRule{Required: true, NonEmpty: true, MaxBytes: 128}
)

// envelopeReasons are the refusal reasons of the policy's failures.
var envelopeReasons = [...]Reason{
	jws.FailSize:      ReasonOversized,
	jws.FailSegments:  ReasonMalformed,
	jws.FailEncoding:  ReasonMalformed,
	jws.FailHeader:    ReasonMalformed,
	jws.FailAlg:       ReasonAlgorithm,
	jws.FailTyp:       ReasonType,
	jws.FailForbidden: ReasonHeader,
	jws.FailKID:       ReasonUnknownKey,
}

// verified is a compact JWS whose header and signature passed.
type verified struct {
	kid     string
	payload []byte
}

// verifyJWS runs the header and signature checks shared by tokens and
// receipts. The payload is decoded only after the signature verified.
func verifyJWS(ctx context.Context, keys VerificationKeys, token, wantTyp string, maxBytes int) (verified, error) {
	// An empty signature segment is still three segments (alg none looks
	// like that); it is refused by the alg check, then by the signature's.
	pol := jws.Policy{MaxBytes: maxBytes, Algs: ownAlgs, Typ: wantTyp, Only: ownHeader, KID: ownKID}
	t, fail := pol.Parse(token)
	if fail != jws.OK {
		return verified{}, refuse(envelopeReasons[fail])
	}
	parts, kid := t.Segments, t.KID
	pub, found, err := keys.PublicKey(ctx, kid)
	if err != nil {
		return verified{}, err
	}
	if !found {
		return verified{}, refuse(ReasonUnknownKey)
	}
	sig, ok := jws.Decode(parts.Signature)
	// pactd signed this itself: only the low-S form verifies (the policy in
	// package jws), so a token has exactly one valid encoding.
	digest := sha256.Sum256([]byte(parts.SigningInput))
	if !ok || !jws.VerifyES256(pub, &digest, sig, jws.Own) {
		return verified{}, refuse(ReasonSignature)
	}
	payload, ok := jws.Decode(parts.Payload)
	if !ok {
		return verified{}, refuse(ReasonMalformed)
	}
	return verified{kid: kid, payload: payload}, nil
}

// objectMembers decodes a JSON object into its members, refusing anything
// that is not exactly one object and any duplicate member name (which
// different parsers would resolve differently, "\u0061lg" and "alg"
// included).
func objectMembers(data []byte) (map[string]json.RawMessage, error) {
	m, ok := jws.Members(data)
	if !ok {
		return nil, errors.New("not a JSON object of unique members")
	}
	return m, nil
}

// stringMember returns a member that is a JSON string.
func stringMember(m map[string]json.RawMessage, name string) (string, bool) {
	v, _, ok := jws.StringMember(m, name)
	return v, ok
}

package delegation

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"pactd/db"
	pactv1 "pactd/gen/pact/v1"
	"pactd/internal/jose"
	"pactd/internal/jws"
	"pactd/internal/rpcerr"
)

// Brand login assertions (BRAND_LOGIN_MODE_SIGNED_ASSERTION, PACT §5 "Brand
// login → consent"): bounds and clock rules.
const (
	// MaxBrandAssertionBytes bounds a Brand login assertion; a longer one
	// is refused before anything in it is decoded.
	MaxBrandAssertionBytes = 8 << 10
	// AssertionSkew is the clock skew tolerated on iat, nbf and exp.
	AssertionSkew = 30 * time.Second
	// AssertionMaxAge is the oldest assertion accepted (now - iat) and its
	// longest lifetime (exp - iat). The Brand issues 2 minutes.
	AssertionMaxAge = 300 * time.Second
	// maxJTI bounds the jti, which is stored.
	maxJTI = 256
	// maxEmail bounds the optional email claim (RFC 5321 path limit).
	maxEmail = 320
)

// assertionRefusal is a refused assertion: why, and a fixed client-safe
// message that never repeats the assertion.
type assertionRefusal struct {
	reason pactv1.BrandAssertionRefusal
	code   connect.Code
	msg    string
}

// Error returns the client-safe message.
func (r *assertionRefusal) Error() string { return r.msg }

// refuse builds a refusal with the code its reason implies: InvalidArgument
// when the input cannot be a valid assertion, else FailedPrecondition.
func refuse(reason pactv1.BrandAssertionRefusal, msg string) *assertionRefusal {
	code := connect.CodeFailedPrecondition
	switch reason {
	case pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_MALFORMED,
		pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_ALGORITHM,
		pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_FORBIDDEN_HEADER:
		code = connect.CodeInvalidArgument
	}
	return &assertionRefusal{reason: reason, code: code, msg: msg}
}

// rpcError is the refusal as an RPC error: the code, an ErrorInfo whose
// reason is the BrandAssertionRefusal name (domain pactd, the Brand in the
// metadata), and for InvalidArgument a BadRequest naming brand_assertion.
func (r *assertionRefusal) rpcError(brandID string) error {
	err := connect.NewError(r.code, errors.New(r.msg))
	info := &errdetails.ErrorInfo{Reason: r.reason.String(), Domain: rpcerr.Domain, Metadata: map[string]string{"brand_id": brandID}}
	if d, derr := connect.NewErrorDetail(info); derr == nil {
		err.AddDetail(d)
	}
	if r.code == connect.CodeInvalidArgument {
		br := &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "brand_assertion", Description: r.msg}}}
		if d, derr := connect.NewErrorDetail(br); derr == nil {
			err.AddDetail(d)
		}
	}
	return err
}

// Shorthands for the refusal reasons.
const (
	reasonMalformed        = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_MALFORMED
	reasonAlgorithm        = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_ALGORITHM
	reasonForbiddenHeader  = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_FORBIDDEN_HEADER
	reasonUnknownKey       = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_UNKNOWN_KEY
	reasonSignature        = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_SIGNATURE
	reasonIssuer           = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_ISSUER
	reasonAudience         = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_AUDIENCE
	reasonSubject          = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_SUBJECT
	reasonNotYetValid      = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_NOT_YET_VALID
	reasonExpired          = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_EXPIRED
	reasonLifetime         = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_LIFETIME
	reasonTooOld           = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_TOO_OLD
	reasonClaims           = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_CLAIMS
	reasonUserCodeMissing  = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_USER_CODE_MISSING
	reasonUserCodeMismatch = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_USER_CODE_MISMATCH
	reasonReplayed         = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_REPLAYED
	reasonNotPending       = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_NOT_PENDING
	reasonKeysUnavailable  = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_KEYS_UNAVAILABLE
	// reasonUserCodeUnexpected: a consent assertion at the connected page.
	reasonUserCodeUnexpected = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_USER_CODE_UNEXPECTED
)

// compactJWS is what the parser front end makes of an assertion: the
// header judged, the claims parsed into members but not yet judged, and
// nothing verified.
type compactJWS struct {
	alg          string // jose.AlgES256 or jose.AlgRS256
	kid          string // "" when the header has none
	signingInput string // header.payload, as received
	sig          []byte
	claims       map[string]json.RawMessage
}

// parseAssertion is the parser front end, run before any key is touched.
// In order: the size bound (before any decoding), three segments of strict
// base64url (no padding, whitespace or non-zero trailing bits), the header
// a JSON object of unique members, alg ES256 or RS256, none of the
// forbidden members (jwk, jku, x5u, x5c, crit, b64, zip, enc), kid a
// non-empty string if present, the claims a JSON object of unique members.
// typ and any other header member are ignored.
func parseAssertion(tok string) (compactJWS, *assertionRefusal) {
	parts, err := jws.Split(tok, MaxBrandAssertionBytes)
	if errors.Is(err, jws.ErrOversized) {
		return compactJWS{}, refuse(reasonMalformed, "the assertion is larger than 8 KiB")
	}
	if err != nil {
		return compactJWS{}, refuse(reasonMalformed, "the assertion is not a compact JWS of three segments")
	}
	hdrJSON, ok1 := jws.Decode(parts.Header)
	payload, ok2 := jws.Decode(parts.Payload)
	sig, ok3 := jws.Decode(parts.Signature)
	if !ok1 || !ok2 || !ok3 {
		return compactJWS{}, refuse(reasonMalformed, "an assertion segment is not strict base64url")
	}
	hdr, ok := jws.HeaderMembers(hdrJSON)
	if !ok {
		return compactJWS{}, refuse(reasonMalformed, "the assertion header is not a JSON object of unique members")
	}
	alg, present, isString := jws.StringMember(hdr, "alg")
	if !present || !isString || (alg != jose.AlgES256 && alg != jose.AlgRS256) {
		return compactJWS{}, refuse(reasonAlgorithm, "the assertion's alg must be ES256 or RS256")
	}
	for _, name := range [...]string{"jwk", "jku", "x5u", "x5c", "crit", "b64", "zip", "enc"} {
		if _, ok := hdr[name]; ok {
			return compactJWS{}, refuse(reasonForbiddenHeader, "the assertion header carries a member that is not allowed (jwk, jku, x5u, x5c, crit, b64, zip or enc)")
		}
	}
	kid, present, isString := jws.StringMember(hdr, "kid")
	if present && (!isString || kid == "" || len(kid) > jose.MaxKIDBytes) {
		return compactJWS{}, refuse(reasonMalformed, "the assertion's kid is not a non-empty string")
	}
	claims, ok := jws.Members(payload)
	if !ok {
		return compactJWS{}, refuse(reasonMalformed, "the assertion claims are not a JSON object of unique members")
	}
	return compactJWS{alg: alg, kid: kid, signingInput: parts.SigningInput, sig: sig, claims: claims}, nil
}

// brandAssertion is a verified Brand login assertion.
type brandAssertion struct {
	// subject is sub, the User's id at the Brand.
	subject string
	// jti is the assertion's id, recorded once per Brand.
	jti string
	// kid is the key that verified it.
	kid string
	// email is the optional email claim ("" when absent).
	email string
	// userCode is the user_code claim, normalized.
	userCode string
	// use is the single-use record to store with the decision.
	use db.BrandAssertionUse
}

// verifyAssertion verifies a Brand login assertion for the request's user
// code at Brand b, in the order BrandAssertionRefusal documents. A refusal
// is an *assertionRefusal; any other error is the caller's context ending
// or an infrastructure fault (for the caller to log). The assertion itself
// never appears in an error.
func (s *Service) verifyAssertion(ctx context.Context, b db.Brand, tok, userCode string) (brandAssertion, error) {
	return s.verifyAssertionFor(ctx, b, tok, assertionPurpose{aud: s.consentURL(b.ID), userCode: userCode})
}

// assertionPurpose is what an assertion is for: consent (aud the consent
// URL, a user_code claim) or the connected page (aud the connected URL,
// no user_code claim).
type assertionPurpose struct {
	aud string
	// userCode is the request's user code for consent ("" when the claim
	// names the authorization).
	userCode string
	// connected is set for the connected page.
	connected bool
}

// verifyAssertionFor verifies a Brand login assertion for purpose p.
func (s *Service) verifyAssertionFor(ctx context.Context, b db.Brand, tok string, p assertionPurpose) (brandAssertion, error) {
	issuer, jwksURI := b.Delegation.AssertionIssuer, b.Delegation.AssertionJWKSURI
	if issuer == "" || jwksURI == "" {
		return brandAssertion{}, refuse(reasonKeysUnavailable, "the Brand's signed login is not configured (assertion_issuer, assertion_jwks_uri)")
	}
	a, r := parseAssertion(tok)
	if r != nil {
		return brandAssertion{}, r
	}
	if a.kid == "" {
		return brandAssertion{}, refuse(reasonUnknownKey, "the assertion names no kid")
	}
	key, err := s.assertionKey(ctx, jwksURI, a.kid)
	if err != nil {
		return brandAssertion{}, err
	}
	if key.Algorithm() != a.alg {
		return brandAssertion{}, refuse(reasonUnknownKey, "the Brand's key with this kid does not fit the assertion's alg")
	}
	if !verifySignature(key, a.alg, a.signingInput, a.sig) {
		return brandAssertion{}, refuse(reasonSignature, "the assertion's signature does not verify with the Brand's key")
	}
	return checkAssertionClaims(a, issuer, p, b.ID, s.now())
}

// assertionKey returns the Brand's key with kid, refetching the key set
// once (subject to the source's cooldown) when the kid is unknown.
func (s *Service) assertionKey(ctx context.Context, uri, kid string) (*jose.Key, error) {
	if s.d.BrandKeys == nil {
		return nil, &keysFault{err: errors.New("no Brand key source configured (Deps.BrandKeys)")}
	}
	ks, err := s.d.BrandKeys.Keys(ctx, uri)
	if err != nil {
		return nil, keysError(ctx, err)
	}
	k, ok := ks.Lookup(kid)
	if ok {
		return k, nil
	}
	if ks, err = s.d.BrandKeys.Refresh(ctx, uri); err != nil {
		return nil, keysError(ctx, err)
	}
	if k, ok = ks.Lookup(kid); !ok {
		return nil, refuse(reasonUnknownKey, "the Brand publishes no key with the assertion's kid")
	}
	return k, nil
}

// keysError maps a key-source failure: the caller's context ending stays
// as it is; anything else is an infrastructure fault wrapped for the log.
func keysError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return ctxErr
	}
	return &keysFault{err: err}
}

// keysFault is a failure to obtain a Brand's assertion keys.
type keysFault struct{ err error }

// Error describes the failure for the log (jose errors carry the redacted
// URI, never a token).
func (f *keysFault) Error() string { return "Brand assertion keys: " + f.err.Error() }

// Unwrap returns the key source's error.
func (f *keysFault) Unwrap() error { return f.err }

// refusal is the client's error for a keys fault: FailedPrecondition when
// the Brand's JWKS URI is refused by policy (a configuration fault that a
// retry will not fix), else Unavailable.
func (f *keysFault) refusal() *assertionRefusal {
	if errors.Is(f.err, jose.ErrInvalidURI) {
		return refuse(reasonKeysUnavailable, "the Brand's assertion_jwks_uri is refused by pactd's fetch policy")
	}
	r := refuse(reasonKeysUnavailable, "the Brand's assertion keys cannot be fetched now; retry")
	r.code = connect.CodeUnavailable
	return r
}

// verifySignature checks sig over the signing input with k for alg: ES256
// as raw 64-byte R||S, RS256 as PKCS #1 v1.5. A Brand's key is a third
// party's: either ECDSA S form verifies (the low-S policy in package jws).
func verifySignature(k *jose.Key, alg, signingInput string, sig []byte) bool {
	digest := sha256.Sum256([]byte(signingInput))
	switch alg {
	case jose.AlgES256:
		return jws.VerifyES256(k.ECDSA(), &digest, sig, jws.ThirdParty)
	case jose.AlgRS256:
		return jws.VerifyRS256(k.RSA(), &digest, sig)
	}
	return false
}

// checkAssertionClaims judges the claims of a signature-verified assertion
// against the Brand's issuer, the purpose's aud (consent or connected URL)
// and user code, and the clock, in the documented order.
func checkAssertionClaims(a compactJWS, issuer string, p assertionPurpose, brandID string, now time.Time) (brandAssertion, error) {
	c := a.claims
	if iss, _, ok := jws.StringMember(c, "iss"); !ok || iss != issuer {
		return brandAssertion{}, refuse(reasonIssuer, "the assertion's iss is not the Brand's assertion issuer")
	}
	if aud, _, ok := jws.StringMember(c, "aud"); !ok || aud != p.aud {
		if p.connected {
			return brandAssertion{}, refuse(reasonAudience, "the assertion's aud is not this Brand's connected URL (one string)")
		}
		return brandAssertion{}, refuse(reasonAudience, "the assertion's aud is not this Brand's consent URL (one string)")
	}
	sub, _, ok := jws.StringMember(c, "sub")
	if !ok || !validBrandUser(sub) {
		return brandAssertion{}, refuse(reasonSubject, "the assertion's sub must be 1 to 256 bytes without control characters")
	}
	t := jws.Seconds(now)
	skew, maxAge := AssertionSkew.Seconds(), AssertionMaxAge.Seconds()
	iat, _, ok := jws.NumericDateMember(c, "iat")
	if !ok || iat <= 0 {
		return brandAssertion{}, refuse(reasonNotYetValid, "the assertion's iat is missing or not a positive number")
	}
	if iat > t+skew {
		return brandAssertion{}, refuse(reasonNotYetValid, "the assertion's iat is in the future")
	}
	switch nbf, present, ok := jws.NumericDateMember(c, "nbf"); {
	case present && !ok:
		return brandAssertion{}, refuse(reasonClaims, "the assertion's nbf is not a number")
	case present && nbf > t+skew:
		return brandAssertion{}, refuse(reasonNotYetValid, "the assertion's nbf is in the future")
	}
	exp, _, ok := jws.NumericDateMember(c, "exp")
	if !ok || exp <= 0 {
		return brandAssertion{}, refuse(reasonExpired, "the assertion's exp is missing or not a positive number")
	}
	if exp < t-skew {
		return brandAssertion{}, refuse(reasonExpired, "the assertion has expired")
	}
	if life := exp - iat; life <= 0 || life > maxAge {
		return brandAssertion{}, refuse(reasonLifetime, "the assertion's lifetime (exp - iat) must be in (0, 300] seconds")
	}
	if t-iat > maxAge {
		return brandAssertion{}, refuse(reasonTooOld, "the assertion is more than 300 seconds old")
	}
	jti, _, ok := jws.StringMember(c, "jti")
	if !ok || jti == "" || len(jti) > maxJTI || hasControl(jti) {
		return brandAssertion{}, refuse(reasonClaims, "the assertion's jti must be 1 to 256 bytes without control characters")
	}
	email, present, ok := jws.StringMember(c, "email")
	if present && (!ok || len(email) > maxEmail || hasControl(email)) {
		return brandAssertion{}, refuse(reasonClaims, "the assertion's email must be a string of at most 320 bytes")
	}
	use := db.BrandAssertionUse{BrandID: brandID, JTI: jti, ExpireTime: numericTime(exp).Add(AssertionSkew)}
	if p.connected {
		if _, present := c["user_code"]; present {
			return brandAssertion{}, refuse(reasonUserCodeUnexpected, "the assertion names a user_code: it was made for the consent page, not the connected page")
		}
		return brandAssertion{subject: sub, jti: jti, kid: a.kid, email: email, use: use}, nil
	}
	code, _, ok := jws.StringMember(c, "user_code")
	if !ok || code == "" {
		return brandAssertion{}, refuse(reasonUserCodeMissing, "the assertion has no user_code")
	}
	got, okGot := NormalizeUserCode(code)
	want, okWant := got, okGot
	if p.userCode != "" { // else the claim names the authorization (BeginConsent)
		want, okWant = NormalizeUserCode(p.userCode)
	}
	if !okWant || !okGot || got != want {
		return brandAssertion{}, refuse(reasonUserCodeMismatch, "the assertion's user_code is not the user code of this request")
	}
	return brandAssertion{
		subject: sub, jti: jti, kid: a.kid, email: email, userCode: got,
		// The record must outlive every instant the assertion passes the exp
		// check; the store rounds it up to whole seconds.
		use: use,
	}, nil
}

// validBrandUser reports whether u is a usable Brand user id: 1 to 256
// bytes of UTF-8 without control characters (the rule of checkBrandUser).
func validBrandUser(u string) bool {
	return u != "" && len(u) <= MaxBrandUser && utf8.ValidString(u) && !hasControl(u)
}

// hasControl reports whether s holds an ASCII control character or DEL.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f })
}

// numericTime converts a NumericDate to a time.Time in UTC.
func numericTime(f float64) time.Time { return jws.Time(f).UTC() }

// Package brandassert verifies Brand login assertions
// (BRAND_LOGIN_MODE_SIGNED_ASSERTION, PACT §5 "Brand login → consent"): a
// compact JWS a Brand signs with a key it publishes at its
// assertion_jwks_uri, naming the User (sub) and, for consent, the user code
// the User approves. The checks run in the order BrandAssertionRefusal
// documents; each refusal carries its reason, its RPC code and a fixed
// client-safe message that never repeats the assertion.
//
// What an assertion is for (the consent or the connected page) and the
// delegation rules it is judged by (the user-code normalization, the Brand
// user id rule) are the caller's: see Purpose and Verifier.
package brandassert

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/jose"
	"pactd.dev/pactd/internal/jws"
	"pactd.dev/pactd/internal/rpcerr"
)

// Bounds and clock rules.
const (
	// MaxBytes bounds a Brand login assertion; a longer one is refused
	// before anything in it is decoded.
	MaxBytes = 8 << 10
	// Skew is the clock skew tolerated on iat, nbf and exp.
	Skew = 30 * time.Second
	// MaxAge is the oldest assertion accepted (now - iat) and its longest
	// lifetime (exp - iat). The Brand issues 2 minutes.
	MaxAge = 300 * time.Second
	// maxJTI bounds the jti, which is stored.
	maxJTI = 256
	// maxEmail bounds the optional email claim (RFC 5321 path limit).
	maxEmail = 320
)

// Refusal is a refused assertion: why, the RPC code, and a fixed
// client-safe message that never repeats the assertion.
type Refusal struct {
	// Reason is the first rule the assertion broke.
	Reason pactv1.BrandAssertionRefusal
	// Code is the RPC code of the refusal.
	Code connect.Code
	// Msg is the client-safe message.
	Msg string
}

// Error returns the client-safe message.
func (r *Refusal) Error() string { return r.Msg }

// Refuse builds a refusal with the code its reason implies: InvalidArgument
// when the input cannot be a valid assertion, else FailedPrecondition.
func Refuse(reason pactv1.BrandAssertionRefusal, msg string) *Refusal {
	code := connect.CodeFailedPrecondition
	switch reason {
	case pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_MALFORMED,
		pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_ALGORITHM,
		pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_FORBIDDEN_HEADER:
		code = connect.CodeInvalidArgument
	}
	return &Refusal{Reason: reason, Code: code, Msg: msg}
}

// RPCError is the refusal as an RPC error: the code, an ErrorInfo whose
// reason is the BrandAssertionRefusal name (domain pactd, the Brand in the
// metadata), and for InvalidArgument a BadRequest naming brand_assertion.
func (r *Refusal) RPCError(brandID string) error {
	err := connect.NewError(r.Code, errors.New(r.Msg))
	info := &errdetails.ErrorInfo{Reason: r.Reason.String(), Domain: rpcerr.Domain, Metadata: map[string]string{"brand_id": brandID}}
	if d, derr := connect.NewErrorDetail(info); derr == nil {
		err.AddDetail(d)
	}
	if r.Code == connect.CodeInvalidArgument {
		br := &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "brand_assertion", Description: r.Msg}}}
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
	reasonKeysUnavailable  = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_KEYS_UNAVAILABLE
	// reasonUserCodeUnexpected: a consent assertion at the connected page.
	reasonUserCodeUnexpected = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_USER_CODE_UNEXPECTED
)

// KeySource yields the public keys a Brand publishes for its login
// assertions. *jose.JWKSClient satisfies it; its errors wrap
// jose.ErrInvalidURI (the URI is refused by policy) or jose.ErrUnavailable
// and jose.ErrBadDocument (the keys cannot be had now).
type KeySource interface {
	// Keys returns the key set published at uri (cached or fetched).
	Keys(ctx context.Context, uri string) (*jose.KeySet, error)
	// Refresh refetches the set for an unknown kid, subject to the source's
	// per-URI cooldown (inside it, the cached set is returned).
	Refresh(ctx context.Context, uri string) (*jose.KeySet, error)
}

// KeysFault is a failure to obtain a Brand's assertion keys: an
// infrastructure fault, for the caller to log once.
type KeysFault struct {
	// Err is the key source's error.
	Err error
}

// Error describes the failure for the log (jose errors carry the redacted
// URI, never a token).
func (f *KeysFault) Error() string { return "Brand assertion keys: " + f.Err.Error() }

// Unwrap returns the key source's error.
func (f *KeysFault) Unwrap() error { return f.Err }

// Refusal is the client's error for a keys fault: FailedPrecondition when
// the Brand's JWKS URI is refused by policy (a configuration fault that a
// retry will not fix), else Unavailable.
func (f *KeysFault) Refusal() *Refusal {
	if errors.Is(f.Err, jose.ErrInvalidURI) {
		return Refuse(reasonKeysUnavailable, "the Brand's assertion_jwks_uri is refused by pactd's fetch policy")
	}
	r := Refuse(reasonKeysUnavailable, "the Brand's assertion keys cannot be fetched now; retry")
	r.Code = connect.CodeUnavailable
	return r
}

// Purpose is what an assertion is for: consent (Aud the consent URL, a
// user_code claim) or the connected page (Aud the connected URL, no
// user_code claim).
type Purpose struct {
	// Aud is the one audience the assertion must name.
	Aud string
	// UserCode is the request's user code for consent ("" when the claim
	// names the authorization).
	UserCode string
	// Connected is set for the connected page.
	Connected bool
}

// Brand is what the verifier needs of the Brand the assertion is for.
type Brand struct {
	// ID is the Brand's id.
	ID string
	// Issuer is the Brand's assertion_issuer (the iss every assertion names).
	Issuer string
	// JWKSURI is the Brand's assertion_jwks_uri.
	JWKSURI string
}

// Verifier verifies Brand login assertions. The rules it is handed are the
// delegation service's, so that each has one home.
type Verifier struct {
	// Keys yields the Brands' published keys; nil is a keys fault.
	Keys KeySource
	// ValidSubject reports whether sub is a usable Brand user id.
	ValidSubject func(sub string) bool
	// NormalizeUserCode turns a user code into its canonical form; ok is
	// false when it cannot be one.
	NormalizeUserCode func(code string) (canonical string, ok bool)
}

// Assertion is a verified Brand login assertion.
type Assertion struct {
	// Subject is sub, the User's id at the Brand.
	Subject string
	// JTI is the assertion's id, to be recorded once per Brand.
	JTI string
	// KID is the key that verified it.
	KID string
	// Email is the optional email claim ("" when absent).
	Email string
	// UserCode is the user_code claim, normalized ("" for the connected
	// page).
	UserCode string
	// UseExpiry is how long the single-use record of JTI must live: past
	// every instant the assertion passes the exp check (exp + Skew).
	UseExpiry time.Time
}

// Verify verifies the Brand login assertion tok of Brand b for purpose p
// at now, in the order BrandAssertionRefusal documents. A refusal is a
// *Refusal; a *KeysFault is a failure to obtain the Brand's keys; any other
// error is the caller's context ending. The assertion itself never appears
// in an error.
func (v Verifier) Verify(ctx context.Context, b Brand, tok string, p Purpose, now time.Time) (Assertion, error) {
	if b.Issuer == "" || b.JWKSURI == "" {
		return Assertion{}, Refuse(reasonKeysUnavailable, "the Brand's signed login is not configured (assertion_issuer, assertion_jwks_uri)")
	}
	a, r := parse(tok)
	if r != nil {
		return Assertion{}, r
	}
	if a.kid == "" {
		return Assertion{}, Refuse(reasonUnknownKey, "the assertion names no kid")
	}
	key, err := v.key(ctx, b.JWKSURI, a.kid)
	if err != nil {
		return Assertion{}, err
	}
	if key.Algorithm() != a.alg {
		return Assertion{}, Refuse(reasonUnknownKey, "the Brand's key with this kid does not fit the assertion's alg")
	}
	if !verifySignature(key, a.alg, a.signingInput, a.sig) {
		return Assertion{}, Refuse(reasonSignature, "the assertion's signature does not verify with the Brand's key")
	}
	return v.checkClaims(a, b.Issuer, p, now)
}

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

// policy is the envelope of a Brand login assertion: at most MaxBytes,
// three segments of strict base64url (all decoded first), alg ES256 or
// RS256, none of the forbidden header members, kid a non-empty string if
// present. typ and any other header member are ignored.
var policy = jws.Policy{
	MaxBytes:  MaxBytes,
	Algs:      []string{jose.AlgES256, jose.AlgRS256},
	Forbidden: jws.ForbiddenHeaders(),
	KID:       jws.KIDRule{NonEmpty: true, MaxBytes: jose.MaxKIDBytes},
	Eager:     true,
}

// envelopeRefusals are the refusals of the policy's failures.
var envelopeRefusals = [...]struct {
	reason pactv1.BrandAssertionRefusal
	msg    string
}{
	jws.FailSize:      {reasonMalformed, "the assertion is larger than 8 KiB"},
	jws.FailSegments:  {reasonMalformed, "the assertion is not a compact JWS of three segments"},
	jws.FailEncoding:  {reasonMalformed, "an assertion segment is not strict base64url"},
	jws.FailHeader:    {reasonMalformed, "the assertion header is not a JSON object of unique members"},
	jws.FailAlg:       {reasonAlgorithm, "the assertion's alg must be ES256 or RS256"},
	jws.FailForbidden: {reasonForbiddenHeader, "the assertion header carries a member that is not allowed (jwk, jku, x5u, x5c, crit, b64, zip or enc)"},
	jws.FailKID:       {reasonMalformed, "the assertion's kid is not a non-empty string"},
}

// parse is the parser front end, run before any key is touched: the
// envelope policy, then the claims a JSON object of unique members.
func parse(tok string) (compactJWS, *Refusal) {
	t, fail := policy.Parse(tok)
	if fail != jws.OK {
		r := envelopeRefusals[fail]
		return compactJWS{}, Refuse(r.reason, r.msg)
	}
	claims, ok := jws.Members(t.Payload)
	if !ok {
		return compactJWS{}, Refuse(reasonMalformed, "the assertion claims are not a JSON object of unique members")
	}
	return compactJWS{alg: t.Alg, kid: t.KID, signingInput: t.Segments.SigningInput, sig: t.Sig, claims: claims}, nil
}

// key returns the Brand's key with kid, refetching the key set once
// (subject to the source's cooldown) when the kid is unknown.
func (v Verifier) key(ctx context.Context, uri, kid string) (*jose.Key, error) {
	if v.Keys == nil {
		return nil, &KeysFault{Err: errors.New("no Brand key source configured (Deps.BrandKeys)")}
	}
	ks, err := v.Keys.Keys(ctx, uri)
	if err != nil {
		return nil, keysError(ctx, err)
	}
	k, ok := ks.Lookup(kid)
	if ok {
		return k, nil
	}
	if ks, err = v.Keys.Refresh(ctx, uri); err != nil {
		return nil, keysError(ctx, err)
	}
	if k, ok = ks.Lookup(kid); !ok {
		return nil, Refuse(reasonUnknownKey, "the Brand publishes no key with the assertion's kid")
	}
	return k, nil
}

// keysError maps a key-source failure: the caller's context ending stays
// as it is; anything else is an infrastructure fault wrapped for the log.
func keysError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return ctxErr
	}
	return &KeysFault{Err: err}
}

// verifySignature checks sig over the signing input with k for alg: ES256
// as raw 64-byte R||S, RS256 as PKCS #1 v1.5. A Brand's key is a third
// party's: either ECDSA S form verifies (the low-S policy in package jws).
func verifySignature(k *jose.Key, alg, signingInput string, sig []byte) bool {
	digest := sha256.Sum256([]byte(signingInput))
	switch alg {
	case jose.AlgES256:
		return k.VerifyES256(&digest, sig, jws.ThirdParty)
	case jose.AlgRS256:
		return jws.VerifyRS256(k.RSA(), &digest, sig)
	}
	return false
}

// checkClaims judges the claims of a signature-verified assertion against
// the Brand's issuer, the purpose's aud (consent or connected URL) and user
// code, and the clock, in the documented order.
func (v Verifier) checkClaims(a compactJWS, issuer string, p Purpose, now time.Time) (Assertion, error) {
	c := a.claims
	if iss, _, ok := jws.StringMember(c, "iss"); !ok || iss != issuer {
		return Assertion{}, Refuse(reasonIssuer, "the assertion's iss is not the Brand's assertion issuer")
	}
	if aud, _, ok := jws.StringMember(c, "aud"); !ok || aud != p.Aud {
		if p.Connected {
			return Assertion{}, Refuse(reasonAudience, "the assertion's aud is not this Brand's connected URL (one string)")
		}
		return Assertion{}, Refuse(reasonAudience, "the assertion's aud is not this Brand's consent URL (one string)")
	}
	sub, _, ok := jws.StringMember(c, "sub")
	if !ok || !v.ValidSubject(sub) {
		return Assertion{}, Refuse(reasonSubject, "the assertion's sub must be 1 to 256 bytes without control characters")
	}
	t := jws.Seconds(now)
	skew, maxAge := Skew.Seconds(), MaxAge.Seconds()
	iat, _, ok := jws.NumericDateMember(c, "iat")
	if !ok || iat <= 0 {
		return Assertion{}, Refuse(reasonNotYetValid, "the assertion's iat is missing or not a positive number")
	}
	if iat > t+skew {
		return Assertion{}, Refuse(reasonNotYetValid, "the assertion's iat is in the future")
	}
	switch nbf, present, ok := jws.NumericDateMember(c, "nbf"); {
	case present && !ok:
		return Assertion{}, Refuse(reasonClaims, "the assertion's nbf is not a number")
	case present && nbf > t+skew:
		return Assertion{}, Refuse(reasonNotYetValid, "the assertion's nbf is in the future")
	}
	exp, _, ok := jws.NumericDateMember(c, "exp")
	if !ok || exp <= 0 {
		return Assertion{}, Refuse(reasonExpired, "the assertion's exp is missing or not a positive number")
	}
	if exp < t-skew {
		return Assertion{}, Refuse(reasonExpired, "the assertion has expired")
	}
	if life := exp - iat; life <= 0 || life > maxAge {
		return Assertion{}, Refuse(reasonLifetime, "the assertion's lifetime (exp - iat) must be in (0, 300] seconds")
	}
	if t-iat > maxAge {
		return Assertion{}, Refuse(reasonTooOld, "the assertion is more than 300 seconds old")
	}
	jti, _, ok := jws.StringMember(c, "jti")
	if !ok || jti == "" || len(jti) > maxJTI || HasControl(jti) {
		return Assertion{}, Refuse(reasonClaims, "the assertion's jti must be 1 to 256 bytes without control characters")
	}
	email, present, ok := jws.StringMember(c, "email")
	if present && (!ok || len(email) > maxEmail || HasControl(email)) {
		return Assertion{}, Refuse(reasonClaims, "the assertion's email must be a string of at most 320 bytes")
	}
	// The single-use record must outlive every instant the assertion passes
	// the exp check; the store rounds it up to whole seconds.
	out := Assertion{Subject: sub, JTI: jti, KID: a.kid, Email: email, UseExpiry: jws.Time(exp).UTC().Add(Skew)}
	if p.Connected {
		if _, present := c["user_code"]; present {
			return Assertion{}, Refuse(reasonUserCodeUnexpected, "the assertion names a user_code: it was made for the consent page, not the connected page")
		}
		return out, nil
	}
	code, _, ok := jws.StringMember(c, "user_code")
	if !ok || code == "" {
		return Assertion{}, Refuse(reasonUserCodeMissing, "the assertion has no user_code")
	}
	got, okGot := v.NormalizeUserCode(code)
	want, okWant := got, okGot
	if p.UserCode != "" { // else the claim names the authorization (BeginConsent)
		want, okWant = v.NormalizeUserCode(p.UserCode)
	}
	if !okWant || !okGot || got != want {
		return Assertion{}, Refuse(reasonUserCodeMismatch, "the assertion's user_code is not the user code of this request")
	}
	out.UserCode = got
	return out, nil
}

// HasControl reports whether s holds an ASCII control character or DEL:
// the rule for an assertion's string claims and for Brand user ids.
func HasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f })
}

// Package regjwt checks a self-service PA registration (the PACT reference
// Provider's POST /api/platforms, reference section 4.3): the body's name
// and JWKS URI and the registration JWT, which is ES256 only, signed by the
// PA's own key and verified against the JWKS URI from the body.
//
// [Parse] does every check that needs no network and is what the fuzz
// target drives; [Checker.Check] adds the signature against the fetched
// keys. Neither stores anything: consuming the jti is the store's job.
package regjwt

import (
	"context"
	"crypto/sha256"
	"net/url"
	"regexp"
	"strings"
	"time"

	"pactd.dev/pactd/internal/jose"
	"pactd.dev/pactd/internal/jws"
	"pactd.dev/pactd/internal/urlrule"
)

// Bounds of untrusted input.
const (
	// MaxTokenBytes bounds the registration JWT.
	MaxTokenBytes = 4096
	// MaxJTIBytes bounds the jti claim.
	MaxJTIBytes = 256
	// MaxLifetime is the longest exp - iat accepted.
	MaxLifetime = 300 * time.Second
	// Skew is the clock skew allowed on iat and exp.
	Skew = 30 * time.Second
)

// Status is the HTTP class of a refusal.
type Status int

// Statuses of a refusal.
const (
	// BadRequest: the body or a URL is wrong (HTTP 400).
	BadRequest Status = 400
	// BadToken: the registration JWT is not acceptable (HTTP 401).
	BadToken Status = 401
)

// Reasons name the rule a registration broke.
const (
	ReasonNameInvalid        = "name_invalid"
	ReasonJWKSURIInvalid     = "jwks_uri_invalid"
	ReasonEndpointInvalid    = "endpoint_invalid"
	ReasonTokenMalformed     = "token_malformed"
	ReasonTokenTooLarge      = "token_too_large"
	ReasonAlgNotES256        = "alg_not_es256"
	ReasonIssuerInvalid      = "issuer_invalid"
	ReasonSubNotIss          = "sub_not_iss"
	ReasonAudMismatch        = "aud_mismatch"
	ReasonIATMissing         = "iat_missing"
	ReasonEXPMissing         = "exp_missing"
	ReasonJTIMissing         = "jti_missing"
	ReasonLifetimeTooLong    = "lifetime_too_long"
	ReasonExpired            = "token_expired"
	ReasonIssuedInFuture     = "iat_in_future"
	ReasonJWKSCrossOrigin    = "jwks_uri_cross_origin"
	ReasonJWKSUnavailable    = "jwks_unavailable"
	ReasonKeyNotFound        = "key_not_found"
	ReasonSignatureInvalid   = "signature_invalid"
	ReasonJTIReplayed        = "jti_replayed"
	ReasonNameTaken          = "name_taken"
	ReasonIssuerTaken        = "issuer_taken"
	ReasonRegistrationClosed = "self_registration_off"
)

// Refusal is why a registration was refused.
type Refusal struct {
	Status Status
	Reason string
}

func (r *Refusal) Error() string { return "registration refused: " + r.Reason }

func refuse(s Status, reason string) *Refusal { return &Refusal{Status: s, Reason: reason} }

// Request is one registration as a frontend received it.
type Request struct {
	// Token is the bearer registration JWT.
	Token string
	// Name and JWKSURI are the body's "name" and "jwksUri".
	Name, JWKSURI string
	// Endpoint is the URL the frontend served the request at; aud must
	// equal it.
	Endpoint string
}

// Parsed is a registration whose every offline rule holds; its signature
// is not checked yet.
type Parsed struct {
	Issuer, JTI string
	KID         string
	IssuedAt    time.Time
	Expiry      time.Time
	sig         []byte
	input       string
}

// policy is the envelope of a registration JWT: at most MaxTokenBytes,
// three segments of strict base64url (all decoded first), alg ES256, no
// crit, kid a string if present.
var policy = jws.Policy{
	MaxBytes:  MaxTokenBytes,
	Algs:      []string{jws.ES256},
	Forbidden: []string{"crit"},
	Eager:     true,
}

var nameRule = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,62}$`)

// Parse checks everything but the signature, in the order: body, endpoint,
// token shape, header, claims, issuer URL, same origin.
func Parse(r Request, now time.Time, dev bool) (*Parsed, *Refusal) {
	pol := urlrule.Policy{Dev: dev}
	if !nameRule.MatchString(r.Name) {
		return nil, refuse(BadRequest, ReasonNameInvalid)
	}
	ju, err := pol.Check(r.JWKSURI, true)
	if err != nil {
		return nil, refuse(BadRequest, ReasonJWKSURIInvalid)
	}
	if _, err := pol.Check(r.Endpoint, false); err != nil {
		return nil, refuse(BadRequest, ReasonEndpointInvalid)
	}
	t, fail := policy.Parse(r.Token)
	switch fail {
	case jws.OK:
	case jws.FailSize:
		return nil, refuse(BadToken, ReasonTokenTooLarge)
	case jws.FailAlg:
		return nil, refuse(BadToken, ReasonAlgNotES256)
	default:
		return nil, refuse(BadToken, ReasonTokenMalformed)
	}
	c, pb, sig, kid := t.Segments, t.Payload, t.Sig, t.KID
	m, ok := jws.Members(pb)
	if !ok {
		return nil, refuse(BadToken, ReasonTokenMalformed)
	}
	iss, _, isStr := jws.StringMember(m, "iss")
	if !isStr || iss == "" {
		return nil, refuse(BadToken, ReasonIssuerInvalid)
	}
	if sub, _, isStr := jws.StringMember(m, "sub"); !isStr || sub != iss {
		return nil, refuse(BadToken, ReasonSubNotIss)
	}
	// aud must be the one string: an array is refused, as the reference does.
	if aud, _, isStr := jws.StringMember(m, "aud"); !isStr || aud != r.Endpoint {
		return nil, refuse(BadToken, ReasonAudMismatch)
	}
	iat, _, ok := jws.NumericDateMember(m, "iat")
	if !ok {
		return nil, refuse(BadToken, ReasonIATMissing)
	}
	exp, _, ok := jws.NumericDateMember(m, "exp")
	if !ok {
		return nil, refuse(BadToken, ReasonEXPMissing)
	}
	jti, _, isStr := jws.StringMember(m, "jti")
	if !isStr || jti == "" || len(jti) > MaxJTIBytes {
		return nil, refuse(BadToken, ReasonJTIMissing)
	}
	it, et := jws.Time(iat), jws.Time(exp)
	switch {
	case et.Sub(it) > MaxLifetime || et.Before(it):
		return nil, refuse(BadToken, ReasonLifetimeTooLong)
	case !now.Before(et.Add(Skew)):
		return nil, refuse(BadToken, ReasonExpired)
	case it.After(now.Add(Skew)):
		return nil, refuse(BadToken, ReasonIssuedInFuture)
	}
	iu, err := pol.Check(iss, false)
	if err != nil {
		return nil, refuse(BadRequest, ReasonIssuerInvalid)
	}
	if origin(iu) != origin(ju) {
		return nil, refuse(BadRequest, ReasonJWKSCrossOrigin)
	}
	return &Parsed{Issuer: iss, JTI: jti, KID: kid, IssuedAt: it, Expiry: et, sig: sig, input: c.SigningInput}, nil
}

// origin is scheme://host:port with the scheme's default port made explicit
// and the host lower-cased (RFC 6454 §4).
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// Keys fetches a JWKS under the onboarding address rules ([jose.JWKSClient]).
type Keys interface {
	Keys(ctx context.Context, uri string) (*jose.KeySet, error)
}

// Checker verifies registrations.
type Checker struct {
	// Keys fetches the body's JWKS URI.
	Keys Keys
	// Dev allows http to loopback hosts.
	Dev bool
}

// Check parses r and verifies its signature with an ES256 key from the
// body's JWKS URI: the key named by kid, or without kid any P-256 key.
func (c Checker) Check(ctx context.Context, r Request, now time.Time) (*Parsed, *Refusal) {
	p, ref := Parse(r, now, c.Dev)
	if ref != nil {
		return nil, ref
	}
	set, err := c.Keys.Keys(ctx, r.JWKSURI)
	if err != nil {
		return nil, refuse(BadToken, ReasonJWKSUnavailable)
	}
	digest := sha256.Sum256([]byte(p.input))
	found := false
	for i := range set.Len() {
		k := set.At(i)
		if k.ECDSA() == nil || (p.KID != "" && k.KID() != p.KID) {
			continue
		}
		found = true
		if k.VerifyES256(&digest, p.sig, jws.ThirdParty) {
			return p, nil
		}
	}
	if !found {
		return nil, refuse(BadToken, ReasonKeyNotFound)
	}
	return nil, refuse(BadToken, ReasonSignatureInvalid)
}

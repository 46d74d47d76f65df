package jws

import "encoding/json"

// forbiddenHeaders are the header members no pactd verifier lets through
// from a third party: the key-carrying members (jwk, jku, x5u, x5c), which
// would let the token name its own key, and crit, b64, zip and enc, which
// change how the token must be processed. x5t and x5t#S256 are harmless
// hints and are not in the list. ForbiddenHeader and ForbiddenHeaders read
// it; the PA-JWT hot path reads it through ForbiddenHeader as it walks the
// header.
var forbiddenHeaders = [...]string{"jwk", "jku", "x5u", "x5c", "crit", "b64", "zip", "enc"}

// ForbiddenHeaders returns the forbidden header members (a fresh copy):
// jwk, jku, x5u, x5c, crit, b64, zip and enc.
func ForbiddenHeaders() []string { return append([]string(nil), forbiddenHeaders[:]...) }

// ForbiddenHeader returns the forbidden header member that name is (see
// ForbiddenHeaders), compared after unescaping, or "". It allocates
// nothing.
func ForbiddenHeader(name Name) string {
	for _, f := range forbiddenHeaders {
		if name.Is(f) {
			return f
		}
	}
	return ""
}

// Policy is what one kind of token allows in its envelope: the size bound,
// the algorithms, the typ, the header members it refuses and the kid rule.
// Each verifier configures one instead of copying the checks; the
// signature, the key and the claims stay the verifier's. Parse judges a
// token against it, in one order: size, three segments, base64url (the
// header, or all three segments when Eager), the header a JSON object of
// unique members (no whitespace around it), alg, typ, forbidden members,
// only the allowed members, kid. The first failure is reported as a
// Failure, which the verifier maps to its own refusal reason and message.
type Policy struct {
	// MaxBytes bounds the whole token, checked before anything is decoded.
	MaxBytes int
	// Algs are the accepted alg values (ES256, RS256).
	Algs []string
	// Typ, when set, is the one typ the header must carry (compared
	// exactly); when empty, typ is not judged.
	Typ string
	// Forbidden are header members refused when present (ForbiddenHeaders,
	// or the part of it a verifier refuses).
	Forbidden []string
	// Only, when set, are the only header members allowed.
	Only []string
	// KID is the rule for the kid member.
	KID KIDRule
	// Eager decodes the payload and signature segments with the header,
	// before the header is judged, so that a segment that is not strict
	// base64url is refused first; otherwise they are left to the verifier
	// (to decode the payload only once the signature verified).
	Eager bool
}

// KIDRule is a Policy's rule for the kid header member. The zero rule
// accepts an absent kid and any string.
type KIDRule struct {
	// Required refuses a token without kid.
	Required bool
	// NonEmpty refuses an empty kid.
	NonEmpty bool
	// MaxBytes, when not 0, bounds the kid.
	MaxBytes int
}

// Failure is the first Policy check a token failed; OK when it passed.
type Failure uint8

// The failures, in the order Parse checks.
const (
	// OK: the token passed the policy.
	OK Failure = iota
	// FailSize: longer than MaxBytes.
	FailSize
	// FailSegments: not three segments, or an empty header or payload.
	FailSegments
	// FailEncoding: a decoded segment is not strict base64url.
	FailEncoding
	// FailHeader: the header is not a JSON object of unique members.
	FailHeader
	// FailAlg: alg missing, not a string or not one of Algs.
	FailAlg
	// FailTyp: typ missing, not a string or not Typ.
	FailTyp
	// FailForbidden: a Forbidden member, or one not in Only.
	FailForbidden
	// FailKID: the kid breaks the KID rule.
	FailKID
)

// Token is a token that passed a Policy: nothing in it is verified.
type Token struct {
	// Segments are the encoded segments and the signing input.
	Segments Compact
	// Params are the header's members (its parameters, RFC 7515 §4).
	Params map[string]json.RawMessage
	// Alg is the header's alg, one of the policy's.
	Alg string
	// KID is the header's kid ("" when absent).
	KID string
	// Payload and Sig are the decoded payload and signature (Eager only).
	Payload, Sig []byte
}

// Parse judges tok against the policy (see Policy for the order).
func (p *Policy) Parse(tok string) (Token, Failure) {
	var t Token
	var err error
	if t.Segments, err = Split(tok, p.MaxBytes); err == ErrOversized {
		return Token{}, FailSize
	} else if err != nil {
		return Token{}, FailSegments
	}
	hdrJSON, ok := Decode(t.Segments.Header)
	if p.Eager {
		var ok2, ok3 bool
		t.Payload, ok2 = Decode(t.Segments.Payload)
		t.Sig, ok3 = Decode(t.Segments.Signature)
		ok = ok && ok2 && ok3
	}
	if !ok {
		return Token{}, FailEncoding
	}
	if t.Params, ok = HeaderMembers(hdrJSON); !ok {
		return Token{}, FailHeader
	}
	alg, _, isString := StringMember(t.Params, "alg")
	if !isString || !contains(p.Algs, alg) {
		return Token{}, FailAlg
	}
	t.Alg = alg
	if p.Typ != "" {
		if typ, _, isString := StringMember(t.Params, "typ"); !isString || typ != p.Typ {
			return Token{}, FailTyp
		}
	}
	for _, name := range p.Forbidden {
		if _, ok := t.Params[name]; ok {
			return Token{}, FailForbidden
		}
	}
	if p.Only != nil {
		for name := range t.Params {
			if !contains(p.Only, name) {
				return Token{}, FailForbidden
			}
		}
	}
	kid, present, isString := StringMember(t.Params, "kid")
	switch {
	case !present:
		if p.KID.Required {
			return Token{}, FailKID
		}
	case !isString, p.KID.NonEmpty && kid == "", p.KID.MaxBytes != 0 && len(kid) > p.KID.MaxBytes:
		return Token{}, FailKID
	}
	t.KID = kid
	return t, OK
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

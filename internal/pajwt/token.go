package pajwt

import (
	"strings"
)

// alg is an accepted signature algorithm.
type alg uint8

const (
	algNone alg = iota
	algES256
	algRS256
)

// String returns the JWS "alg" name.
func (a alg) String() string {
	switch a {
	case algES256:
		return "ES256"
	case algRS256:
		return "RS256"
	}
	return "none"
}

// header is the part of a JOSE header the verifier acts on.
type header struct {
	alg alg
	kid string
}

// Bits for duplicate detection of registered header members.
const (
	hAlg = 1 << iota
	hKid
	hTyp
)

// parseHeader checks a decoded JOSE header: a JSON object (ReasonMalformed),
// an accepted "alg" (ReasonAlgorithm), no forbidden members and an acceptable
// "typ" (ReasonForbiddenHeader), a string "kid" (ReasonMalformed), in that
// order.
func parseHeader(b []byte) (header, *Error) {
	var (
		h         header
		seen      int
		algV      jsonValue
		typV      jsonValue
		kidV      jsonValue
		forbidden string
	)
	it := newObjectIter(b)
	for {
		name, esc, v, ok := it.next()
		if !ok {
			break
		}
		var bit int
		switch {
		case nameIs(name, esc, "alg"):
			bit, algV = hAlg, v
		case nameIs(name, esc, "kid"):
			bit, kidV = hKid, v
		case nameIs(name, esc, "typ"):
			bit, typV = hTyp, v
		default:
			if forbidden == "" {
				forbidden = forbiddenHeader(name, esc)
			}
			continue
		}
		if seen&bit != 0 {
			return h, refuse(ReasonMalformed, "duplicate header member")
		}
		seen |= bit
	}
	if !it.valid() {
		return h, refuse(ReasonMalformed, "header is not a JSON object")
	}
	if algV.kind != kindString {
		return h, refuse(ReasonAlgorithm, "alg missing or not a string")
	}
	switch a, _ := stringValue(algV); a {
	case "ES256":
		h.alg = algES256
	case "RS256":
		h.alg = algRS256
	default:
		return h, refuse(ReasonAlgorithm, "alg not allowed")
	}
	if forbidden != "" {
		return h, refuse(ReasonForbiddenHeader, "header member "+forbidden+" not allowed")
	}
	switch typV.kind {
	case kindAbsent:
	case kindString:
		t, ok := stringValue(typV)
		if !ok || !(strings.EqualFold(t, "JWT") || strings.EqualFold(t, "application/jwt")) {
			return h, refuse(ReasonForbiddenHeader, "typ not JWT")
		}
	default:
		return h, refuse(ReasonMalformed, "typ not a string")
	}
	switch kidV.kind {
	case kindAbsent:
	case kindString:
		kid, ok := stringValue(kidV)
		if !ok || kid == "" {
			return h, refuse(ReasonMalformed, "kid empty or badly escaped")
		}
		h.kid = kid
	default:
		return h, refuse(ReasonMalformed, "kid not a string")
	}
	return h, nil
}

// forbiddenHeader returns the name of a header member that must not appear
// in a PA JWT, or "". Key-carrying members (jwk, jku, x5u, x5c) are never
// trusted; crit, b64, zip and enc change how the token must be processed.
// x5t and x5t#S256 are harmless hints and are ignored.
func forbiddenHeader(name []byte, esc bool) string {
	for _, f := range [...]string{"jwk", "jku", "x5u", "x5c", "crit", "b64", "zip", "enc"} {
		if nameIs(name, esc, f) {
			return f
		}
	}
	return ""
}

// claimSet holds the registered claims of a PA JWT, typed but not yet
// judged. Strings are decoded; numbers are NumericDates in seconds.
type claimSet struct {
	iss, sub, aud, jti             string
	iat, exp, nbf                  float64
	issK, subK, audK, jtiK         jsonKind
	iatK, expK, nbfK               jsonKind
	issBad, subBad, audBad, jtiBad bool // string with invalid escapes
	iatBad, expBad, nbfBad         bool // number out of range
}

// Bits for duplicate detection of registered claims.
const (
	cIss = 1 << iota
	cSub
	cAud
	cIat
	cExp
	cNbf
	cJti
)

// parseClaims decodes the claims object. Only structure is judged here
// (ReasonMalformed for a non-object or a duplicated registered claim); the
// values are judged by the checks after the signature.
func parseClaims(b []byte) (claimSet, *Error) {
	var c claimSet
	seen := 0
	it := newObjectIter(b)
	for {
		name, esc, v, ok := it.next()
		if !ok {
			break
		}
		var bit int
		var sp *string
		var np *float64
		var kp *jsonKind
		var bad *bool
		switch {
		case nameIs(name, esc, "iss"):
			bit, sp, kp, bad = cIss, &c.iss, &c.issK, &c.issBad
		case nameIs(name, esc, "sub"):
			bit, sp, kp, bad = cSub, &c.sub, &c.subK, &c.subBad
		case nameIs(name, esc, "aud"):
			bit, sp, kp, bad = cAud, &c.aud, &c.audK, &c.audBad
		case nameIs(name, esc, "jti"):
			bit, sp, kp, bad = cJti, &c.jti, &c.jtiK, &c.jtiBad
		case nameIs(name, esc, "iat"):
			bit, np, kp, bad = cIat, &c.iat, &c.iatK, &c.iatBad
		case nameIs(name, esc, "exp"):
			bit, np, kp, bad = cExp, &c.exp, &c.expK, &c.expBad
		case nameIs(name, esc, "nbf"):
			bit, np, kp, bad = cNbf, &c.nbf, &c.nbfK, &c.nbfBad
		default:
			continue
		}
		if seen&bit != 0 {
			return c, refuse(ReasonMalformed, "duplicate registered claim")
		}
		seen |= bit
		*kp = v.kind
		switch {
		case sp != nil && v.kind == kindString:
			s, ok := stringValue(v)
			*sp, *bad = s, !ok
		case np != nil && v.kind == kindNumber:
			f, ok := numberValue(v)
			*np, *bad = f, !ok
		}
	}
	if !it.valid() {
		return c, refuse(ReasonMalformed, "claims are not a JSON object")
	}
	return c, nil
}

// issuer returns the "iss" claim if it is a usable (non-empty) string.
func (c *claimSet) issuer() (string, bool) {
	return c.iss, c.issK == kindString && !c.issBad && c.iss != ""
}

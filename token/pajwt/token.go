package pajwt

import (
	"strings"

	"pactd.dev/pactd/token/jws"
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

// parseHeader checks a decoded JOSE header: a JSON object (ReasonMalformed),
// an accepted "alg" (ReasonAlgorithm), no forbidden members and an acceptable
// "typ" (ReasonForbiddenHeader), a string "kid", then string "cty", "x5t"
// and "x5t#S256" when present (ReasonMalformed), in that order.
func parseHeader(b []byte) (header, *Error) {
	var (
		h         header
		algV      jws.Value
		typV      jws.Value
		kidV      jws.Value
		forbidden string
		mistyped  bool // cty, x5t or x5t#S256 not a string
	)
	it := jws.NewHeader(b)
	for {
		name, v, ok := it.Next()
		if !ok {
			break
		}
		switch {
		case name.Is("alg"):
			algV = v
		case name.Is("kid"):
			kidV = v
		case name.Is("typ"):
			typV = v
		default:
			if forbidden == "" {
				forbidden = jws.ForbiddenHeader(name)
			}
			if v.Kind != jws.KindString && jws.StringHeader(name) {
				mistyped = true
			}
		}
	}
	if !it.Valid() {
		if it.Duplicate() {
			return h, refuse(ReasonMalformed, "duplicate header member, or a member named twice inside one")
		}
		return h, refuse(ReasonMalformed, "header is not a JSON object")
	}
	if algV.Kind != jws.KindString {
		return h, refuse(ReasonAlgorithm, "alg missing or not a string")
	}
	switch a, _ := algV.String(); a {
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
	switch typV.Kind {
	case jws.KindAbsent:
	case jws.KindString:
		t, ok := typV.String()
		if !ok || !(strings.EqualFold(t, "JWT") || strings.EqualFold(t, "application/jwt")) {
			return h, refuse(ReasonForbiddenHeader, "typ not JWT")
		}
	default:
		return h, refuse(ReasonMalformed, "typ not a string")
	}
	switch kidV.Kind {
	case jws.KindAbsent:
	case jws.KindString:
		kid, ok := kidV.String()
		if !ok || kid == "" {
			return h, refuse(ReasonMalformed, "kid empty or badly escaped")
		}
		h.kid = kid
	default:
		return h, refuse(ReasonMalformed, "kid not a string")
	}
	if mistyped {
		return h, refuse(ReasonMalformed, "cty, x5t or x5t#S256 not a string")
	}
	return h, nil
}

// claimSet holds the registered claims of a PA JWT, typed but not yet
// judged. Strings are decoded; numbers are NumericDates in seconds.
type claimSet struct {
	iss, sub, aud, jti string
	claimFacts
}

// claimFacts are the claims' values other than strings. They hold no
// pointer, so the repeat-token cache keeps them where the collector never
// looks (cache.go).
type claimFacts struct {
	iat, exp, nbf                  float64
	issK, subK, audK, jtiK         jws.Kind
	iatK, expK, nbfK               jws.Kind
	issBad, subBad, audBad, jtiBad bool // string with invalid escapes
	iatBad, expBad, nbfBad         bool // number out of range
}

// parseClaims decodes the claims object. Only structure is judged here
// (ReasonMalformed for a non-object or a duplicated claim); the
// values are judged by the checks after the signature.
func parseClaims(b []byte) (claimSet, *Error) {
	var c claimSet
	it := jws.NewObject(b)
	for {
		name, v, ok := it.Next()
		if !ok {
			break
		}
		var sp *string
		var np *float64
		var kp *jws.Kind
		var bad *bool
		switch {
		case name.Is("iss"):
			sp, kp, bad = &c.iss, &c.issK, &c.issBad
		case name.Is("sub"):
			sp, kp, bad = &c.sub, &c.subK, &c.subBad
		case name.Is("aud"):
			sp, kp, bad = &c.aud, &c.audK, &c.audBad
		case name.Is("jti"):
			sp, kp, bad = &c.jti, &c.jtiK, &c.jtiBad
		case name.Is("iat"):
			np, kp, bad = &c.iat, &c.iatK, &c.iatBad
		case name.Is("exp"):
			np, kp, bad = &c.exp, &c.expK, &c.expBad
		case name.Is("nbf"):
			np, kp, bad = &c.nbf, &c.nbfK, &c.nbfBad
		default:
			continue
		}
		*kp = v.Kind
		switch {
		case sp != nil && v.Kind == jws.KindString:
			s, ok := v.String()
			*sp, *bad = s, !ok
		case np != nil && v.Kind == jws.KindNumber:
			f, ok := v.NumericDate()
			*np, *bad = f, !ok
		}
	}
	if !it.Valid() {
		if it.Duplicate() {
			return c, refuse(ReasonMalformed, "duplicate claim, or a member named twice inside one")
		}
		return c, refuse(ReasonMalformed, "claims are not a JSON object")
	}
	return c, nil
}

// issuer returns the "iss" claim if it is a usable (non-empty) string.
func (c *claimSet) issuer() (string, bool) {
	return c.iss, c.issK == jws.KindString && !c.issBad && c.iss != ""
}

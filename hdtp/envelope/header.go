package envelope

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"pactd.dev/pactd/hdtp/wire"
	"pactd.dev/pactd/token/jws"
)

// MaxLifetime bounds exp − ts: 30 days (§13.1).
const MaxLifetime = 2592000

// MaxMsgIDBytes bounds the header's msg_id. The text sets no bound; the
// replay record is keyed by it, so pactd keeps it small.
const MaxMsgIDBytes = 256

// Header is the protected header: exactly seven members.
type Header struct {
	// Cty is the generation's call type on a request, result type on a
	// result.
	Cty string
	// Exp is when the envelope stops being valid (Unix seconds).
	Exp int64
	// Kid is the recipient leaf's key id.
	Kid wire.KeyID
	// MsgID names the envelope (a namespace apart from the inner call's
	// msg_id).
	MsgID string
	// Suite is one of the generation's two suites, the one the recipient
	// key takes.
	Suite string
	// Ts is when the envelope was made (Unix seconds).
	Ts int64
	// V is the generation's envelope version: 2 (PACT) or 1 (HDTP).
	V int64
}

// Marshal writes the header in its JCS (RFC 8785) form, the members in
// their sorted order. It is written by hand: encoding/json escapes <, >, &
// and U+2028/U+2029, which JCS does not.
func (h Header) Marshal() []byte {
	var b strings.Builder
	b.WriteString(`{"cty":`)
	jcsString(&b, h.Cty)
	b.WriteString(`,"exp":` + strconv.FormatInt(h.Exp, 10))
	b.WriteString(`,"kid":`)
	jcsString(&b, h.Kid.Fingerprint())
	b.WriteString(`,"msg_id":`)
	jcsString(&b, h.MsgID)
	b.WriteString(`,"suite":`)
	jcsString(&b, h.Suite)
	b.WriteString(`,"ts":` + strconv.FormatInt(h.Ts, 10))
	b.WriteString(`,"v":` + strconv.FormatInt(h.V, 10) + `}`)
	return []byte(b.String())
}

// jcsString writes a JSON string as RFC 8785 does: only '"', '\' and the
// controls are escaped (\b \f \n \r \t, else \u00xx in lowercase hex).
func jcsString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// parseHeader reads a received header. It need not be JCS (the AAD is the
// bytes received), but it is one JSON object with exactly the seven
// members, no name twice, strings where strings go and integers written
// as plain integers where integers go ("1.0", "1e3", a string "ts" are
// refused); then v, suite, msg_id, exp − ts and cty are checked.
func parseHeader(b []byte, s *wire.Strings, cty string) (Header, Reason) {
	var h Header
	if !utf8.Valid(b) {
		return h, ReasonHeaderJSON
	}
	o := jws.NewObject(b)
	seen := 0
	var kid string
	for {
		name, v, ok := o.Next()
		if !ok {
			break
		}
		seen++
		var r Reason
		switch {
		case name.Is("cty"):
			h.Cty, r = stringMember(v)
		case name.Is("exp"):
			h.Exp, r = intMember(v)
		case name.Is("kid"):
			kid, r = stringMember(v)
		case name.Is("msg_id"):
			h.MsgID, r = stringMember(v)
		case name.Is("suite"):
			h.Suite, r = stringMember(v)
		case name.Is("ts"):
			h.Ts, r = intMember(v)
		case name.Is("v"):
			h.V, r = intMember(v)
		default:
			return h, ReasonHeaderMembers
		}
		if r != "" {
			return h, r
		}
	}
	switch {
	case o.Duplicate():
		return h, ReasonHeaderMembers
	case !o.Valid():
		return h, ReasonHeaderJSON
	case seen != 7:
		return h, ReasonHeaderMembers
	case h.V != s.EnvelopeVersion:
		return h, ReasonVersion
	case h.Suite != s.SuiteP256 && h.Suite != s.SuiteX25519:
		return h, ReasonSuite
	case h.MsgID == "" || len(h.MsgID) > MaxMsgIDBytes:
		return h, ReasonMsgID
	case h.Exp <= h.Ts || h.Exp-h.Ts > MaxLifetime:
		return h, ReasonLifetime
	case h.Cty != cty:
		return h, ReasonCty
	}
	k, ok := wire.ParseFingerprint(kid)
	if !ok {
		return h, ReasonKid
	}
	h.Kid = k
	return h, ""
}

func stringMember(v jws.Value) (string, Reason) {
	s, ok := v.String()
	if !ok {
		return "", ReasonHeaderType
	}
	return s, ""
}

// intMember reads a JSON number written as a plain integer of at most 15
// digits: no fraction, no exponent, no leading zero, no "-0".
func intMember(v jws.Value) (int64, Reason) {
	if v.Kind != jws.KindNumber {
		return 0, ReasonHeaderType
	}
	d := v.Raw
	neg := len(d) > 0 && d[0] == '-'
	if neg {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || d[0] == '0' && (len(d) > 1 || neg) {
		return 0, ReasonHeaderType
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, ReasonHeaderType
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, ""
}

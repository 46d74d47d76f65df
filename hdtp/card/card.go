// Package card reads and writes contact cards (HDTP/PACT §3): a vCard 4.0
// that carries an identity's leaf certificate and its seal policy, and the
// card_sig its host's leaf key makes over the card's exact bytes.
//
// A card is untrusted input at intake. Reading it checks everything a card
// can be refused for (all bad_request): its size, its shape, the
// generation's X-*-VERSION, the leaf in X-*-CERT against the certificate
// profile (an expired leaf is accepted: a card exists to convey a root and
// an endpoint) and the seal value. The address guard and the rule about a
// guest naming the receiver's own endpoint are the caller's, which knows
// the resolved addresses and the receiver.
package card

import (
	"crypto"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
)

// MaxBytes bounds a card. A card with a leaf of the largest size the
// profile allows (4 KiB) is under 6 KiB; cards are usually under 1 KB.
const MaxBytes = 16 << 10

// Seal is a seal policy, the X-*-SEAL value (§13.4).
type Seal string

// The seal policies.
const (
	// SealNone: no sealed calls (the default when the property is absent).
	SealNone Seal = "none"
	// SealOptional: plain and sealed calls both work.
	SealOptional Seal = "optional"
	// SealRequired: every substantive call must be sealed.
	SealRequired Seal = "required"
)

// Valid reports whether s is one of the three.
func (s Seal) Valid() bool { return s == SealNone || s == SealOptional || s == SealRequired }

// Reason names why a card was refused. Every card refusal travels as
// bad_request.
type Reason string

// The reasons.
const (
	ReasonTooLarge        Reason = "too_large"        // over MaxBytes
	ReasonEncoding        Reason = "encoding"         // not UTF-8, or a NUL
	ReasonStructure       Reason = "structure"        // not one BEGIN:VCARD ... END:VCARD with VERSION:4.0
	ReasonVersionMissing  Reason = "version_missing"  // no X-*-VERSION of this generation
	ReasonOtherGeneration Reason = "other_generation" // the other generation's card (its X-*-VERSION, none of ours)
	ReasonVersion         Reason = "version"          // X-*-VERSION is not this generation's major
	ReasonCertMissing     Reason = "cert_missing"     // no X-*-CERT
	ReasonCertEncoding    Reason = "cert_encoding"    // X-*-CERT is not canonical base64url (after SEP-0001's whitespace removal in HDTP)
	ReasonCertificate     Reason = "certificate"      // the leaf is not of the profile, or is valid for over 398 days (CertReason says which)
	ReasonSeal            Reason = "seal"             // an X-*-SEAL value outside none, optional, required
)

// Error is a card refused at intake.
type Error struct {
	Reason Reason
	// CertReason is the certificate's reason when Reason is
	// ReasonCertificate.
	CertReason cert.Reason
	Detail     string
}

func (e *Error) Error() string {
	s := "card: " + string(e.Reason)
	if e.CertReason != "" {
		s += ": " + string(e.CertReason)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// ReasonOf returns the reason of an *Error, or "".
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// Code is the protocol's code for a card refused at intake.
const Code = wire.CodeBadRequest

func refuse(r Reason, detail string) *Error { return &Error{Reason: r, Detail: detail} }

// Card is a card that passed intake.
type Card struct {
	// Generation is the generation the card was read as.
	Generation wire.Generation
	// Name is the FN value, unescaped: an untrusted claim, never an
	// identifier.
	Name string
	// Leaf is the certificate X-*-CERT carries, of the leaf profile; its
	// authorityKeyIdentifier names the root and its URI the endpoint.
	Leaf *cert.Certificate
	// Seal is the seal policy (SealNone when the card has none).
	Seal Seal
}

// property is one content line.
type property struct {
	name  string // upper case, group removed
	value string
}

// Read reads a card as the generation reads cards, and checks it for
// intake. PACT reads by RFC 6350: line ends (CRLF, or LF as PACT's own
// examples write) followed by one space or tab are removed, and content
// lines are taken as properties. HDTP reads by SEP-0001: the same
// unfolding, then X-HDTP-CERT's value absorbs every following line that
// starts no property, blank lines included, and loses every space, tab, CR
// and LF; any other stray character stays and fails the decode. In both,
// property names are case-insensitive and the first occurrence of a name
// wins (a later X-*-SEAL:none cannot override).
func Read(gen wire.Generation, text string) (*Card, error) {
	c, e := read(gen, text)
	if e != nil {
		return nil, e
	}
	return c, nil
}

func read(gen wire.Generation, text string) (*Card, *Error) {
	s := gen.Strings()
	if s == nil {
		return nil, refuse(ReasonStructure, "no generation")
	}
	if len(text) > MaxBytes {
		return nil, refuse(ReasonTooLarge, "")
	}
	if !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
		return nil, refuse(ReasonEncoding, "")
	}
	props, e := properties(text, s)
	if e != nil {
		return nil, e
	}
	first := map[string]string{}
	for _, p := range props {
		if _, seen := first[p.name]; !seen {
			first[p.name] = p.value
		}
	}
	if v, ok := first[s.VersionProp]; !ok {
		if _, other := first[gen.Other().Strings().VersionProp]; other {
			return nil, refuse(ReasonOtherGeneration, "")
		}
		return nil, refuse(ReasonVersionMissing, "")
	} else if v != s.CardVersion {
		return nil, refuse(ReasonVersion, "")
	}
	certText, ok := first[s.CertProp]
	if !ok {
		return nil, refuse(ReasonCertMissing, "")
	}
	der, ok := wire.B64Decode(certText)
	if !ok {
		return nil, refuse(ReasonCertEncoding, "")
	}
	leaf, err := cert.Parse(der, cert.KindLeaf, gen)
	if err != nil {
		return nil, &Error{Reason: ReasonCertificate, CertReason: cert.ReasonOf(err)}
	}
	if leaf.NotAfter.Sub(leaf.NotBefore) > cert.MaxLeafSpan {
		return nil, &Error{Reason: ReasonCertificate, CertReason: cert.ReasonLeafSpan}
	}
	c := &Card{Generation: gen, Leaf: leaf, Seal: SealNone, Name: unescapeText(first["FN"])}
	if v, ok := first[s.SealProp]; ok {
		if c.Seal = Seal(v); !c.Seal.Valid() {
			return nil, refuse(ReasonSeal, "")
		}
	}
	return c, nil
}

// properties unfolds text, splits it into content lines and returns the
// card's properties between BEGIN:VCARD and END:VCARD.
func properties(text string, s *wire.Strings) ([]property, *Error) {
	// Unfold: a line end followed by one space or tab is removed.
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); i++ {
		if text[i] == '\r' && i+2 < len(text) && text[i+1] == '\n' && (text[i+2] == ' ' || text[i+2] == '\t') {
			i += 2
			continue
		}
		if text[i] == '\n' && i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\t') {
			i++
			continue
		}
		b.WriteByte(text[i])
	}
	lines := strings.Split(strings.ReplaceAll(b.String(), "\r\n", "\n"), "\n")

	var props []property
	began, ended := false, false
	for i := 0; i < len(lines); i++ {
		name, value, ok := propertyLine(lines[i])
		if !ok {
			continue // not a property: ignored (and, in HDTP, absorbed below when it follows the cert)
		}
		if s.TolerantCards && name == s.CertProp {
			var v strings.Builder
			v.WriteString(value)
			for i+1 < len(lines) {
				if _, _, isProp := propertyLine(lines[i+1]); isProp {
					break
				}
				i++
				v.WriteString(lines[i])
			}
			value = strings.Map(func(r rune) rune {
				if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
					return -1
				}
				return r
			}, v.String())
		}
		switch {
		case ended:
			return nil, refuse(ReasonStructure, "a property after END:VCARD")
		case !began:
			if name != "BEGIN" || !strings.EqualFold(value, "VCARD") {
				return nil, refuse(ReasonStructure, "does not begin with BEGIN:VCARD")
			}
			began = true
			continue
		case name == "BEGIN":
			return nil, refuse(ReasonStructure, "a nested BEGIN")
		case name == "END":
			if !strings.EqualFold(value, "VCARD") {
				return nil, refuse(ReasonStructure, "END is not END:VCARD")
			}
			ended = true
			continue
		}
		props = append(props, property{name: name, value: value})
	}
	if !ended {
		return nil, refuse(ReasonStructure, "no END:VCARD")
	}
	if len(props) == 0 || props[0].name != "VERSION" || props[0].value != "4.0" {
		return nil, refuse(ReasonStructure, "VERSION:4.0 does not follow BEGIN:VCARD")
	}
	return props, nil
}

// propertyLine splits a line that starts a property, "[group.]name[;params]:value"
// (group and name of letters, digits and '-'; a parameter value may be
// quoted), into the upper-case name and the value.
func propertyLine(line string) (name, value string, ok bool) {
	i := 0
	scanName := func() string {
		start := i
		for i < len(line) && (line[i] >= 'A' && line[i] <= 'Z' || line[i] >= 'a' && line[i] <= 'z' || line[i] >= '0' && line[i] <= '9' || line[i] == '-') {
			i++
		}
		return line[start:i]
	}
	name = scanName()
	if name == "" {
		return "", "", false
	}
	if i < len(line) && line[i] == '.' {
		i++
		if name = scanName(); name == "" {
			return "", "", false
		}
	}
	for i < len(line) && line[i] == ';' {
		i++
		quoted := false
		for i < len(line) && (quoted || line[i] != ':' && line[i] != ';') {
			if line[i] == '"' {
				quoted = !quoted
			}
			i++
		}
	}
	if i >= len(line) || line[i] != ':' {
		return "", "", false
	}
	return strings.ToUpper(name), line[i+1:], true
}

// unescapeText reads a vCard TEXT value (RFC 6350 §3.4).
func unescapeText(v string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			switch v[i] {
			case 'n', 'N':
				b.WriteByte('\n')
			default:
				b.WriteByte(v[i])
			}
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ErrControl is returned by Write for a name with a control character.
var ErrControl = errors.New("card: a name with a control character (a line break in FN could plant a second X-*-SEAL)")

// Write writes the card of a leaf: CRLF line ends, lines folded at 75
// octets with CRLF and one space, FN escaped as vCard text, and the
// generation's X-*-VERSION, X-*-CERT and X-*-SEAL. It writes no root, no
// other protocol property and no control character.
func Write(gen wire.Generation, name string, leafDER []byte, seal Seal) (string, error) {
	s := gen.Strings()
	if s == nil {
		return "", errors.New("card: no generation")
	}
	if !seal.Valid() {
		return "", errors.New("card: a seal policy outside none, optional, required")
	}
	if !utf8.ValidString(name) {
		return "", errors.New("card: a name that is not UTF-8")
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", ErrControl
		}
	}
	var b strings.Builder
	// line writes one content line, folded: at most 75 octets on the
	// first physical line and 74 after the space of each continuation,
	// never splitting a UTF-8 sequence.
	line := func(l string) {
		limit := 75
		for len(l) > limit {
			cut := limit
			for !utf8.RuneStart(l[cut]) {
				cut--
			}
			b.WriteString(l[:cut] + "\r\n ")
			l, limit = l[cut:], 74
		}
		b.WriteString(l + "\r\n")
	}
	esc := strings.NewReplacer(`\`, `\\`, `,`, `\,`, `;`, `\;`)
	line("BEGIN:VCARD")
	line("VERSION:4.0")
	line("FN:" + esc.Replace(name))
	line(s.VersionProp + ":" + s.CardVersion)
	line(s.CertProp + ":" + wire.B64Encode(leafDER))
	line(s.SealProp + ":" + string(seal))
	line("END:VCARD")
	return b.String(), nil
}

// Sign makes card_sig: the leaf key's signature over the card's UTF-8
// bytes exactly as sent, CRLFs included (pure Ed25519, or ECDSA/SHA-256
// DER for a P-256 leaf), as unpadded base64url.
func Sign(leafKey crypto.Signer, text string) (string, error) {
	sig, err := cert.Sign(leafKey, []byte(text), false)
	if err != nil {
		return "", err
	}
	return wire.B64Encode(sig), nil
}

// VerifySig verifies card_sig over the card's exact bytes under the leaf
// key. A card whose line ends were changed (CRLF to LF) no longer
// verifies.
func VerifySig(leaf *cert.Certificate, text, sig string) bool {
	b, ok := wire.B64Decode(sig)
	return ok && cert.VerifySignature(leaf.PublicKey, []byte(text), b)
}

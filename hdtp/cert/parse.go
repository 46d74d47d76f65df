package cert

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"time"
	"unicode/utf8"

	"filippo.io/edwards25519"
	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"pactd.dev/pactd/hdtp/address"
	"pactd.dev/pactd/hdtp/wire"
)

// MaxBytes bounds a certificate (HDTP §12: 4 KiB).
const MaxBytes = 4096

// MaxLeafSpan is the longest a leaf may be valid: 398 days (§14.1).
const MaxLeafSpan = 398 * 24 * time.Hour

// Kind is what a certificate is in a chain.
type Kind uint8

// The kinds.
const (
	// KindLeaf is a host's certificate for one endpoint.
	KindLeaf Kind = 1
	// KindRoot is a person's self-signed identity.
	KindRoot Kind = 2
)

func (k Kind) String() string {
	if k == KindRoot {
		return "root"
	}
	return "leaf"
}

// Certificate is a certificate that passed the profile. Its fields are
// what the profile lets a verifier read; nothing else in the DER is
// consulted.
type Certificate struct {
	// Raw is the whole DER.
	Raw []byte
	// RawTBS is the DER of the signed part.
	RawTBS []byte
	// RawSPKI is the DER SubjectPublicKeyInfo.
	RawSPKI []byte
	// Kind says whether it is a leaf or a root.
	Kind Kind
	// KeyID is the key id of the certificate's key (SHA-256 of RawSPKI),
	// computed, never read from the subjectKeyIdentifier.
	KeyID wire.KeyID
	// KeyAlg is the algorithm of the certificate's key.
	KeyAlg KeyAlg
	// PublicKey is an ed25519.PublicKey or an *ecdsa.PublicKey (P-256).
	PublicKey crypto.PublicKey
	// SigAlg is the algorithm the certificate is signed with: the issuer
	// key's.
	SigAlg KeyAlg
	// Signature is the signature's bytes (64 bytes for Ed25519, DER for
	// ECDSA).
	Signature []byte
	// Serial is the serial number's content octets.
	Serial []byte
	// Subject and Issuer are the commonNames: untrusted claims, never
	// identifiers.
	Subject, Issuer string
	// NotBefore and NotAfter are the validity, inclusive.
	NotBefore, NotAfter time.Time
	// Endpoint is a leaf's one URI, in normal form; "" for a root.
	Endpoint string
	// DNSName is a leaf's optional dNSName, equal to the endpoint's host.
	DNSName string
	// AuthorityKeyID is a leaf's authorityKeyIdentifier: its root's key id.
	AuthorityKeyID wire.KeyID
}

// Fingerprint is the certificate key's fingerprint: the identity for a
// root, the kid for a leaf.
func (c *Certificate) Fingerprint() string { return c.KeyID.Fingerprint() }

// pactRootNotAfter is the only root notAfter PACT allows (§14.1).
var pactRootNotAfter = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// Parse reads der as a certificate of the given kind and checks it against
// the profile of §14.1, returning a rule-1 *Error naming the first thing
// that is not of the profile. It checks everything a certificate says about
// itself, the signature's encoding and, for a root, that the signature
// algorithm is its own key's; it does not verify the signature (rule 2 and
// 3 do, with the issuer's key) and reads no date against a clock (rule 4).
// gen decides a root's end date: PACT allows only 99991231235959Z.
func Parse(der []byte, kind Kind, gen wire.Generation) (*Certificate, error) {
	c, err := parse(der, kind, gen)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func parse(der []byte, kind Kind, gen wire.Generation) (*Certificate, *Error) {
	if len(der) > MaxBytes {
		return nil, refuse(ReasonTooLarge, "")
	}
	c := &Certificate{Raw: der, Kind: kind}
	in := cryptobyte.String(der)
	var certSeq cryptobyte.String
	if !in.ReadASN1(&certSeq, cbasn1.SEQUENCE) {
		return nil, refuse(ReasonDER, "certificate")
	}
	if !in.Empty() {
		return nil, refuse(ReasonTrailingData, "after the certificate")
	}
	var tbsElem, outerAlg, sigBits cryptobyte.String
	if !certSeq.ReadASN1Element(&tbsElem, cbasn1.SEQUENCE) ||
		!certSeq.ReadASN1Element(&outerAlg, cbasn1.SEQUENCE) ||
		!certSeq.ReadASN1(&sigBits, cbasn1.BIT_STRING) {
		return nil, refuse(ReasonDER, "certificate fields")
	}
	if !certSeq.Empty() {
		return nil, refuse(ReasonTrailingData, "after the signature")
	}
	c.RawTBS = tbsElem
	var tbs cryptobyte.String
	if elem := tbsElem; !elem.ReadASN1(&tbs, cbasn1.SEQUENCE) {
		return nil, refuse(ReasonDER, "tbsCertificate")
	}

	// version [0] EXPLICIT v3, present (DER would omit v1).
	if !bytes.HasPrefix(tbs, version3) {
		return nil, refuse(ReasonVersion, "")
	}
	tbs = tbs[len(version3):]

	var serial cryptobyte.String
	if !tbs.ReadASN1(&serial, cbasn1.INTEGER) {
		return nil, refuse(ReasonDER, "serial")
	}
	if !positiveInteger(serial) || len(serial) > 20 {
		return nil, refuse(ReasonSerial, "")
	}
	c.Serial = serial

	var innerAlg cryptobyte.String
	if !tbs.ReadASN1Element(&innerAlg, cbasn1.SEQUENCE) {
		return nil, refuse(ReasonDER, "signature algorithm")
	}
	switch {
	case bytes.Equal(innerAlg, algEd25519):
		c.SigAlg = Ed25519
	case bytes.Equal(innerAlg, algECDSASHA256):
		c.SigAlg = P256
	default:
		return nil, refuse(ReasonSignatureAlgorithm, "")
	}

	var issuer, validity, subject, spki cryptobyte.String
	if !tbs.ReadASN1Element(&issuer, cbasn1.SEQUENCE) {
		return nil, refuse(ReasonDER, "issuer")
	}
	if !tbs.ReadASN1(&validity, cbasn1.SEQUENCE) {
		return nil, refuse(ReasonDER, "validity")
	}
	if !tbs.ReadASN1Element(&subject, cbasn1.SEQUENCE) {
		return nil, refuse(ReasonDER, "subject")
	}
	if !tbs.ReadASN1Element(&spki, cbasn1.SEQUENCE) {
		return nil, refuse(ReasonDER, "subjectPublicKeyInfo")
	}
	var ok bool
	if c.Issuer, ok = commonName(issuer); !ok {
		return nil, refuse(ReasonName, "issuer")
	}
	if c.Subject, ok = commonName(subject); !ok {
		return nil, refuse(ReasonName, "subject")
	}
	if e := c.readValidity(validity, kind, gen); e != nil {
		return nil, e
	}
	if e := c.readKey(spki); e != nil {
		return nil, e
	}

	// issuerUniqueID [1] and subjectUniqueID [2] are not in the profile.
	for _, t := range []cbasn1.Tag{cbasn1.Tag(1).ContextSpecific(), cbasn1.Tag(1).ContextSpecific().Constructed(),
		cbasn1.Tag(2).ContextSpecific(), cbasn1.Tag(2).ContextSpecific().Constructed()} {
		if tbs.PeekASN1Tag(t) {
			return nil, refuse(ReasonUniqueID, "")
		}
	}
	var extsOuter cryptobyte.String
	var hasExts bool
	if !tbs.ReadOptionalASN1(&extsOuter, &hasExts, cbasn1.Tag(3).ContextSpecific().Constructed()) {
		return nil, refuse(ReasonDER, "extensions")
	}
	if !tbs.Empty() {
		return nil, refuse(ReasonTrailingData, "in tbsCertificate")
	}
	if !hasExts {
		return nil, refuse(ReasonExtensions, "none")
	}
	var exts cryptobyte.String
	if !extsOuter.ReadASN1(&exts, cbasn1.SEQUENCE) || !extsOuter.Empty() {
		return nil, refuse(ReasonDER, "extensions")
	}
	if e := c.readExtensions(exts); e != nil {
		return nil, e
	}

	// The outer algorithm is byte-equal to the inner one.
	if !bytes.Equal(outerAlg, innerAlg) {
		return nil, refuse(ReasonAlgorithmMismatch, "")
	}
	if kind == KindRoot && c.SigAlg != c.KeyAlg {
		return nil, refuse(ReasonIssuerKeyAlgorithm, "a root signs with its own key")
	}
	if len(sigBits) < 1 || sigBits[0] != 0 {
		return nil, refuse(ReasonSignatureEncoding, "bit string with unused bits")
	}
	c.Signature = sigBits[1:]
	if r := checkSignatureEncoding(c.SigAlg, c.Signature, true); r != "" {
		return nil, refuse(r, "")
	}
	return c, nil
}

// positiveInteger reports whether b is the content of a DER INTEGER that
// is minimally encoded and greater than zero.
func positiveInteger(b []byte) bool {
	switch {
	case len(b) == 0, b[0]&0x80 != 0:
		return false
	case len(b) > 1 && b[0] == 0 && b[1]&0x80 == 0:
		return false // not minimal
	case len(b) == 1 && b[0] == 0:
		return false
	}
	return true
}

// commonName reads a Name that is exactly one RDN holding one commonName
// as a UTF8String or PrintableString, and returns it.
func commonName(name cryptobyte.String) (string, bool) {
	var rdns, rdn, atv, oid, val cryptobyte.String
	var tag cbasn1.Tag
	if !name.ReadASN1(&rdns, cbasn1.SEQUENCE) || !name.Empty() ||
		!rdns.ReadASN1(&rdn, cbasn1.SET) || !rdns.Empty() ||
		!rdn.ReadASN1(&atv, cbasn1.SEQUENCE) || !rdn.Empty() ||
		!atv.ReadASN1(&oid, cbasn1.OBJECT_IDENTIFIER) || !bytes.Equal(oid, oidCommonName) ||
		!atv.ReadAnyASN1(&val, &tag) || !atv.Empty() {
		return "", false
	}
	switch tag {
	case cbasn1.UTF8String:
		if !utf8.Valid(val) {
			return "", false
		}
	case cbasn1.PrintableString:
		for _, ch := range val {
			if !printable(ch) {
				return "", false
			}
		}
	default:
		return "", false
	}
	return string(val), true
}

func printable(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		bytes.IndexByte([]byte(" '()+,-./:=?"), c) >= 0
}

func (c *Certificate) readValidity(v cryptobyte.String, kind Kind, gen wire.Generation) *Error {
	var nb, na time.Time
	var ok bool
	if nb, ok = readTime(&v); !ok {
		return refuse(ReasonValidityDate, "notBefore")
	}
	if na, ok = readTime(&v); !ok {
		return refuse(ReasonValidityDate, "notAfter")
	}
	if !v.Empty() {
		return refuse(ReasonTrailingData, "in validity")
	}
	c.NotBefore, c.NotAfter = nb, na
	if na.Before(nb) {
		return refuse(ReasonValidityOrder, kind.String()+" notAfter is before its notBefore")
	}
	if kind == KindRoot && !gen.Strings().RootEndDate && !na.Equal(pactRootNotAfter) {
		return refuse(ReasonRootEndDate, "")
	}
	return nil
}

func (c *Certificate) readKey(spki cryptobyte.String) *Error {
	c.RawSPKI = spki
	c.KeyID = wire.KeyIDOf(spki)
	var s, algID, bits cryptobyte.String
	if elem := spki; !elem.ReadASN1(&s, cbasn1.SEQUENCE) || !s.ReadASN1Element(&algID, cbasn1.SEQUENCE) ||
		!s.ReadASN1(&bits, cbasn1.BIT_STRING) || !s.Empty() {
		return refuse(ReasonDER, "subjectPublicKeyInfo")
	}
	if len(bits) < 1 || bits[0] != 0 {
		return refuse(ReasonKeyEncoding, "bit string with unused bits")
	}
	point := bits[1:]
	switch {
	case bytes.Equal(algID, algEd25519):
		c.KeyAlg = Ed25519
		if r := checkEd25519Key(point); r != "" {
			return refuse(r, "")
		}
		c.PublicKey = ed25519.PublicKey(bytes.Clone(point))
	case bytes.Equal(algID, spkiAlgP256):
		c.KeyAlg = P256
		if len(point) == 33 && (point[0] == 2 || point[0] == 3) {
			return refuse(ReasonCompressedPoint, "")
		}
		if len(point) != 65 || point[0] != 4 {
			return refuse(ReasonKeyEncoding, "")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
		if err != nil {
			return refuse(ReasonKeyEncoding, "not a point on P-256")
		}
		c.PublicKey = pub
	default:
		return refuse(ReasonKeyAlgorithm, "")
	}
	return nil
}

// checkEd25519Key refuses a key that is not a canonically encoded point,
// or is of small order (such a key verifies signatures an attacker can
// make without any private key).
func checkEd25519Key(b []byte) Reason {
	if len(b) != ed25519.PublicKeySize {
		return ReasonKeyEncoding
	}
	p, err := new(edwards25519.Point).SetBytes(b)
	if err != nil || !bytes.Equal(p.Bytes(), b) {
		return ReasonKeyEncoding
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return ReasonWeakKey
	}
	return ""
}

// extension is one extension as read, before the per-kind rules.
type extension struct {
	oid      []byte
	critical bool
	value    []byte
}

func (c *Certificate) readExtensions(exts cryptobyte.String) *Error {
	if exts.Empty() {
		return refuse(ReasonExtensions, "empty")
	}
	seen := map[string]extension{}
	for !exts.Empty() {
		var ext, oid, value cryptobyte.String
		if !exts.ReadASN1(&ext, cbasn1.SEQUENCE) || !ext.ReadASN1(&oid, cbasn1.OBJECT_IDENTIFIER) {
			return refuse(ReasonDER, "extension")
		}
		critical := false
		if ext.PeekASN1Tag(cbasn1.BOOLEAN) {
			if !ext.ReadASN1Boolean(&critical) {
				return refuse(ReasonDER, "extension criticality")
			}
			if !critical {
				return refuse(ReasonExtensionEncoding, "critical FALSE written out (DER omits the default)")
			}
		}
		if !ext.ReadASN1(&value, cbasn1.OCTET_STRING) || !ext.Empty() {
			return refuse(ReasonDER, "extension value")
		}
		if _, dup := seen[string(oid)]; dup {
			return refuse(ReasonDuplicateExtension, oidName(oid))
		}
		seen[string(oid)] = extension{oid: oid, critical: critical, value: value}
	}
	want := [][]byte{oidBasicConstraints, oidKeyUsage, oidSubjectKeyID}
	if c.Kind == KindLeaf {
		want = [][]byte{oidBasicConstraints, oidKeyUsage, oidExtKeyUsage, oidSubjectAltName, oidSubjectKeyID, oidAuthorityKeyID}
	}
	for oid := range seen {
		known := false
		for _, w := range want {
			known = known || oid == string(w)
		}
		if !known {
			return refuse(ReasonUnknownExtension, oidName([]byte(oid))+" is not in the "+c.Kind.String()+" profile")
		}
	}
	// Check in the profile's order, so one broken extension gives one
	// reason whatever the order of the others.
	for _, oid := range want {
		ext, ok := seen[string(oid)]
		if !ok {
			return refuse(extensionReason(oid), "missing")
		}
		if e := c.checkExtension(ext); e != nil {
			return e
		}
	}
	return nil
}

// extensionReason is the reason that names a problem with one extension.
func extensionReason(oid []byte) Reason {
	switch string(oid) {
	case string(oidBasicConstraints):
		return ReasonBasicConstraints
	case string(oidKeyUsage):
		return ReasonKeyUsage
	case string(oidExtKeyUsage):
		return ReasonExtendedKeyUsage
	case string(oidSubjectAltName):
		return ReasonSubjectAltName
	case string(oidSubjectKeyID):
		return ReasonSubjectKeyID
	}
	return ReasonAuthorityKeyID
}

func oidName(oid []byte) string {
	switch string(oid) {
	case string(oidBasicConstraints):
		return "basicConstraints"
	case string(oidKeyUsage):
		return "keyUsage"
	case string(oidExtKeyUsage):
		return "extendedKeyUsage"
	case string(oidSubjectAltName):
		return "subjectAltName"
	case string(oidSubjectKeyID):
		return "subjectKeyIdentifier"
	case string(oidAuthorityKeyID):
		return "authorityKeyIdentifier"
	}
	return "an unlisted extension"
}

func (c *Certificate) checkExtension(ext extension) *Error {
	name := oidName(ext.oid)
	// basicConstraints and keyUsage are critical, the rest not (the
	// vectors' and the reference library's reading of §14.1).
	mustCritical := bytes.Equal(ext.oid, oidBasicConstraints) || bytes.Equal(ext.oid, oidKeyUsage)
	if ext.critical != mustCritical {
		return refuse(ReasonExtensionCritical, name)
	}
	// The value is exactly one element of the extension's type, filling
	// its OCTET STRING.
	outer := cbasn1.SEQUENCE
	switch string(ext.oid) {
	case string(oidKeyUsage):
		outer = cbasn1.BIT_STRING
	case string(oidSubjectKeyID):
		outer = cbasn1.OCTET_STRING
	}
	v := cryptobyte.String(ext.value)
	var inner cryptobyte.String
	if !v.ReadASN1(&inner, outer) || !v.Empty() {
		return refuse(ReasonExtensionEncoding, name)
	}
	switch string(ext.oid) {
	case string(oidBasicConstraints):
		want := bcLeaf
		if c.Kind == KindRoot {
			want = bcRoot
		}
		if !bytes.Equal(ext.value, want) {
			return refuse(ReasonBasicConstraints, "")
		}
	case string(oidKeyUsage):
		want := kuRoot
		switch {
		case c.Kind == KindLeaf && c.KeyAlg == Ed25519:
			want = kuLeafEd25519
		case c.Kind == KindLeaf:
			want = kuLeafP256
		}
		if !bytes.Equal(ext.value, want) {
			return refuse(ReasonKeyUsage, "")
		}
	case string(oidExtKeyUsage):
		if !extKeyUsageOK(inner) {
			return refuse(ReasonExtendedKeyUsage, "")
		}
	case string(oidSubjectAltName):
		return c.readSubjectAltName(inner)
	case string(oidSubjectKeyID):
		if !bytes.Equal(inner, c.KeyID[:]) {
			return refuse(ReasonSubjectKeyID, "not the key id of the certificate's key")
		}
	case string(oidAuthorityKeyID):
		var kid cryptobyte.String
		if !inner.ReadASN1(&kid, cbasn1.Tag(0).ContextSpecific()) || !inner.Empty() || len(kid) != len(c.AuthorityKeyID) {
			return refuse(ReasonAuthorityKeyID, "not exactly a 32-byte keyIdentifier")
		}
		copy(c.AuthorityKeyID[:], kid)
	}
	return nil
}

// extKeyUsageOK accepts exactly serverAuth and clientAuth, each once, in
// either order.
func extKeyUsageOK(s cryptobyte.String) bool {
	var server, client int
	for !s.Empty() {
		var oid cryptobyte.String
		if !s.ReadASN1(&oid, cbasn1.OBJECT_IDENTIFIER) {
			return false
		}
		switch {
		case bytes.Equal(oid, oidServerAuth):
			server++
		case bytes.Equal(oid, oidClientAuth):
			client++
		default:
			return false
		}
	}
	return server == 1 && client == 1
}

// readSubjectAltName accepts exactly one uniformResourceIdentifier, the
// endpoint in normal form, and at most one dNSName equal to its host.
func (c *Certificate) readSubjectAltName(s cryptobyte.String) *Error {
	var uris, dnss []string
	for !s.Empty() {
		var v cryptobyte.String
		var tag cbasn1.Tag
		if !s.ReadAnyASN1(&v, &tag) {
			return refuse(ReasonExtensionEncoding, "subjectAltName")
		}
		switch tag {
		case cbasn1.Tag(6).ContextSpecific():
			uris = append(uris, string(v))
		case cbasn1.Tag(2).ContextSpecific():
			dnss = append(dnss, string(v))
		default:
			return refuse(ReasonSubjectAltName, "a name other than a URI or a dNSName")
		}
	}
	if len(uris) != 1 || len(dnss) > 1 {
		return refuse(ReasonSubjectAltName, "not exactly one URI and at most one dNSName")
	}
	if _, err := address.Check(uris[0]); err != nil {
		return refuse(ReasonEndpoint, string(address.ReasonOf(err)))
	}
	c.Endpoint = uris[0]
	if len(dnss) == 1 {
		if dnss[0] != address.Host(uris[0]) {
			return refuse(ReasonDNSName, "")
		}
		c.DNSName = dnss[0]
	}
	return nil
}

// Key is a public key of the profile, read from a bare
// SubjectPublicKeyInfo.
type Key struct {
	// RawSPKI is the DER SubjectPublicKeyInfo.
	RawSPKI []byte
	// KeyID is SHA-256 of RawSPKI.
	KeyID wire.KeyID
	// Alg is the key's algorithm.
	Alg KeyAlg
	// PublicKey is an ed25519.PublicKey or an *ecdsa.PublicKey.
	PublicKey crypto.PublicKey
}

// ParseKey reads a DER SubjectPublicKeyInfo as the profile reads a
// certificate's: Ed25519 (canonical, not of small order) or P-256 as an
// uncompressed point, nothing after. Failures are rule-1 *Errors.
func ParseKey(spki []byte) (*Key, error) {
	if len(spki) > MaxBytes {
		return nil, refuse(ReasonTooLarge, "key")
	}
	in := cryptobyte.String(spki)
	var elem cryptobyte.String
	if !in.ReadASN1Element(&elem, cbasn1.SEQUENCE) || !in.Empty() {
		return nil, refuse(ReasonDER, "subjectPublicKeyInfo")
	}
	var c Certificate
	if e := c.readKey(elem); e != nil {
		return nil, e
	}
	return &Key{RawSPKI: c.RawSPKI, KeyID: c.KeyID, Alg: c.KeyAlg, PublicKey: c.PublicKey}, nil
}

package cert

import (
	"bytes"
	"crypto"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"pactd.dev/pactd/hdtp/address"
	"pactd.dev/pactd/hdtp/wire"
)

// MaxCSRBytes bounds a signing request (HDTP §9.1: csr at most 4096 bytes).
const MaxCSRBytes = 4096

// CSR is a certificate signing request (PKCS #10, RFC 2986) as a host sends
// it to the person's wallet (HDTP §9, §9.1): the host's key, proven by the
// request's own signature, and the endpoint the leaf will name.
type CSR struct {
	// Raw is the DER.
	Raw []byte
	// RawSPKI, KeyID, KeyAlg and PublicKey describe the host's key.
	RawSPKI   []byte
	KeyID     wire.KeyID
	KeyAlg    KeyAlg
	PublicKey crypto.PublicKey
	// CommonName is the subject's commonName: the name the host proposes.
	CommonName string
	// Endpoint is the one URI the request names, in normal form.
	Endpoint string
	// DNSName is the optional dNSName, equal to the endpoint's host.
	DNSName string
}

// NewCSR writes the signing request for the key of signer: subject the
// one commonName cn, and an extensionRequest holding only a
// subjectAltName with the endpoint as its one URI. It is signed by the key
// itself, the proof of possession the wallet checks.
func NewCSR(signer crypto.Signer, cn, endpoint string) ([]byte, error) {
	if _, err := address.Check(endpoint); err != nil {
		return nil, err
	}
	spki, err := SPKIOf(signer.Public())
	if err != nil {
		return nil, err
	}
	san := element(cbasn1.SEQUENCE, element(cbasn1.Tag(6).ContextSpecific(), []byte(endpoint)))
	var info cryptobyte.Builder
	info.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1Int64(0)
		b.AddBytes(NameElement(cn))
		b.AddBytes(spki)
		b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1(cbasn1.OBJECT_IDENTIFIER, func(b *cryptobyte.Builder) { b.AddBytes(oidExtensionRequest) })
				b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
						b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
							b.AddASN1(cbasn1.OBJECT_IDENTIFIER, func(b *cryptobyte.Builder) { b.AddBytes(oidSubjectAltName) })
							b.AddASN1OctetString(san)
						})
					})
				})
			})
		})
	})
	tbs, err := info.Bytes()
	if err != nil {
		return nil, err
	}
	sig, err := Sign(signer, tbs, false)
	if err != nil {
		return nil, err
	}
	var out cryptobyte.Builder
	out.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddBytes(tbs)
		b.AddBytes(sigAlgID(AlgOf(signer.Public())))
		b.AddASN1BitString(sig)
	})
	return out.Bytes()
}

// ParseCSR reads a signing request strictly and verifies its signature:
// at most 4096 bytes of DER with nothing after; version 0; a subject of
// exactly one commonName; an Ed25519 or uncompressed P-256 key; exactly
// one attribute, an extensionRequest holding exactly one non-critical
// subjectAltName of one URI in normal form and at most one dNSName equal
// to its host; the key's own signature algorithm; a signature (either
// ECDSA twin) that verifies under the request's key. Failures are rule-1
// *Errors with ReasonCSR, or a key reason for the key.
func ParseCSR(der []byte) (*CSR, error) {
	c, e := parseCSR(der)
	if e != nil {
		return nil, e
	}
	return c, nil
}

func parseCSR(der []byte) (*CSR, *Error) {
	if len(der) > MaxCSRBytes {
		return nil, refuse(ReasonTooLarge, "signing request")
	}
	in := cryptobyte.String(der)
	var req, info, algID, sigBits cryptobyte.String
	if !in.ReadASN1(&req, cbasn1.SEQUENCE) || !in.Empty() ||
		!req.ReadASN1Element(&info, cbasn1.SEQUENCE) || !req.ReadASN1Element(&algID, cbasn1.SEQUENCE) ||
		!req.ReadASN1(&sigBits, cbasn1.BIT_STRING) || !req.Empty() {
		return nil, refuse(ReasonCSR, "not a DER CertificationRequest")
	}
	var body, subject, spki, attrs cryptobyte.String
	var version int64
	if elem := info; !elem.ReadASN1(&body, cbasn1.SEQUENCE) ||
		!body.ReadASN1Integer(&version) || version != 0 ||
		!body.ReadASN1Element(&subject, cbasn1.SEQUENCE) || !body.ReadASN1Element(&spki, cbasn1.SEQUENCE) ||
		!body.ReadASN1(&attrs, cbasn1.Tag(0).ContextSpecific().Constructed()) || !body.Empty() {
		return nil, refuse(ReasonCSR, "certificationRequestInfo")
	}
	c := &CSR{Raw: der}
	var ok bool
	if c.CommonName, ok = commonName(subject); !ok {
		return nil, refuse(ReasonCSR, "subject is not exactly one commonName")
	}
	var key Certificate
	if e := key.readKey(spki); e != nil {
		return nil, e
	}
	c.RawSPKI, c.KeyID, c.KeyAlg, c.PublicKey = key.RawSPKI, key.KeyID, key.KeyAlg, key.PublicKey

	var attr, oid, values, exts, ext, extOID, sanValue cryptobyte.String
	if !attrs.ReadASN1(&attr, cbasn1.SEQUENCE) || !attrs.Empty() ||
		!attr.ReadASN1(&oid, cbasn1.OBJECT_IDENTIFIER) || !bytes.Equal(oid, oidExtensionRequest) ||
		!attr.ReadASN1(&values, cbasn1.SET) || !attr.Empty() ||
		!values.ReadASN1(&exts, cbasn1.SEQUENCE) || !values.Empty() ||
		!exts.ReadASN1(&ext, cbasn1.SEQUENCE) || !exts.Empty() ||
		!ext.ReadASN1(&extOID, cbasn1.OBJECT_IDENTIFIER) || !bytes.Equal(extOID, oidSubjectAltName) ||
		!ext.ReadASN1(&sanValue, cbasn1.OCTET_STRING) || !ext.Empty() {
		return nil, refuse(ReasonCSR, "attributes are not one extensionRequest of one non-critical subjectAltName")
	}
	var names cryptobyte.String
	if !sanValue.ReadASN1(&names, cbasn1.SEQUENCE) || !sanValue.Empty() {
		return nil, refuse(ReasonCSR, "subjectAltName")
	}
	var leafShape Certificate
	if e := leafShape.readSubjectAltName(names); e != nil {
		return nil, e
	}
	c.Endpoint, c.DNSName = leafShape.Endpoint, leafShape.DNSName

	if !bytes.Equal(algID, sigAlgID(c.KeyAlg)) {
		return nil, refuse(ReasonCSR, "signature algorithm is not the key's own")
	}
	if len(sigBits) < 1 || sigBits[0] != 0 {
		return nil, refuse(ReasonCSR, "signature bit string")
	}
	sig := sigBits[1:]
	if r := checkSignatureEncoding(c.KeyAlg, sig, false); r != "" {
		return nil, refuse(ReasonCSR, "signature encoding")
	}
	if !VerifySignature(c.PublicKey, info, sig) {
		return nil, refuse(ReasonCSRSignature, "")
	}
	return c, nil
}

package cert

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"pactd.dev/pactd/hdtp/address"
	"pactd.dev/pactd/hdtp/wire"
)

// This file writes certificates to the profile: what a wallet does with a
// root and a signing request. pactd holds no root; it uses these to test
// its own validator against certificates it did not receive from the
// vectors, and the `pactd hdtp wallet` development commands use them to
// play the person's part on one machine.

// Parts are the pieces of a certificate before it is signed, each a
// complete DER element, in the order they are written. A certificate made
// from the Parts of a template is of the profile; a test changes one piece
// to make a certificate that breaks exactly one rule.
type Parts struct {
	// Version is the [0] version element; nil writes none.
	Version []byte
	// Serial is the INTEGER element.
	Serial []byte
	// SigAlg is the inner AlgorithmIdentifier element.
	SigAlg []byte
	// Issuer, Validity and Subject are the Name and Validity elements.
	Issuer, Validity, Subject []byte
	// SPKI is the SubjectPublicKeyInfo element.
	SPKI []byte
	// Extra are raw elements written after the key (unique identifiers),
	// for tests.
	Extra []byte
	// Extensions are written, in order, inside [3] { SEQUENCE }; none
	// writes no [3] at all.
	Extensions []Extension
	// OuterSigAlg is the outer AlgorithmIdentifier; nil repeats SigAlg.
	OuterSigAlg []byte
}

// Extension is one extension to write.
type Extension struct {
	// OID is the content octets of the extension's OBJECT IDENTIFIER.
	OID []byte
	// Critical writes critical TRUE.
	Critical bool
	// WriteFalse writes critical FALSE, which DER forbids (the default is
	// omitted); for tests.
	WriteFalse bool
	// Value is what extnValue's OCTET STRING holds.
	Value []byte
}

// TBS returns the DER of the signed part.
func (p *Parts) TBS() ([]byte, error) {
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddBytes(p.Version)
		b.AddBytes(p.Serial)
		b.AddBytes(p.SigAlg)
		b.AddBytes(p.Issuer)
		b.AddBytes(p.Validity)
		b.AddBytes(p.Subject)
		b.AddBytes(p.SPKI)
		b.AddBytes(p.Extra)
		if len(p.Extensions) == 0 {
			return
		}
		b.AddASN1(cbasn1.Tag(3).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				for _, e := range p.Extensions {
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
						b.AddASN1(cbasn1.OBJECT_IDENTIFIER, func(b *cryptobyte.Builder) { b.AddBytes(e.OID) })
						if e.Critical || e.WriteFalse {
							b.AddASN1Boolean(e.Critical)
						}
						b.AddASN1OctetString(e.Value)
					})
				}
			})
		})
	})
	return b.Bytes()
}

// Assemble writes the certificate around a signature over TBS.
func (p *Parts) Assemble(tbs, sig []byte) ([]byte, error) {
	outer := p.OuterSigAlg
	if outer == nil {
		outer = p.SigAlg
	}
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddBytes(tbs)
		b.AddBytes(outer)
		b.AddASN1BitString(sig)
	})
	return b.Bytes()
}

// Sign signs the Parts with the issuer's key (low-S for ECDSA, as §14.1
// requires of certificates) and returns the certificate.
func (p *Parts) Sign(issuer crypto.Signer) ([]byte, error) {
	tbs, err := p.TBS()
	if err != nil {
		return nil, err
	}
	sig, err := Sign(issuer, tbs, true)
	if err != nil {
		return nil, err
	}
	return p.Assemble(tbs, sig)
}

// element writes one DER element.
func element(tag cbasn1.Tag, content []byte) []byte {
	var b cryptobyte.Builder
	b.AddASN1(tag, func(b *cryptobyte.Builder) { b.AddBytes(content) })
	out, _ := b.Bytes() // only a nested-length overflow fails, which one flat element cannot cause
	return out
}

// NameElement is a Name of one commonName, as a UTF8String.
func NameElement(cn string) []byte {
	atv := append(element(cbasn1.OBJECT_IDENTIFIER, oidCommonName), element(cbasn1.UTF8String, []byte(cn))...)
	return element(cbasn1.SEQUENCE, element(cbasn1.SET, element(cbasn1.SEQUENCE, atv)))
}

// ValidityElement is the Validity from notBefore to notAfter.
func ValidityElement(notBefore, notAfter time.Time) []byte {
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		addTime(b, notBefore)
		addTime(b, notAfter)
	})
	out, _ := b.Bytes() // two short times cannot overflow
	return out
}

// IntegerElement is an INTEGER of the given content octets, written as
// given (tests write non-minimal or negative ones).
func IntegerElement(content []byte) []byte { return element(cbasn1.INTEGER, content) }

// randomSerial returns 64 random bits as a positive, minimal INTEGER.
func randomSerial() []byte {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	b[0] |= 0x01        // never zero, whatever the rest
	if b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// SPKIOf returns the DER SubjectPublicKeyInfo of an Ed25519 or P-256 key
// (a P-256 key as its uncompressed point).
func SPKIOf(pub crypto.PublicKey) ([]byte, error) {
	if AlgOf(pub) == 0 {
		return nil, fmt.Errorf("cert: a %T key is neither Ed25519 nor P-256", pub)
	}
	return x509.MarshalPKIXPublicKey(pub)
}

// VersionElement is the [0] EXPLICIT version v3 element.
func VersionElement() []byte { return append([]byte(nil), version3...) }

// SigAlgElement is the AlgorithmIdentifier of signatures by a key of alg.
func SigAlgElement(alg KeyAlg) []byte { return append([]byte(nil), sigAlgID(alg)...) }

// RootTemplate says what a root is to hold.
type RootTemplate struct {
	// CommonName is the person's name as they give it.
	CommonName string
	// NotBefore is the root's creation.
	NotBefore time.Time
	// NotAfter is the end date; zero writes 99991231235959Z, the only one
	// PACT accepts (HDTP also accepts a date the person chose).
	NotAfter time.Time
	// Serial is the serial's content octets; nil draws 64 random bits.
	Serial []byte
}

// Parts returns the parts of the root of key pub.
func (t RootTemplate) Parts(pub crypto.PublicKey) (*Parts, error) {
	spki, err := SPKIOf(pub)
	if err != nil {
		return nil, err
	}
	na := t.NotAfter
	if na.IsZero() {
		na = pactRootNotAfter
	}
	serial := t.Serial
	if serial == nil {
		serial = randomSerial()
	}
	kid := wire.KeyIDOf(spki)
	name := NameElement(t.CommonName)
	return &Parts{
		Version: VersionElement(), Serial: IntegerElement(serial), SigAlg: SigAlgElement(AlgOf(pub)),
		Issuer: name, Validity: ValidityElement(t.NotBefore, na), Subject: name, SPKI: spki,
		Extensions: []Extension{
			{OID: oidBasicConstraints, Critical: true, Value: bcRoot},
			{OID: oidKeyUsage, Critical: true, Value: kuRoot},
			{OID: oidSubjectKeyID, Value: element(cbasn1.OCTET_STRING, kid[:])},
		},
	}, nil
}

// NewRoot makes a self-signed root for the key of signer, and checks it
// against the profile before returning it.
func NewRoot(signer crypto.Signer, t RootTemplate) ([]byte, error) {
	p, err := t.Parts(signer.Public())
	if err != nil {
		return nil, err
	}
	der, err := p.Sign(signer)
	if err != nil {
		return nil, err
	}
	if _, err := Parse(der, KindRoot, wire.HDTP1); err != nil {
		return nil, fmt.Errorf("cert: the root made is not of the profile: %w", err)
	}
	return der, nil
}

// LeafTemplate says what a leaf is to hold.
type LeafTemplate struct {
	// PublicKey is the host's key, from its signing request.
	PublicKey crypto.PublicKey
	// CommonName is the person's name.
	CommonName string
	// Endpoint is the one https URL the leaf names, in normal form.
	Endpoint string
	// DNSName adds a dNSName equal to the endpoint's host.
	DNSName bool
	// NotBefore and NotAfter are the validity; at most 398 days apart.
	NotBefore, NotAfter time.Time
	// Serial is the serial's content octets; nil draws 64 random bits.
	Serial []byte
}

// Parts returns the parts of the leaf the root issues.
func (t LeafTemplate) Parts(root *Certificate) (*Parts, error) {
	spki, err := SPKIOf(t.PublicKey)
	if err != nil {
		return nil, err
	}
	if _, err := address.Check(t.Endpoint); err != nil {
		return nil, err
	}
	ku := kuLeafEd25519
	if AlgOf(t.PublicKey) == P256 {
		ku = kuLeafP256
	}
	serial := t.Serial
	if serial == nil {
		serial = randomSerial()
	}
	var san cryptobyte.Builder
	san.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.Tag(6).ContextSpecific(), func(b *cryptobyte.Builder) { b.AddBytes([]byte(t.Endpoint)) })
		if t.DNSName {
			b.AddASN1(cbasn1.Tag(2).ContextSpecific(), func(b *cryptobyte.Builder) { b.AddBytes([]byte(address.Host(t.Endpoint))) })
		}
	})
	sanDER, err := san.Bytes()
	if err != nil {
		return nil, err
	}
	kid := wire.KeyIDOf(spki)
	eku := element(cbasn1.SEQUENCE, append(element(cbasn1.OBJECT_IDENTIFIER, oidServerAuth), element(cbasn1.OBJECT_IDENTIFIER, oidClientAuth)...))
	aki := element(cbasn1.SEQUENCE, element(cbasn1.Tag(0).ContextSpecific(), root.KeyID[:]))
	return &Parts{
		Version: VersionElement(), Serial: IntegerElement(serial), SigAlg: SigAlgElement(root.KeyAlg),
		Issuer: NameElement(root.Subject), Validity: ValidityElement(t.NotBefore, t.NotAfter), Subject: NameElement(t.CommonName), SPKI: spki,
		Extensions: []Extension{
			{OID: oidBasicConstraints, Critical: true, Value: bcLeaf},
			{OID: oidKeyUsage, Critical: true, Value: ku},
			{OID: oidExtKeyUsage, Value: eku},
			{OID: oidSubjectAltName, Value: sanDER},
			{OID: oidSubjectKeyID, Value: element(cbasn1.OCTET_STRING, kid[:])},
			{OID: oidAuthorityKeyID, Value: aki},
		},
	}, nil
}

// IssueLeaf makes the leaf the root issues to the template's key, and
// checks it against the profile and the root before returning it.
func IssueLeaf(root *Certificate, rootSigner crypto.Signer, t LeafTemplate) ([]byte, error) {
	if root == nil || root.Kind != KindRoot {
		return nil, errors.New("cert: IssueLeaf needs a root")
	}
	if t.NotAfter.Sub(t.NotBefore) > MaxLeafSpan {
		return nil, fmt.Errorf("cert: a leaf may be valid for at most 398 days")
	}
	p, err := t.Parts(root)
	if err != nil {
		return nil, err
	}
	der, err := p.Sign(rootSigner)
	if err != nil {
		return nil, err
	}
	leaf, err := Parse(der, KindLeaf, wire.HDTP1)
	if err != nil {
		return nil, fmt.Errorf("cert: the leaf made is not of the profile: %w", err)
	}
	if !VerifySignature(root.PublicKey, leaf.RawTBS, leaf.Signature) {
		return nil, errors.New("cert: the root signer does not hold the root's key")
	}
	return der, nil
}

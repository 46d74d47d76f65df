package cert

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"pactd.dev/pactd/hdtp/wire"
)

// The tests of this file make certificates that break exactly one rule of
// the §14.1 profile (the hostile cases of hdtp.md §8, numbered there, and
// the rest of the profile's table), and check that each is refused for its
// named reason, beside positive controls made the same way.

var (
	testNow       = time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)
	testNotBefore = time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	testNotAfter  = time.Date(2027, 9, 1, 0, 0, 0, 0, time.UTC)
)

const testEndpoint = "https://agent.alina.example/mcp"

func newKey(t testing.TB, alg KeyAlg) crypto.Signer {
	t.Helper()
	if alg == Ed25519 {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// fixture is a root and a leaf key, with templates of the profile.
type fixture struct {
	rootKey, leafKey crypto.Signer
	rootDER          []byte
	root             *Certificate
}

func newFixture(t testing.TB, rootAlg, leafAlg KeyAlg) *fixture {
	t.Helper()
	f := &fixture{rootKey: newKey(t, rootAlg), leafKey: newKey(t, leafAlg)}
	der, err := NewRoot(f.rootKey, f.rootTemplate())
	if err != nil {
		t.Fatal(err)
	}
	f.rootDER = der
	if f.root, err = Parse(der, KindRoot, wire.HDTP1); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) rootTemplate() RootTemplate {
	return RootTemplate{CommonName: "Alina Rao", NotBefore: testNotBefore}
}

func (f *fixture) leafTemplate() LeafTemplate {
	return LeafTemplate{PublicKey: f.leafKey.Public(), CommonName: "Alina Rao", Endpoint: testEndpoint, DNSName: true,
		NotBefore: testNotBefore, NotAfter: testNotAfter}
}

func (f *fixture) leafParts(t testing.TB) *Parts {
	t.Helper()
	p, err := f.leafTemplate().Parts(f.root)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) rootParts(t testing.TB) *Parts {
	t.Helper()
	p, err := f.rootTemplate().Parts(f.rootKey.Public())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustSign(t testing.TB, p *Parts, key crypto.Signer) []byte {
	t.Helper()
	der, err := p.Sign(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// ext returns the extension of p with the oid, for a test to change.
func ext(p *Parts, oid []byte) *Extension {
	for i := range p.Extensions {
		if bytes.Equal(p.Extensions[i].OID, oid) {
			return &p.Extensions[i]
		}
	}
	return nil
}

func dropExt(p *Parts, oid []byte) {
	out := p.Extensions[:0]
	for _, e := range p.Extensions {
		if !bytes.Equal(e.OID, oid) {
			out = append(out, e)
		}
	}
	p.Extensions = out
}

func sanOf(names ...[]byte) []byte { return element(cbasn1.SEQUENCE, bytes.Join(names, nil)) }

func uri(s string) []byte { return element(cbasn1.Tag(6).ContextSpecific(), []byte(s)) }

func dns(s string) []byte { return element(cbasn1.Tag(2).ContextSpecific(), []byte(s)) }

func utcTime(s string) []byte { return element(cbasn1.UTCTime, []byte(s)) }

func genTime(s string) []byte { return element(cbasn1.GeneralizedTime, []byte(s)) }

func validity(a, b []byte) []byte {
	return element(cbasn1.SEQUENCE, append(append([]byte(nil), a...), b...))
}

type profileCase struct {
	name   string
	kind   Kind
	alg    [2]KeyAlg // root, leaf
	mutate func(t *testing.T, f *fixture, p *Parts)
	// der, when set, builds the certificate itself (for changes after
	// signing); else p is signed with the root key.
	der  func(t *testing.T, f *fixture, p *Parts) []byte
	want Reason
}

var (
	edEd = [2]KeyAlg{Ed25519, Ed25519}
	pP   = [2]KeyAlg{P256, P256}
	edP  = [2]KeyAlg{Ed25519, P256}
)

func profileCases() []profileCase {
	setURI := func(u string) func(*testing.T, *fixture, *Parts) {
		return func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidSubjectAltName).Value = sanOf(uri(u)) }
	}
	cases := []profileCase{
		// 16. The high-S twin of a P-256 root's signature.
		{name: "16 high-S twin", kind: KindLeaf, alg: pP, want: ReasonHighS,
			der: func(t *testing.T, f *fixture, p *Parts) []byte {
				tbs, _ := p.TBS()
				sig, err := Sign(f.rootKey, tbs, true)
				if err != nil {
					t.Fatal(err)
				}
				twin, err := HighSTwin(sig)
				if err != nil {
					t.Fatal(err)
				}
				if !VerifySignature(f.root.PublicKey, tbs, twin) {
					t.Fatal("the twin does not verify: the case would prove nothing")
				}
				der, _ := p.Assemble(tbs, twin)
				return der
			}},
		// 17. Dates.
		{name: "17 30 February", kind: KindLeaf, alg: edEd, want: ReasonValidityDate,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Validity = validity(utcTime("260230120000Z"), utcTime("270301000000Z"))
			}},
		{name: "17 UTCTime without seconds", kind: KindLeaf, alg: edEd, want: ReasonValidityDate,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Validity = validity(utcTime("2609010000Z"), utcTime("270901000000Z"))
			}},
		{name: "17 UTCTime with an offset", kind: KindLeaf, alg: edEd, want: ReasonValidityDate,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Validity = validity(utcTime("260901000000+0000"), utcTime("270901000000Z"))
			}},
		{name: "17 GeneralizedTime before 2050", kind: KindLeaf, alg: edEd, want: ReasonValidityDate,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Validity = validity(genTime("20260901000000Z"), utcTime("270901000000Z"))
			}},
		{name: "17 GeneralizedTime with a fraction", kind: KindRoot, alg: edEd, want: ReasonValidityDate,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Validity = validity(utcTime("260901000000Z"), genTime("99991231235959.5Z"))
			}},
		{name: "17 hour 24", kind: KindLeaf, alg: edEd, want: ReasonValidityDate,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Validity = validity(utcTime("260901240000Z"), utcTime("270901000000Z"))
			}},
		{name: "leaf notAfter before notBefore", kind: KindLeaf, alg: edEd, want: ReasonValidityOrder,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Validity = ValidityElement(testNotAfter, testNotBefore) }},
		// 18. The authorityKeyIdentifier.
		{name: "18 AKI of 3 bytes", kind: KindLeaf, alg: edEd, want: ReasonAuthorityKeyID,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidAuthorityKeyID).Value = element(cbasn1.SEQUENCE, element(cbasn1.Tag(0).ContextSpecific(), []byte{1, 2, 3}))
			}},
		{name: "18 AKI with issuer and serial", kind: KindLeaf, alg: edEd, want: ReasonAuthorityKeyID,
			mutate: func(_ *testing.T, f *fixture, p *Parts) {
				kid := element(cbasn1.Tag(0).ContextSpecific(), f.root.KeyID[:])
				issuer := element(cbasn1.Tag(1).ContextSpecific().Constructed(), element(cbasn1.Tag(4).ContextSpecific().Constructed(), NameElement("Alina Rao")))
				serial := element(cbasn1.Tag(2).ContextSpecific(), []byte{1})
				ext(p, oidAuthorityKeyID).Value = element(cbasn1.SEQUENCE, bytes.Join([][]byte{kid, issuer, serial}, nil))
			}},
		{name: "36 leaf without AKI", kind: KindLeaf, alg: edEd, want: ReasonAuthorityKeyID,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { dropExt(p, oidAuthorityKeyID) }},
		// 19-21. The extension set.
		{name: "19 unlisted non-critical extension", kind: KindLeaf, alg: edEd, want: ReasonUnknownExtension,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				// certificatePolicies (2.5.29.32) with anyPolicy.
				p.Extensions = append(p.Extensions, Extension{OID: []byte{0x55, 0x1d, 0x20},
					Value: element(cbasn1.SEQUENCE, element(cbasn1.SEQUENCE, element(cbasn1.OBJECT_IDENTIFIER, []byte{0x55, 0x1d, 0x20, 0x00})))})
			}},
		{name: "19 unlisted critical extension", kind: KindRoot, alg: edEd, want: ReasonUnknownExtension,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Extensions = append(p.Extensions, Extension{OID: []byte{0x55, 0x1d, 0x1e}, Critical: true, Value: element(cbasn1.SEQUENCE, nil)})
			}},
		{name: "root with an AKI", kind: KindRoot, alg: edEd, want: ReasonUnknownExtension,
			mutate: func(_ *testing.T, f *fixture, p *Parts) {
				p.Extensions = append(p.Extensions, Extension{OID: oidAuthorityKeyID,
					Value: element(cbasn1.SEQUENCE, element(cbasn1.Tag(0).ContextSpecific(), f.root.KeyID[:]))})
			}},
		{name: "20 duplicated SAN", kind: KindLeaf, alg: edEd, want: ReasonDuplicateExtension,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Extensions = append(p.Extensions, *ext(p, oidSubjectAltName))
			}},
		{name: "21 non-critical basicConstraints", kind: KindLeaf, alg: edEd, want: ReasonExtensionCritical,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidBasicConstraints).Critical = false }},
		{name: "21 non-critical keyUsage", kind: KindRoot, alg: edEd, want: ReasonExtensionCritical,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidKeyUsage).Critical = false }},
		{name: "21 critical EKU", kind: KindLeaf, alg: edEd, want: ReasonExtensionCritical,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidExtKeyUsage).Critical = true }},
		{name: "21 critical SAN", kind: KindLeaf, alg: edEd, want: ReasonExtensionCritical,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidSubjectAltName).Critical = true }},
		{name: "critical FALSE written out", kind: KindLeaf, alg: edEd, want: ReasonExtensionEncoding,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidExtKeyUsage).WriteFalse = true }},
		// 22-23. basicConstraints.
		{name: "22 leaf basicConstraints cA FALSE written out", kind: KindLeaf, alg: edEd, want: ReasonBasicConstraints,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidBasicConstraints).Value = []byte{0x30, 0x03, 0x01, 0x01, 0x00}
			}},
		{name: "23 root pathLen absent", kind: KindRoot, alg: edEd, want: ReasonBasicConstraints,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidBasicConstraints).Value = []byte{0x30, 0x03, 0x01, 0x01, 0xff}
			}},
		{name: "23 root pathLen 1", kind: KindRoot, alg: edEd, want: ReasonBasicConstraints,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidBasicConstraints).Value = []byte{0x30, 0x06, 0x01, 0x01, 0xff, 0x02, 0x01, 0x01}
			}},
		{name: "basicConstraints of the wrong type", kind: KindLeaf, alg: edEd, want: ReasonExtensionEncoding,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidBasicConstraints).Value = []byte{0x02, 0x01, 0x00} }},
		{name: "basicConstraints not filling its OCTET STRING", kind: KindLeaf, alg: edEd, want: ReasonExtensionEncoding,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidBasicConstraints).Value = []byte{0x30, 0x00, 0x00} }},
		// 24. keyUsage.
		{name: "24 extra keyUsage bit", kind: KindLeaf, alg: edEd, want: ReasonKeyUsage,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { ext(p, oidKeyUsage).Value = []byte{0x03, 0x02, 0x05, 0xa0} }},
		{name: "24 P-256 leaf without keyAgreement", kind: KindLeaf, alg: pP, want: ReasonKeyUsage,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidKeyUsage).Value = append([]byte(nil), kuLeafEd25519...)
			}},
		{name: "24 Ed25519 leaf with keyAgreement", kind: KindLeaf, alg: edEd, want: ReasonKeyUsage,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidKeyUsage).Value = append([]byte(nil), kuLeafP256...)
			}},
		{name: "24 root without keyCertSign", kind: KindRoot, alg: edEd, want: ReasonKeyUsage,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidKeyUsage).Value = append([]byte(nil), kuLeafEd25519...)
			}},
		{name: "EKU serverAuth only", kind: KindLeaf, alg: edEd, want: ReasonExtendedKeyUsage,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidExtKeyUsage).Value = element(cbasn1.SEQUENCE, element(cbasn1.OBJECT_IDENTIFIER, oidServerAuth))
			}},
		// 25-26. Signature algorithms.
		{name: "25 inner and outer algorithms differ", kind: KindLeaf, alg: edEd, want: ReasonAlgorithmMismatch,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.OuterSigAlg = SigAlgElement(P256) }},
		{name: "25 NULL parameters", kind: KindLeaf, alg: edEd, want: ReasonSignatureAlgorithm,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.SigAlg = []byte{0x30, 0x07, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x05, 0x00}
			}},
		{name: "25 ECDSA with NULL parameters", kind: KindLeaf, alg: pP, want: ReasonSignatureAlgorithm,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.SigAlg = []byte{0x30, 0x0c, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02, 0x05, 0x00}
			}},
		{name: "26 Ed25519 root signing with ECDSA", kind: KindRoot, alg: edEd, want: ReasonIssuerKeyAlgorithm,
			der: func(t *testing.T, f *fixture, p *Parts) []byte {
				p.SigAlg = SigAlgElement(P256)
				return mustSign(t, p, newKey(t, P256))
			}},
		// 27. Keys.
		{name: "27 compressed P-256 point", kind: KindLeaf, alg: edP, want: ReasonCompressedPoint,
			mutate: func(_ *testing.T, f *fixture, p *Parts) {
				pub := f.leafKey.Public().(*ecdsa.PublicKey)
				b, _ := pub.Bytes()
				comp := append([]byte{2 + b[64]&1}, b[1:33]...)
				p.SPKI = element(cbasn1.SEQUENCE, append(append([]byte(nil), spkiAlgP256...), element(cbasn1.BIT_STRING, append([]byte{0}, comp...))...))
			}},
		{name: "P-256 point not on the curve", kind: KindLeaf, alg: edP, want: ReasonKeyEncoding,
			mutate: func(_ *testing.T, f *fixture, p *Parts) {
				pub := f.leafKey.Public().(*ecdsa.PublicKey)
				b, _ := pub.Bytes()
				b[64] ^= 1
				p.SPKI = element(cbasn1.SEQUENCE, append(append([]byte(nil), spkiAlgP256...), element(cbasn1.BIT_STRING, append([]byte{0}, b...))...))
			}},
		{name: "Ed25519 key of small order", kind: KindLeaf, alg: edEd, want: ReasonWeakKey,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				identity := make([]byte, 32)
				identity[0] = 1
				p.SPKI = element(cbasn1.SEQUENCE, append(append([]byte(nil), algEd25519...), element(cbasn1.BIT_STRING, append([]byte{0}, identity...))...))
			}},
		{name: "X25519 key", kind: KindLeaf, alg: edEd, want: ReasonKeyAlgorithm,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.SPKI = element(cbasn1.SEQUENCE, append(element(cbasn1.SEQUENCE, element(cbasn1.OBJECT_IDENTIFIER, []byte{0x2b, 0x65, 0x6e})),
					element(cbasn1.BIT_STRING, append([]byte{0}, make([]byte, 32)...))...))
			}},
		// 28-29. DER and size.
		{name: "28 non-minimal length", kind: KindLeaf, alg: edEd, want: ReasonDER,
			der: func(t *testing.T, f *fixture, p *Parts) []byte {
				der := mustSign(t, p, f.rootKey)
				// 30 82 LL LL -> 30 83 00 LL LL: the same length, one byte too many.
				if der[1] != 0x82 {
					t.Fatalf("unexpected header % x", der[:4])
				}
				return append([]byte{0x30, 0x83, 0x00}, der[2:]...)
			}},
		{name: "28 trailing byte", kind: KindLeaf, alg: edEd, want: ReasonTrailingData,
			der: func(t *testing.T, f *fixture, p *Parts) []byte { return append(mustSign(t, p, f.rootKey), 0) }},
		{name: "29 over 4 KiB", kind: KindLeaf, alg: edEd, want: ReasonTooLarge,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Subject = NameElement(strings.Repeat("A", 4000)) }},
		// 30. Names.
		{name: "30 subject with two RDNs", kind: KindLeaf, alg: edEd, want: ReasonName,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				rdn := element(cbasn1.SET, element(cbasn1.SEQUENCE, append(element(cbasn1.OBJECT_IDENTIFIER, oidCommonName), element(cbasn1.UTF8String, []byte("x"))...)))
				p.Subject = element(cbasn1.SEQUENCE, append(append([]byte(nil), rdn...), rdn...))
			}},
		{name: "30 subject with an O=", kind: KindLeaf, alg: edEd, want: ReasonName,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				o := element(cbasn1.SET, element(cbasn1.SEQUENCE, append(element(cbasn1.OBJECT_IDENTIFIER, []byte{0x55, 0x04, 0x0a}), element(cbasn1.UTF8String, []byte("Org"))...)))
				p.Subject = element(cbasn1.SEQUENCE, append(append([]byte(nil), NameElement("x")[2:]...), o...))
			}},
		{name: "issuer commonName as a BMPString", kind: KindLeaf, alg: edEd, want: ReasonName,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Issuer = element(cbasn1.SEQUENCE, element(cbasn1.SET, element(cbasn1.SEQUENCE,
					append(element(cbasn1.OBJECT_IDENTIFIER, oidCommonName), element(cbasn1.Tag(30), []byte{0, 'A'})...))))
			}},
		// 31-33. The subjectAltName and the endpoint.
		{name: "31 two URIs", kind: KindLeaf, alg: edEd, want: ReasonSubjectAltName,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidSubjectAltName).Value = sanOf(uri(testEndpoint), uri("https://other.example/mcp"))
			}},
		{name: "31 no URI", kind: KindLeaf, alg: edEd, want: ReasonSubjectAltName,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidSubjectAltName).Value = sanOf(dns("agent.alina.example"))
			}},
		{name: "31 an rfc822Name", kind: KindLeaf, alg: edEd, want: ReasonSubjectAltName,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidSubjectAltName).Value = sanOf(uri(testEndpoint), element(cbasn1.Tag(1).ContextSpecific(), []byte("a@alina.example")))
			}},
		{name: "31 two dNSNames", kind: KindLeaf, alg: edEd, want: ReasonSubjectAltName,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidSubjectAltName).Value = sanOf(uri(testEndpoint), dns("agent.alina.example"), dns("agent.alina.example"))
			}},
		{name: "32 dNSName not the URI's host", kind: KindLeaf, alg: edEd, want: ReasonDNSName,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				ext(p, oidSubjectAltName).Value = sanOf(uri(testEndpoint), dns("alina.example"))
			}},
		// 34 onwards (subject key id, serial, version, unique ids).
		{name: "SKI of another key", kind: KindLeaf, alg: edEd, want: ReasonSubjectKeyID,
			mutate: func(_ *testing.T, f *fixture, p *Parts) {
				ext(p, oidSubjectKeyID).Value = element(cbasn1.OCTET_STRING, f.root.KeyID[:])
			}},
		{name: "SKI as a BIT STRING", kind: KindRoot, alg: edEd, want: ReasonExtensionEncoding,
			mutate: func(_ *testing.T, f *fixture, p *Parts) {
				ext(p, oidSubjectKeyID).Value = element(cbasn1.BIT_STRING, append([]byte{0}, f.root.KeyID[:]...))
			}},
		{name: "no extensions", kind: KindRoot, alg: edEd, want: ReasonExtensions,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Extensions = nil }},
		{name: "version v1", kind: KindLeaf, alg: edEd, want: ReasonVersion,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Version = nil }},
		{name: "version v2", kind: KindLeaf, alg: edEd, want: ReasonVersion,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Version = []byte{0xa0, 0x03, 0x02, 0x01, 0x01} }},
		{name: "negative serial", kind: KindLeaf, alg: edEd, want: ReasonSerial,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Serial = IntegerElement([]byte{0x80, 1}) }},
		{name: "zero serial", kind: KindLeaf, alg: edEd, want: ReasonSerial,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Serial = IntegerElement([]byte{0}) }},
		{name: "non-minimal serial", kind: KindLeaf, alg: edEd, want: ReasonSerial,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Serial = IntegerElement([]byte{0, 1}) }},
		{name: "21-byte serial", kind: KindLeaf, alg: edEd, want: ReasonSerial,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) { p.Serial = IntegerElement(bytes.Repeat([]byte{1}, 21)) }},
		{name: "subjectUniqueID", kind: KindLeaf, alg: edEd, want: ReasonUniqueID,
			mutate: func(_ *testing.T, _ *fixture, p *Parts) {
				p.Extra = element(cbasn1.Tag(2).ContextSpecific(), []byte{0, 1})
			}},
		{name: "Ed25519 signature of 63 bytes", kind: KindLeaf, alg: edEd, want: ReasonSignatureEncoding,
			der: func(t *testing.T, f *fixture, p *Parts) []byte {
				tbs, _ := p.TBS()
				sig, _ := Sign(f.rootKey, tbs, true)
				der, _ := p.Assemble(tbs, sig[:63])
				return der
			}},
		{name: "ECDSA signature with a trailing byte", kind: KindLeaf, alg: pP, want: ReasonSignatureEncoding,
			der: func(t *testing.T, f *fixture, p *Parts) []byte {
				tbs, _ := p.TBS()
				sig, _ := Sign(f.rootKey, tbs, true)
				der, _ := p.Assemble(tbs, append(sig, 0))
				return der
			}},
	}
	// 33. Endpoints not in normal form.
	for _, u := range []string{"HTTPS://agent.alina.example/mcp", "https://Agent.alina.example/mcp", "https://agent.alina.example:443/mcp",
		"https://agent.alina.example/a/../mcp", "https://agent.alina.example/a%2fb", "https://agent.alina.example/mcp/",
		"https://agent.alina.example/mcp?q", "https://agent.alina.example/mcp#f", "https://user@agent.alina.example/mcp",
		"http://agent.alina.example/mcp", "https://agent.alina.example", "https://agent.alina.example/", "https://agent.alina.example/%41"} {
		cases = append(cases, profileCase{name: "33 " + u, kind: KindLeaf, alg: edEd, want: ReasonEndpoint, mutate: setURI(u)})
	}
	return cases
}

// TestProfileRefusals: each certificate breaks one rule and is refused at
// rule 1 for that rule's reason.
func TestProfileRefusals(t *testing.T) {
	for _, tc := range profileCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.alg[0], tc.alg[1])
			p := f.leafParts(t)
			if tc.kind == KindRoot {
				p = f.rootParts(t)
			}
			var der []byte
			switch {
			case tc.der != nil:
				der = tc.der(t, f, p)
			default:
				tc.mutate(t, f, p)
				der = mustSign(t, p, f.rootKey)
			}
			_, err := Parse(der, tc.kind, wire.HDTP1)
			if err == nil || RuleOf(err) != 1 || ReasonOf(err) != tc.want {
				t.Fatalf("Parse = %v, want rule 1 %s", err, tc.want)
			}
			// The same certificate in a chain fails at rule 1 too.
			chain := [][]byte{der, f.rootDER}
			if tc.kind == KindRoot {
				leaf, err := IssueLeaf(f.root, f.rootKey, f.leafTemplate())
				if err != nil {
					t.Fatal(err)
				}
				chain = [][]byte{leaf, der}
			}
			if _, err := VerifyChain(chain, ChainOptions{Generation: wire.HDTP1, Now: testNow}); RuleOf(err) != 1 {
				t.Fatalf("VerifyChain = %v, want a rule-1 refusal", err)
			}
		})
	}
}

// TestProfilePositiveControls: certificates made the same way, unchanged,
// pass the profile and make a valid chain, for each pair of key types, in
// both generations, with and without the dNSName.
func TestProfilePositiveControls(t *testing.T) {
	for _, alg := range [][2]KeyAlg{edEd, pP, edP, {P256, Ed25519}} {
		for _, withDNS := range []bool{true, false} {
			f := newFixture(t, alg[0], alg[1])
			tmpl := f.leafTemplate()
			tmpl.DNSName = withDNS
			leaf, err := IssueLeaf(f.root, f.rootKey, tmpl)
			if err != nil {
				t.Fatalf("%v: %v", alg, err)
			}
			for _, gen := range generations {
				c, err := VerifyChain([][]byte{leaf, f.rootDER}, ChainOptions{Generation: gen, Now: testNow, ExpectedRoot: &f.root.KeyID, ExpectedEndpoint: testEndpoint})
				if err != nil {
					t.Fatalf("%v %s: %v", alg, gen, err)
				}
				if c.Leaf.KeyAlg != alg[1] || c.Root.KeyAlg != alg[0] || (c.Leaf.DNSName != "") != withDNS {
					t.Fatalf("%v: chain = %+v", alg, c.Leaf)
				}
			}
		}
	}
}

var generations = []wire.Generation{wire.PACT2, wire.HDTP1}

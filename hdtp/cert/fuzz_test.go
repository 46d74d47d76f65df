package cert_test

import (
	"bytes"
	"crypto/x509"
	"testing"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/hdtptest"
	"pactd.dev/pactd/hdtp/wire"
)

func vectors(f *testing.F) *hdtptest.Vectors {
	v, err := hdtptest.Load(wire.HDTP1)
	if err != nil {
		f.Fatal(err)
	}
	return v
}

// FuzzParse: no input stops the parser, and anything it accepts is
// something crypto/x509 also reads, with the same key and validity; the
// profile only ever narrows.
func FuzzParse(f *testing.F) {
	for _, c := range vectors(f).Certificates {
		f.Add(c.DER)
	}
	f.Fuzz(func(t *testing.T, der []byte) {
		for _, kind := range []cert.Kind{cert.KindLeaf, cert.KindRoot} {
			for _, gen := range []wire.Generation{wire.PACT2, wire.HDTP1} {
				c, err := cert.Parse(der, kind, gen)
				if err != nil {
					if cert.RuleOf(err) != 1 || cert.ReasonOf(err) == "" {
						t.Fatalf("a refusal without rule 1 and a reason: %v", err)
					}
					continue
				}
				x, err := x509.ParseCertificate(der)
				if err != nil {
					t.Fatalf("the profile accepts what crypto/x509 refuses: %v", err)
				}
				if !bytes.Equal(x.RawSubjectPublicKeyInfo, c.RawSPKI) || !x.NotBefore.Equal(c.NotBefore) || !x.NotAfter.Equal(c.NotAfter) {
					t.Fatal("the profile and crypto/x509 read different keys or dates")
				}
			}
		}
	})
}

// FuzzVerifyChain: no pair of inputs stops chain validation, and every
// refusal names a rule and a reason.
func FuzzVerifyChain(f *testing.F) {
	v := vectors(f)
	f.Add(v.Certificates["leaf_c"].DER, v.Certificates["root_c"].DER)
	f.Add(v.Certificates["leaf_a"].DER, v.Certificates["root_a"].DER)
	f.Add(v.Certificates["leaf_b"].DER, v.Certificates["root_b"].DER)
	f.Fuzz(func(t *testing.T, leaf, root []byte) {
		_, err := cert.VerifyChain([][]byte{leaf, root}, cert.ChainOptions{Generation: wire.HDTP1, Now: v.Now})
		if err != nil && (cert.RuleOf(err) < 1 || cert.ReasonOf(err) == "") {
			t.Fatalf("a refusal without a rule and a reason: %v", err)
		}
	})
}

// FuzzParseCSR: no input stops the signing-request parser, and what it
// accepts crypto/x509 reads with the same key and a valid signature.
func FuzzParseCSR(f *testing.F) {
	r, err := hdtptest.LoadSigningRequest()
	if err != nil {
		f.Fatal(err)
	}
	der, _ := wire.B64Decode(r.CSR)
	f.Add(der)
	f.Fuzz(func(t *testing.T, der []byte) {
		c, err := cert.ParseCSR(der)
		if err != nil {
			return
		}
		x, err := x509.ParseCertificateRequest(der)
		if err != nil {
			t.Fatalf("ParseCSR accepts what crypto/x509 refuses: %v", err)
		}
		if !bytes.Equal(x.RawSubjectPublicKeyInfo, c.RawSPKI) || x.CheckSignature() != nil {
			t.Fatal("ParseCSR and crypto/x509 disagree")
		}
	})
}

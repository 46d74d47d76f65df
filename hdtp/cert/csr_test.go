package cert_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/hdtptest"
	"pactd.dev/pactd/hdtp/wire"
)

// TestPublishedSigningRequest: the CSR of HDTP's published signing-request
// example parses, names the example's endpoint, and carries leaf_a_next's
// key (the renewal it asks for).
func TestPublishedSigningRequest(t *testing.T) {
	r, err := hdtptest.LoadSigningRequest()
	if err != nil {
		t.Fatal(err)
	}
	der, ok := wire.B64Decode(r.CSR)
	if !ok {
		t.Fatal("csr is not canonical base64url")
	}
	csr, err := cert.ParseCSR(der)
	if err != nil {
		t.Fatal(err)
	}
	v := load(t, wire.HDTP1)
	next, err := cert.Parse(v.Certificates["leaf_a_next"].DER, cert.KindLeaf, wire.HDTP1)
	if err != nil {
		t.Fatal(err)
	}
	if csr.Endpoint != "https://agent.alina.example/mcp" || csr.CommonName != "Alina Rao" || csr.KeyID != next.KeyID {
		t.Fatalf("csr = %s %q %s, want the endpoint, Alina Rao and leaf_a_next's key", csr.Endpoint, csr.CommonName, csr.KeyID.Fingerprint())
	}
	root, _ := wire.ParseFingerprint(r.ExpectRoot)
	if next.AuthorityKeyID != root {
		t.Fatal("expect_root is not leaf_a_next's root")
	}
}

func keys(t *testing.T) []crypto.Signer {
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return []crypto.Signer{ed, ec}
}

// TestCSRRoundTrip: a request pactd writes reads back with its key,
// name and endpoint, for both key types; a request whose signature or
// body was altered is refused, and so is an oversized one.
func TestCSRRoundTrip(t *testing.T) {
	for _, k := range keys(t) {
		der, err := cert.NewCSR(k, "Alina Rao", "https://agent.alina.example/mcp")
		if err != nil {
			t.Fatal(err)
		}
		csr, err := cert.ParseCSR(der)
		if err != nil {
			t.Fatal(err)
		}
		spki, _ := cert.SPKIOf(k.Public())
		if !bytes.Equal(csr.RawSPKI, spki) || csr.Endpoint != "https://agent.alina.example/mcp" || csr.CommonName != "Alina Rao" {
			t.Fatalf("csr = %+v", csr)
		}
		bad := append([]byte(nil), der...)
		bad[len(bad)-3] ^= 0x01 // inside the signature
		if _, err := cert.ParseCSR(bad); err == nil || cert.ReasonOf(err) != cert.ReasonCSRSignature && cert.ReasonOf(err) != cert.ReasonCSR {
			t.Errorf("altered signature: %v", err)
		}
		body := bytes.Replace(der, []byte("agent.alina"), []byte("agent.bhara"), 1)
		if _, err := cert.ParseCSR(body); cert.ReasonOf(err) != cert.ReasonCSRSignature {
			t.Errorf("altered body: %v, want %s", err, cert.ReasonCSRSignature)
		}
		if _, err := cert.ParseCSR(append(der, 0)); cert.ReasonOf(err) != cert.ReasonCSR {
			t.Errorf("trailing byte: %v, want %s", err, cert.ReasonCSR)
		}
	}
	if _, err := cert.NewCSR(keys(t)[0], "x", "https://agent.alina.example/mcp/"); err == nil {
		t.Error("NewCSR wrote a request for an endpoint not in normal form")
	}
	if _, err := cert.ParseCSR(make([]byte, cert.MaxCSRBytes+1)); cert.ReasonOf(err) != cert.ReasonTooLarge {
		t.Errorf("oversized: %v", err)
	}
}

// TestWalletFlow: a leaf issued from pactd's request by a root of either
// type validates as a chain at the request's endpoint, in both
// generations.
func TestWalletFlow(t *testing.T) {
	for _, rootKey := range keys(t) {
		for _, hostKey := range keys(t) {
			rootDER, err := cert.NewRoot(rootKey, cert.RootTemplate{CommonName: "Alina Rao", NotBefore: testNow.Add(-1)})
			if err != nil {
				t.Fatal(err)
			}
			root, _ := cert.Parse(rootDER, cert.KindRoot, wire.PACT2)
			csrDER, _ := cert.NewCSR(hostKey, "Alina Rao", "https://agent.alina.example/mcp")
			csr, err := cert.ParseCSR(csrDER)
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := cert.IssueLeaf(root, rootKey, cert.LeafTemplate{PublicKey: csr.PublicKey, CommonName: csr.CommonName,
				Endpoint: csr.Endpoint, NotBefore: testNow.Add(-3600e9), NotAfter: testNow.AddDate(1, 0, 0)})
			if err != nil {
				t.Fatal(err)
			}
			for _, gen := range generations {
				c, err := cert.VerifyChain([][]byte{leaf, rootDER}, cert.ChainOptions{Generation: gen, Now: testNow,
					ExpectedRoot: &root.KeyID, ExpectedEndpoint: csr.Endpoint})
				if err != nil || c.Leaf.KeyID != csr.KeyID {
					t.Fatalf("%s: %v", gen, err)
				}
			}
		}
	}
}

// TestParseKey: a key of each type reads back with its key id; a key
// outside the profile is refused for its reason.
func TestParseKey(t *testing.T) {
	for _, k := range keys(t) {
		spki, _ := cert.SPKIOf(k.Public())
		got, err := cert.ParseKey(spki)
		if err != nil || got.KeyID != wire.KeyIDOf(spki) || got.Alg != cert.AlgOf(k.Public()) {
			t.Fatalf("ParseKey = %+v, %v", got, err)
		}
		if _, err := cert.ParseKey(append(spki, 0)); cert.ReasonOf(err) != cert.ReasonDER {
			t.Errorf("trailing byte: %v", err)
		}
	}
	x25519 := []byte{0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x03, 0x21, 0x00}
	x25519 = append(x25519, make([]byte, 32)...)
	if _, err := cert.ParseKey(x25519); cert.ReasonOf(err) != cert.ReasonKeyAlgorithm {
		t.Errorf("X25519 key: %v", err)
	}
}

package jws_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"testing"

	"pactd.dev/pactd/token/jws"
	"pactd.dev/pactd/token/jws/jwstest"
)

// TestLowSPolicy pins the one low-S rule (package doc): a third party's
// ES256 signature verifies in either S form, one of pactd's own only in the
// low form; both refuse r or s out of [1, n-1], a DER signature and a
// signature that is not 64 bytes. The RFC 7515 A.3 vector (a third party's
// token) is the positive control, and its high-S twin is computed from it.
func TestLowSPolicy(t *testing.T) {
	t.Parallel()
	const tok = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
	x, _ := base64.RawURLEncoding.DecodeString("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU")
	y, _ := base64.RawURLEncoding.DecodeString("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatal(err)
	}
	verify := func(tok string, o jws.Origin) bool {
		parts, err := jws.Split(tok, 1<<10)
		if err != nil {
			t.Fatal(err)
		}
		sig, ok := jws.Decode(parts.Signature)
		d := sha256.Sum256([]byte(parts.SigningInput))
		return ok && jws.VerifyES256(pub, &d, sig, o)
	}
	parts, _ := jws.Split(tok, 1<<10)
	sig, _ := jws.Decode(parts.Signature)
	lowForm := !jws.HighS(sig)
	twin := jwstest.HighS(tok)
	low, high := tok, twin
	if !lowForm {
		low, high = twin, tok
	}
	if !verify(low, jws.ThirdParty) || !verify(high, jws.ThirdParty) {
		t.Fatal("ok/third-party: a conformant signature in either S form is refused")
	}
	if !verify(low, jws.Own) {
		t.Fatal("ok/own-low-s: refused")
	}
	if verify(high, jws.Own) {
		t.Fatal("fail/own-high-s: accepted")
	}

	n := elliptic.P256().Params().N
	d := sha256.Sum256([]byte(parts.SigningInput))
	r, s := sig[:32], sig[32:]
	nBytes := n.FillBytes(make([]byte, 32))
	zero := make([]byte, 32)
	rPlusN := new(big.Int).Add(new(big.Int).SetBytes(r), n)
	for name, bad := range map[string][]byte{
		"r-zero":    append(append([]byte{}, zero...), s...),
		"s-zero":    append(append([]byte{}, r...), zero...),
		"r-is-n":    append(append([]byte{}, nBytes...), s...),
		"s-is-n":    append(append([]byte{}, r...), nBytes...),
		"63-bytes":  sig[1:],
		"65-bytes":  append([]byte{0}, sig...),
		"empty":     nil,
		"r-plus-n":  append(rPlusN.FillBytes(make([]byte, 33))[1:], s...), // r+n mod 2^256: out of range or another r
		"der-asn1":  derOf(t, r, s),
		"flipped-s": append(append([]byte{}, r...), append([]byte{s[0] ^ 1}, s[1:]...)...),
	} {
		for _, o := range []jws.Origin{jws.ThirdParty, jws.Own} {
			if jws.VerifyES256(pub, &d, bad, o) {
				t.Errorf("fail/%s (origin %d): accepted", name, o)
			}
		}
	}
	if jws.VerifyES256(nil, &d, sig, jws.ThirdParty) {
		t.Error("fail/nil-key: accepted")
	}
}

func derOf(t *testing.T, r, s []byte) []byte {
	t.Helper()
	// A DER ECDSA-Sig-Value of two 32-byte integers is 70 bytes, never the
	// 64 of a raw R||S, so it must be refused.
	out := []byte{0x30, 0, 0x02, byte(len(r))}
	out = append(out, r...)
	out = append(out, 0x02, byte(len(s)))
	out = append(out, s...)
	out[1] = byte(len(out) - 2)
	return out
}

// TestSignES256 signs 200 times: every signature is 64 bytes, low S, and
// verifies under both origins; a key on another curve is refused.
func TestSignES256(t *testing.T) {
	t.Parallel()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	input := []byte("eyJhbGciOiJFUzI1NiJ9.e30")
	d := sha256.Sum256(input)
	for range 200 {
		sig, err := jws.SignES256(priv, input)
		if err != nil {
			t.Fatal(err)
		}
		if len(sig) != 64 || jws.HighS(sig) {
			t.Fatalf("signature %x: %d bytes, high S %v", sig, len(sig), jws.HighS(sig))
		}
		if !jws.VerifyES256(&priv.PublicKey, &d, sig, jws.Own) || !jws.VerifyES256(&priv.PublicKey, &d, sig, jws.ThirdParty) {
			t.Fatal("own signature does not verify")
		}
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jws.SignES256(p384, input); err == nil {
		t.Fatal("signed with a P-384 key")
	}
}

// TestVerifyRS256: a PKCS #1 v1.5 signature verifies; one byte short, one
// byte long or flipped, it does not.
func TestVerifyRS256(t *testing.T) {
	t.Parallel()
	k := testKeys(t).rsa
	d := sha256.Sum256([]byte("eyJhbGciOiJSUzI1NiJ9.e30"))
	sig, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, d[:])
	if err != nil {
		t.Fatal(err)
	}
	if !jws.VerifyRS256(&k.PublicKey, &d, sig) {
		t.Fatal("ok/valid: refused")
	}
	flipped := append([]byte{}, sig...)
	flipped[10] ^= 1
	for name, bad := range map[string][]byte{"short": sig[1:], "long": append([]byte{0}, sig...), "flipped": flipped} {
		if jws.VerifyRS256(&k.PublicKey, &d, bad) {
			t.Errorf("fail/%s: accepted", name)
		}
	}
	if jws.VerifyRS256(nil, &d, sig) {
		t.Error("fail/nil-key: accepted")
	}
}

// TestSplit: the size bound comes first, then exactly three segments with a
// non-empty header and payload; an empty signature segment is three.
func TestSplit(t *testing.T) {
	t.Parallel()
	c, err := jws.Split("a.b.c", 5)
	if err != nil || c.Header != "a" || c.Payload != "b" || c.Signature != "c" || c.SigningInput != "a.b" {
		t.Fatalf("ok/three: %+v %v", c, err)
	}
	if c, err := jws.Split("a.b.", 5); err != nil || c.Signature != "" {
		t.Fatalf("ok/empty-signature: %+v %v", c, err)
	}
	if _, err := jws.Split("a.b.cd", 5); err != jws.ErrOversized {
		t.Fatalf("fail/oversized: %v", err)
	}
	if _, err := jws.Split("a.b.c.d.e.f", 5); err != jws.ErrOversized {
		t.Fatalf("fail/oversized-before-segments: %v", err)
	}
	for _, s := range []string{"", "a", "a.b", ".b.c", "a..c", "a.b.c.d", "..", "a.b.c."} {
		if _, err := jws.Split(s, 100); err != jws.ErrSegments {
			t.Errorf("fail/%q: %v, want ErrSegments", s, err)
		}
	}
}

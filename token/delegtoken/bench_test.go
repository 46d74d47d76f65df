package delegtoken_test

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"math/big"
	"strings"
	"testing"

	"pactd.dev/pactd/token/delegtoken"
)

// BenchmarkVerify is the pure verification path of IntrospectToken and of
// a delegated message:send: parse, header checks, key lookup, ES256
// verify, claims. Compare with BenchmarkRawES256Verify (the raw limit).
func BenchmarkVerify(b *testing.B) {
	ks := newKeySet(b)
	v := delegtoken.NewVerifier(ks, clock)
	tok := forgeES256(ks.Key, header(ks.KID, "at+jwt"), mustJSON(claimsFor(brandA)), false)
	want := delegtoken.Expect{Issuer: brandA + "/oauth", Audience: brandA, ClientID: paIss}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok, want); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyRefusedEarly measures a refusal before any key use (alg
// none): what an attacker's garbage costs.
func BenchmarkVerifyRefusedEarly(b *testing.B) {
	ks := newKeySet(b)
	v := delegtoken.NewVerifier(ks, clock)
	parts := strings.Split(forgeES256(ks.Key, header(ks.KID, "at+jwt"), mustJSON(claimsFor(brandA)), false), ".")
	tok := b64([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + parts[1] + "."
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok, delegtoken.Expect{}); err == nil {
			b.Fatal("verified")
		}
	}
}

// BenchmarkRawES256Verify is crypto/ecdsa P-256 verification alone.
func BenchmarkRawES256Verify(b *testing.B) {
	ks := newKeySet(b)
	tok := forgeES256(ks.Key, header(ks.KID, "at+jwt"), mustJSON(claimsFor(brandA)), false)
	i := strings.LastIndexByte(tok, '.')
	d := sha256.Sum256([]byte(tok[:i]))
	sig := mustDecode(tok[i+1:])
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	b.ReportAllocs()
	for b.Loop() {
		if !ecdsa.Verify(&ks.Key.PublicKey, d[:], r, s) {
			b.Fatal("bad signature")
		}
	}
}

// BenchmarkMint is minting a delegation token (ES256 sign).
func BenchmarkMint(b *testing.B) {
	s := delegtoken.NewSigner(newKeySet(b), clock)
	c := delegtoken.Claims{Issuer: brandA + "/oauth", Audience: brandA, Subject: "u", ClientID: paIss, GrantID: "g", Scopes: []string{"a", "b"}}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Mint(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

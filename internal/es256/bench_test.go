package es256

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"testing"
)

// BenchmarkVerify compares, with one key in one run, crypto/ecdsa
// (VerifyStock, the raw limit) with the key's precomputed table, and
// reports the table's build; compare with benchstat -col /path.
func BenchmarkVerify(b *testing.B) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	digest := sha256.Sum256([]byte("a PA JWT's signing input"))
	r, s, err := ecdsa.Sign(rand.Reader, priv, digest[:])
	if err != nil {
		b.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	t, err := NewTable(&priv.PublicKey)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("path=stock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !VerifyStock(&priv.PublicKey, &digest, sig) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("path=table", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !t.Verify(&digest, sig) {
				b.Fatal("refused")
			}
		}
	})
}

// BenchmarkNewTable is the cost of one table (TableBytes of memory).
func BenchmarkNewTable(b *testing.B) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewTable(&priv.PublicKey); err != nil {
			b.Fatal(err)
		}
	}
}

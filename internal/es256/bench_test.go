package es256

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"syscall"
	"testing"
	"time"
)

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f for the benchmark's iterations and reports the CPU per
// iteration beside the wall clock: on a shared machine it is the figure
// to compare.
func loop(b *testing.B, f func() bool) {
	b.Helper()
	b.ReportAllocs()
	n, cpu := 0, processCPU(b)
	for b.Loop() {
		if !f() {
			b.Fatal("refused")
		}
		n++
	}
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(n), "cpu-ns/op")
}

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
		loop(b, func() bool { return VerifyStock(&priv.PublicKey, &digest, sig) })
	})
	b.Run("path=table", func(b *testing.B) {
		loop(b, func() bool { return t.Verify(&digest, sig) })
	})
}

// BenchmarkNewTable is the cost of one table (TableBytes of memory).
func BenchmarkNewTable(b *testing.B) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	loop(b, func() bool {
		_, err := NewTable(&priv.PublicKey)
		return err == nil
	})
}

package es256

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/binary"
	"math/big"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"filippo.io/nistec"
)

// fuzzKeys are the keys the differential tests verify with, each with its
// table: d = 1 (Q = G, so u1·G + u2·Q adds equal points), d = n-1
// (Q = -G, so the sum can cancel), d = 2, and private keys drawn from a
// fixed seed. Building tables costs about a millisecond each, so they are
// built once.
var fuzzKeys = sync.OnceValue(func() []fuzzKey {
	n := elliptic.P256().Params().N
	ds := []*big.Int{big.NewInt(1), new(big.Int).Sub(n, big.NewInt(1)), big.NewInt(2)}
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 5 {
		var b [32]byte
		for i := range 4 {
			binary.BigEndian.PutUint64(b[8*i:], rng.Uint64())
		}
		d := new(big.Int).SetBytes(b[:])
		ds = append(ds, d.Mod(d, new(big.Int).Sub(n, big.NewInt(1))).Add(d, big.NewInt(1)))
	}
	keys := make([]fuzzKey, len(ds))
	for i, d := range ds {
		priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d.FillBytes(make([]byte, 32)))
		if err != nil {
			panic(err)
		}
		t, err := NewTable(&priv.PublicKey)
		if err != nil {
			panic(err)
		}
		keys[i] = fuzzKey{priv: priv, d: d, table: t}
	}
	return keys
})

type fuzzKey struct {
	priv  *ecdsa.PrivateKey
	d     *big.Int
	table *Table
}

// Signature shapes the differential tests build from a genuine signature.
const (
	shapeAsIs     = iota // the input bytes as R||S (the fuzzer mutates them)
	shapeGenuine         // a genuine signature over the message
	shapeHighS           // its twin (r, n-s): verifies too
	shapeRZero           // r = 0
	shapeSZero           // s = 0
	shapeRN1             // r = n-1
	shapeSN1             // s = n-1
	shapeRN              // r = n
	shapeSN              // s = n
	shapeRN1Plus         // r = n+1
	shapeSN1Plus         // s = n+1
	shapeRPlusN          // r + n, when it fits in 32 bytes
	shapeInfinity        // digest = -r·d mod n: u1·G + u2·Q is the point at infinity
	shapeU1Zero          // a genuine signature over digest 0: u1 = 0, R = u2·Q
	shapeU1ZeroN         // a genuine signature over digest n: e reduces to 0, u1 = 0
	shapeFlipBit         // one bit of the genuine signature flipped
	shapes
)

// differential judges one case through the table, VerifyStock, a cached
// key past its build and crypto/ecdsa.Verify (math/big form, the
// independent oracle), and fails unless all four decide alike.
func differential(t *testing.T, k fuzzKey, digest *[32]byte, sig []byte) bool {
	t.Helper()
	n := elliptic.P256().Params().N
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	want := ecdsa.Verify(&k.priv.PublicKey, digest[:], r, s)
	if r.Cmp(n) >= 0 || s.Cmp(n) >= 0 {
		// crypto/ecdsa.Verify reduces nothing: it refuses r, s >= n too.
		want = false
	}
	if got := k.table.Verify(digest, sig); got != want {
		t.Fatalf("table %v, crypto/ecdsa %v: d=%x digest=%x sig=%x", got, want, k.d, digest[:], sig)
	}
	if got := VerifyStock(&k.priv.PublicKey, digest, sig); got != want {
		t.Fatalf("VerifyStock %v, crypto/ecdsa %v: digest=%x sig=%x", got, want, digest[:], sig)
	}
	return want
}

// shaped builds the case of one shape from a message and key.
func shaped(k fuzzKey, shape int, msg, raw []byte, bit uint) (digest [32]byte, sig []byte) {
	n := elliptic.P256().Params().N
	digest = sha256.Sum256(msg)
	sig = make([]byte, 64)
	if shape == shapeAsIs {
		copy(sig, raw)
		return digest, sig
	}
	// A genuine signature, deterministic from the message and key (the
	// nonce from SHA-256 of both: this is a test, not a signer).
	h := sha256.Sum256(append(append([]byte{}, msg...), k.d.Bytes()...))
	kk := new(big.Int).SetBytes(h[:])
	kk.Mod(kk, new(big.Int).Sub(n, big.NewInt(1))).Add(kk, big.NewInt(1))
	kG, err := nistec.NewP256Point().ScalarBaseMult(kk.FillBytes(make([]byte, 32)))
	if err != nil {
		panic(err)
	}
	x, err := kG.BytesX()
	if err != nil {
		panic(err)
	}
	r := new(big.Int).Mod(new(big.Int).SetBytes(x), n)
	switch shape {
	case shapeInfinity:
		// e ≡ -r·d: then u1·G + u2·Q = (e + r·d)·w·G = O for every s.
		new(big.Int).Mod(new(big.Int).Neg(new(big.Int).Mul(r, k.d)), n).FillBytes(digest[:])
	case shapeU1Zero:
		clear(digest[:])
	case shapeU1ZeroN:
		n.FillBytes(digest[:])
	}
	e := new(big.Int).SetBytes(digest[:])
	s := new(big.Int).Mul(r, k.d)
	s.Add(s, e).Mul(s, new(big.Int).ModInverse(kk, n)).Mod(s, n)
	if r.Sign() == 0 || s.Sign() == 0 {
		s.SetInt64(1)
	}
	one := big.NewInt(1)
	switch shape {
	case shapeHighS:
		s.Sub(n, s)
	case shapeRZero:
		r.SetInt64(0)
	case shapeSZero:
		s.SetInt64(0)
	case shapeRN1:
		r.Sub(n, one)
	case shapeSN1:
		s.Sub(n, one)
	case shapeRN:
		r.Set(n)
	case shapeSN:
		s.Set(n)
	case shapeRN1Plus:
		r.Add(n, one)
	case shapeSN1Plus:
		s.Add(n, one)
	case shapeRPlusN:
		if p := new(big.Int).Add(r, n); p.BitLen() <= 256 {
			r = p
		}
	}
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	if shape == shapeFlipBit {
		sig[bit/8%64] ^= 1 << (bit % 8)
	}
	return digest, sig
}

// FuzzVerify is the differential fuzz target against crypto/ecdsa: random
// messages and fixed keys, the signature as the fuzzer gives it or built in
// one of the shapes above (r or s of 0, n-1, n, n+1, high and low s, r + n,
// the point at infinity, u1 of zero, a flipped bit). The table, VerifyStock
// and crypto/ecdsa must decide alike on every input.
func FuzzVerify(f *testing.F) {
	for shape := range shapes {
		f.Add(uint8(shape), uint8(shape), []byte("a PA JWT signing input"), make([]byte, 64), uint16(shape*37))
	}
	f.Add(uint8(shapeAsIs), uint8(0), []byte{}, []byte{0xff, 0xff, 0xff, 0xff}, uint16(0))
	f.Fuzz(func(t *testing.T, shape, key uint8, msg, raw []byte, bit uint16) {
		keys := fuzzKeys()
		k := keys[int(key)%len(keys)]
		digest, sig := shaped(k, int(shape)%shapes, msg, raw, uint(bit))
		ok := differential(t, k, &digest, sig)
		switch int(shape) % shapes {
		case shapeGenuine, shapeHighS, shapeU1Zero, shapeU1ZeroN:
			if !ok {
				t.Fatalf("shape %d: a genuine signature is refused", shape)
			}
		case shapeRZero, shapeSZero, shapeRN, shapeSN, shapeRN1Plus, shapeSN1Plus, shapeInfinity:
			if ok {
				t.Fatalf("shape %d: accepted", shape)
			}
		}
	})
}

// TestDifferential runs every shape on every key for many messages, so the
// comparison with crypto/ecdsa runs in the test command beside the fuzz
// target's seeds, and checks that the shapes meant to verify do (the
// positive control) and those meant to fail do not.
func TestDifferential(t *testing.T) {
	t.Parallel()
	rng := mrand.New(mrand.NewPCG(3, 4))
	keys := fuzzKeys()
	accepted := 0
	for i := range 40 {
		msg := make([]byte, rng.IntN(64))
		for j := range msg {
			msg[j] = byte(rng.Uint32())
		}
		raw := make([]byte, 64)
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		for _, k := range keys {
			for shape := range shapes {
				digest, sig := shaped(k, shape, msg, raw, uint(rng.IntN(512)))
				ok := differential(t, k, &digest, sig)
				switch shape {
				case shapeGenuine, shapeHighS, shapeU1Zero, shapeU1ZeroN:
					if !ok {
						t.Fatalf("ok/shape-%d (message %d): refused", shape, i)
					}
					accepted++
				case shapeRZero, shapeSZero, shapeRN, shapeSN, shapeRN1Plus, shapeSN1Plus, shapeInfinity, shapeAsIs:
					if ok {
						t.Fatalf("fail/shape-%d (message %d): accepted", shape, i)
					}
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no genuine signature verified")
	}
}

package envelope

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"testing"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
)

// BenchmarkOpenRequest opens a full-form envelope through the whole open
// order (steps 1 to 9: parse, HPKE open, plaintext, chain validation, two
// signature checks), for each suite; BenchmarkRawVerify is the floor
// beside it, one stock signature verification of the sender's key type.
func BenchmarkOpenRequest(b *testing.B) {
	for _, c := range []struct {
		name string
		toEd bool
	}{{"P256-from-Ed25519", false}, {"X25519-from-P256", true}} {
		b.Run(c.name, func(b *testing.B) {
			k := newKit(b, wire.HDTP1, c.toEd)
			args := k.good(b, false).args()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.open(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifyChain validates a published chain by §14.2.
func BenchmarkVerifyChain(b *testing.B) {
	v := loadVectors(b, wire.HDTP1)
	for _, c := range []string{"a", "b"} {
		b.Run("root_"+c, func(b *testing.B) {
			chain := v.Chain("leaf_"+c, "root_"+c)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cert.VerifyChain(chain, cert.ChainOptions{Generation: wire.HDTP1, Now: v.Now}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRawVerify is one stock verification per key type: the limit
// the chain and envelope numbers are read against.
func BenchmarkRawVerify(b *testing.B) {
	v := loadVectors(b, wire.HDTP1)
	msg := []byte("protected||enc||ct")
	b.Run("ed25519", func(b *testing.B) {
		k := v.LeafKeys["leaf_a"].(ed25519.PrivateKey)
		sig := ed25519.Sign(k, msg)
		for b.Loop() {
			if !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, sig) {
				b.Fatal("verify")
			}
		}
	})
	b.Run("p256", func(b *testing.B) {
		k := v.LeafKeys["leaf_b"].(*ecdsa.PrivateKey)
		h := sha256.Sum256(msg)
		sig, _ := ecdsa.SignASN1(nil, k, h[:])
		for b.Loop() {
			if !ecdsa.VerifyASN1(&k.PublicKey, h[:], sig) {
				b.Fatal("verify")
			}
		}
	})
}

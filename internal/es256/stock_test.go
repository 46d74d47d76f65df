package es256

import (
	"bytes"
	"crypto/rand"
	"encoding/asn1"
	"math/big"
	"testing"
)

// TestRawToDER compares the R||S to DER conversion with encoding/asn1.
func TestRawToDER(t *testing.T) {
	t.Parallel()
	cases := [][]byte{make([]byte, 64)}
	for range 500 {
		sig := make([]byte, 64)
		_, _ = rand.Read(sig)
		switch sig[0] % 4 { // exercise leading zeros and high bits
		case 0:
			sig[0], sig[1] = 0, 0
		case 1:
			sig[32] = 0
		case 2:
			sig[0] |= 0x80
			sig[32] |= 0x80
		}
		cases = append(cases, sig)
	}
	for _, sig := range cases {
		want, err := asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])})
		if err != nil {
			t.Fatal(err)
		}
		var buf [72]byte
		if got := rawToDER(&buf, sig); !bytes.Equal(got, want) {
			t.Fatalf("rawToDER(%x) = %x, want %x", sig, got, want)
		}
	}
}

package es256

import "crypto/ecdsa"

// VerifyStock checks a raw 64-byte R||S signature over digest with pub
// through crypto/ecdsa (r and s must be in [1, n-1]; either S form is
// accepted here, the low-S rule is the caller's).
func VerifyStock(pub *ecdsa.PublicKey, digest *[32]byte, sig []byte) bool {
	if pub == nil || len(sig) != 64 {
		return false
	}
	var der [72]byte
	return ecdsa.VerifyASN1(pub, digest[:], rawToDER(&der, sig))
}

// rawToDER encodes a 64-byte JWS ES256 signature (R||S) as an ASN.1 DER
// ECDSA-Sig-Value into buf (crypto/ecdsa verifies DER without big.Int).
func rawToDER(buf *[72]byte, sig []byte) []byte {
	out := buf[:0]
	r, s := derInt(sig[:32]), derInt(sig[32:])
	rl, sl := len(r), len(s)
	if r[0]&0x80 != 0 {
		rl++
	}
	if s[0]&0x80 != 0 {
		sl++
	}
	out = append(out, 0x30, byte(2+rl+2+sl))
	out = appendDERInt(out, r, rl)
	out = appendDERInt(out, s, sl)
	return out
}

// derInt strips leading zero bytes, keeping at least one byte.
func derInt(b []byte) []byte {
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

func appendDERInt(out, v []byte, l int) []byte {
	out = append(out, 0x02, byte(l))
	if l > len(v) {
		out = append(out, 0)
	}
	return append(out, v...)
}

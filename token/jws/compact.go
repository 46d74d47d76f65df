package jws

import (
	"errors"
	"strings"
)

// Split errors. Callers map them to their own refusal reasons.
var (
	// ErrOversized: the token is longer than the caller's bound.
	ErrOversized = errors.New("jws: token too large")
	// ErrSegments: not three segments, or an empty header or payload.
	ErrSegments = errors.New("jws: not a compact JWS of three segments")
)

// Compact is a compact JWS split into its encoded segments; nothing in it
// is decoded or verified.
type Compact struct {
	// Header is the encoded protected header segment (non-empty).
	Header string
	// Payload is the encoded payload segment (non-empty).
	Payload string
	// Signature is the encoded signature segment (possibly empty).
	Signature string
	// SigningInput is Header + "." + Payload, a substring of the token.
	SigningInput string
}

// Split checks the size bound (before anything else) and splits tok into
// exactly three segments. It allocates nothing.
func Split(tok string, maxBytes int) (Compact, error) {
	if len(tok) > maxBytes {
		return Compact{}, ErrOversized
	}
	d1 := strings.IndexByte(tok, '.')
	if d1 <= 0 {
		return Compact{}, ErrSegments
	}
	rel := strings.IndexByte(tok[d1+1:], '.')
	if rel <= 0 {
		return Compact{}, ErrSegments
	}
	d2 := d1 + 1 + rel
	sig := tok[d2+1:]
	if strings.IndexByte(sig, '.') >= 0 {
		return Compact{}, ErrSegments
	}
	return Compact{Header: tok[:d1], Payload: tok[d1+1 : d2], Signature: sig, SigningInput: tok[:d2]}, nil
}

// DecodedLen returns the decoded length of an unpadded base64url string of
// n characters, or false when no such string exists (n % 4 == 1).
func DecodedLen(n int) (int, bool) {
	if n%4 == 1 {
		return 0, false
	}
	return n/4*3 + n%4*3/4, true
}

// decodeTable maps each byte to its base64url value, or 0xff when it is not
// in the alphabet. It is a constant, not a table variable.
const decodeTable = "" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x3e\xff\xff" +
	"\x34\x35\x36\x37\x38\x39\x3a\x3b\x3c\x3d\xff\xff\xff\xff\xff\xff" +
	"\xff\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e" +
	"\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\xff\xff\xff\xff\x3f" +
	"\xff\x1a\x1b\x1c\x1d\x1e\x1f\x20\x21\x22\x23\x24\x25\x26\x27\x28" +
	"\x29\x2a\x2b\x2c\x2d\x2e\x2f\x30\x31\x32\x33\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" +
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"

// AppendDecode appends the decoding of the unpadded base64url string src to
// dst[:0] (reusing dst when it is large enough). It is strict: every
// character must be in the base64url alphabet (no padding, no whitespace or
// line breaks, which encoding/base64 would skip), and the unused trailing
// bits must be zero, so each byte string has exactly one accepted encoding.
func AppendDecode(dst []byte, src string) ([]byte, bool) {
	n, ok := DecodedLen(len(src))
	if !ok {
		return nil, false
	}
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	dst = dst[:0]
	i := 0
	for ; i+4 <= len(src); i += 4 {
		a, b, c, d := decodeTable[src[i]], decodeTable[src[i+1]], decodeTable[src[i+2]], decodeTable[src[i+3]]
		if (a|b|c|d)&0xc0 != 0 {
			return nil, false
		}
		v := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(d)
		dst = append(dst, byte(v>>16), byte(v>>8), byte(v))
	}
	switch len(src) - i {
	case 2:
		a, b := decodeTable[src[i]], decodeTable[src[i+1]]
		if (a|b)&0xc0 != 0 || b&0x0f != 0 {
			return nil, false
		}
		dst = append(dst, a<<2|b>>4)
	case 3:
		a, b, c := decodeTable[src[i]], decodeTable[src[i+1]], decodeTable[src[i+2]]
		if (a|b|c)&0xc0 != 0 || c&0x03 != 0 {
			return nil, false
		}
		v := uint32(a)<<12 | uint32(b)<<6 | uint32(c)
		dst = append(dst, byte(v>>10), byte(v>>2))
	}
	return dst, true
}

// Decode decodes one segment strictly (see AppendDecode) into a new slice.
func Decode(src string) ([]byte, bool) { return AppendDecode(nil, src) }

const encodeTable = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// Encode returns the unpadded base64url encoding of b.
func Encode(b []byte) string {
	out := make([]byte, 0, (len(b)*8+5)/6)
	i := 0
	for ; i+3 <= len(b); i += 3 {
		v := uint32(b[i])<<16 | uint32(b[i+1])<<8 | uint32(b[i+2])
		out = append(out, encodeTable[v>>18&63], encodeTable[v>>12&63], encodeTable[v>>6&63], encodeTable[v&63])
	}
	switch len(b) - i {
	case 1:
		v := uint32(b[i]) << 16
		out = append(out, encodeTable[v>>18&63], encodeTable[v>>12&63])
	case 2:
		v := uint32(b[i])<<16 | uint32(b[i+1])<<8
		out = append(out, encodeTable[v>>18&63], encodeTable[v>>12&63], encodeTable[v>>6&63])
	}
	return string(out)
}

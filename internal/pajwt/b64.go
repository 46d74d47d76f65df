package pajwt

// b64DecodedLen returns the decoded length of an unpadded base64url string of
// n characters, or false when no such string exists (n % 4 == 1).
func b64DecodedLen(n int) (int, bool) {
	if n%4 == 1 {
		return 0, false
	}
	return n/4*3 + n%4*3/4, true
}

// b64Decode maps each byte to its base64url value, or 0xff when it is not
// in the alphabet. It is a constant, not a table variable.
const b64Decode = "" +
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

// decodeB64 appends the decoding of the unpadded base64url string src to
// dst[:0]. It is strict: every character must be in the base64url alphabet
// (no padding, no whitespace or newlines, which encoding/base64 would skip),
// and the unused trailing bits must be zero, so each byte string has exactly
// one accepted encoding.
func decodeB64(dst []byte, src string) ([]byte, bool) {
	n, ok := b64DecodedLen(len(src))
	if !ok {
		return nil, false
	}
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	dst = dst[:0]
	i := 0
	for ; i+4 <= len(src); i += 4 {
		a, b, c, d := b64Decode[src[i]], b64Decode[src[i+1]], b64Decode[src[i+2]], b64Decode[src[i+3]]
		if (a|b|c|d)&0xc0 != 0 {
			return nil, false
		}
		v := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(d)
		dst = append(dst, byte(v>>16), byte(v>>8), byte(v))
	}
	switch len(src) - i {
	case 2:
		a, b := b64Decode[src[i]], b64Decode[src[i+1]]
		if (a|b)&0xc0 != 0 || b&0x0f != 0 {
			return nil, false
		}
		dst = append(dst, a<<2|b>>4)
	case 3:
		a, b, c := b64Decode[src[i]], b64Decode[src[i+1]], b64Decode[src[i+2]]
		if (a|b|c)&0xc0 != 0 || c&0x03 != 0 {
			return nil, false
		}
		v := uint32(a)<<12 | uint32(b)<<6 | uint32(c)
		dst = append(dst, byte(v>>10), byte(v>>2))
	}
	return dst, true
}

// Package jwstest mutates compact JWS tokens for the differential and fuzz
// tests of the token verifiers: the same mutations go to pactd's verifiers
// and to lestrrat-go/jwx, so they are written once here.
package jwstest

import (
	"crypto/elliptic"
	"encoding/base64"
	"math/big"
	"strings"
)

func enc(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// segments splits tok on every dot (for mutations only).
func segments(tok string) []string { return strings.Split(tok, ".") }

// reencode rewrites segment i of tok with f applied to its decoded bytes'
// standard encodings.
func reencode(tok string, i int, f func(raw []byte) string) string {
	s := segments(tok)
	if i >= len(s) {
		return tok
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[i])
	if err != nil {
		return tok
	}
	s[i] = f(raw)
	return strings.Join(s, ".")
}

// HighS returns tok with its ES256 signature replaced by the (r, n−s)
// twin, or tok when its last segment is not a 64-byte signature.
func HighS(tok string) string {
	return reencode(tok, 2, func(sig []byte) string {
		if len(sig) != 64 {
			return enc(sig)
		}
		s := new(big.Int).SetBytes(sig[32:])
		s.Sub(elliptic.P256().Params().N, s)
		out := append([]byte(nil), sig...)
		s.FillBytes(out[32:])
		return enc(out)
	})
}

// nonCanonical sets unused trailing bits of segment i's last character.
func nonCanonical(tok string, i int) string {
	s := segments(tok)
	if i >= len(s) || len(s[i])%4 == 0 || s[i] == "" {
		return tok
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, s[i][len(s[i])-1])
	if last < 0 {
		return tok
	}
	s[i] = s[i][:len(s[i])-1] + string(alphabet[last|1])
	return strings.Join(s, ".")
}

// Ops is how many ways Mutate changes a token.
const Ops = 16

// Mutate changes tok the op-th way (op mod Ops) at position pos (mod its
// length), with b as the byte, size or segment where one is needed: a byte
// overwritten, inserted, deleted or duplicated, a span or a whole segment
// duplicated, a segment dropped, whitespace or a line break inserted, a
// segment re-encoded as padded or standard-alphabet base64 or with
// non-canonical trailing bits, the high-S twin, whitespace around the
// token, or tok itself.
func Mutate(tok string, op, pos int, b byte) string {
	if tok == "" {
		return tok
	}
	i := pos % len(tok)
	seg := int(b) % 3
	switch op % Ops {
	case 0: // overwrite a byte
		return tok[:i] + string([]byte{b}) + tok[i+1:]
	case 1: // insert a byte
		return tok[:i] + string([]byte{b}) + tok[i:]
	case 2: // delete a byte
		return tok[:i] + tok[i+1:]
	case 3: // duplicate a byte
		return tok[:i+1] + tok[i:]
	case 4: // duplicate a span
		end := min(len(tok), i+1+int(b)%48)
		return tok[:end] + tok[i:end] + tok[end:]
	case 5: // whitespace or a line break
		return tok[:i] + [...]string{"\n", "\r", "\r\n", " ", "\t", "\v", "\f"}[int(b)%7] + tok[i:]
	case 6: // a whole segment duplicated
		s := segments(tok)
		if seg >= len(s) {
			return tok
		}
		return strings.Join(append(s[:seg+1:seg+1], s[seg:]...), ".")
	case 7: // a segment dropped
		s := segments(tok)
		if seg >= len(s) {
			return tok
		}
		return strings.Join(append(s[:seg:seg], s[seg+1:]...), ".")
	case 8: // padded base64url
		return reencode(tok, seg, func(raw []byte) string { return base64.URLEncoding.EncodeToString(raw) })
	case 9: // standard alphabet, unpadded
		return reencode(tok, seg, func(raw []byte) string { return base64.RawStdEncoding.EncodeToString(raw) })
	case 10: // standard alphabet, padded
		return reencode(tok, seg, func(raw []byte) string { return base64.StdEncoding.EncodeToString(raw) })
	case 11: // non-canonical trailing bits
		return nonCanonical(tok, seg)
	case 12: // the high-S twin
		return HighS(tok)
	case 13: // leading or trailing whitespace around the token
		return [...]string{" ", "\n", "\t"}[int(b)%3] + tok
	case 14:
		return tok + [...]string{" ", "\n", "\r\n", "="}[int(b)%4]
	default: // the token itself
		return tok
	}
}

// Package codes is the format of everything the delegation service draws
// or parses: device codes and refresh tokens (prefixed secrets, stored as
// hashes), user codes (RFC 8628 §6.1), the scope parameter and step-up
// task ids.
package codes

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"pactd.dev/pactd/internal/bounds"
	"pactd.dev/pactd/internal/scopeid"
)

// Code formats (PACT §5.3, reference values).
const (
	// DeviceCodePrefix starts every device code.
	DeviceCodePrefix = "dc_"
	// RefreshTokenPrefix starts every refresh token.
	RefreshTokenPrefix = "rt_"
	// secretBytes is the entropy of device codes and refresh tokens.
	secretBytes = 32
	// maxSecretLen bounds a presented device code or refresh token; anything
	// longer is not one pactd issued and is refused before hashing.
	maxSecretLen = 128
	// UserCodeAlphabet is the user code alphabet: consonants only, so no
	// words and no confusable vowels or digits (RFC 8628 §6.1).
	UserCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
	// userCodeLen is the number of alphabet characters in a user code
	// (20^8 ≈ 2^34.6 codes).
	userCodeLen = 8
	// maxUserCodeInput bounds the user code a caller may present.
	maxUserCodeInput = 64
	// MaxScopeID is the longest scope id a Brand may define.
	MaxScopeID = scopeid.MaxLen
	// MaxScopes is the most scopes a request may name (and a Brand define).
	MaxScopes = bounds.Scopes
	// maxScopeParam bounds the raw scope parameter.
	maxScopeParam = MaxScopes * (MaxScopeID + 1)
)

// RandomSecret returns prefix + base64url(32 random bytes).
func RandomSecret(r io.Reader, prefix string) (string, error) {
	var b [secretBytes]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("read randomness: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// SecretHash is the stored form of a device code or refresh token.
func SecretHash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// WellFormedSecret reports whether s could be a secret pactd issued with
// the prefix: bounded, prefixed, base64url.
func WellFormedSecret(s, prefix string) bool {
	if len(s) > maxSecretLen || !strings.HasPrefix(s, prefix) {
		return false
	}
	for _, c := range s[len(prefix):] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return len(s) > len(prefix)
}

// NewUserCode draws a user code of 8 alphabet characters, uniformly
// (rejection sampling), formatted XXXX-XXXX.
func NewUserCode(r io.Reader) (string, error) {
	const n = len(UserCodeAlphabet)
	const limit = 256 - 256%n // bytes at or above limit would bias the draw
	chars := make([]byte, 0, userCodeLen)
	var buf [16]byte
	for reads := 0; len(chars) < userCodeLen; reads++ {
		if reads == 16 { // 256 bytes, each rejected with p = 16/256: never, unless r is broken
			return "", errors.New("randomness source yields only rejected bytes")
		}
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return "", fmt.Errorf("read randomness: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(chars) < userCodeLen {
				chars = append(chars, UserCodeAlphabet[int(b)%n])
			}
		}
	}
	return FormatUserCode(string(chars)), nil
}

// NormalizeUserCode turns what a User typed into the canonical 8-character
// code: ASCII letters are upper-cased, dashes and spaces are dropped. ok is
// false unless exactly 8 characters of the alphabet remain.
func NormalizeUserCode(in string) (code string, ok bool) {
	if len(in) > maxUserCodeInput {
		return "", false
	}
	var b [userCodeLen]byte
	n := 0
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c == '-' || c == ' ':
			continue
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		}
		if strings.IndexByte(UserCodeAlphabet, c) < 0 || n == userCodeLen {
			return "", false
		}
		b[n] = c
		n++
	}
	if n != userCodeLen {
		return "", false
	}
	return string(b[:]), true
}

// FormatUserCode writes a normalized code as XXXX-XXXX.
func FormatUserCode(normalized string) string {
	if len(normalized) != userCodeLen {
		return normalized
	}
	return normalized[:userCodeLen/2] + "-" + normalized[userCodeLen/2:]
}

// UserCodeHash is the stored form of a user code: SHA-256 over the Brand
// and the normalized code, so the code cannot be read back and equal codes
// of different Brands never collide. (The code space is small, 34.6 bits,
// so the hash does not resist an offline search; codes live 10 minutes.)
func UserCodeHash(brandID, normalized string) []byte {
	h := sha256.New()
	h.Write([]byte("pactd user code v1\x00"))
	h.Write([]byte(brandID))
	h.Write([]byte{0})
	h.Write([]byte(normalized))
	return h.Sum(nil)
}

// ParseScope splits an OAuth scope parameter into ids, in order and without
// duplicates. Ids are separated by one or more spaces (RFC 6749 §3.3 says
// one; extra spaces are tolerated); any other whitespace or character
// outside the scope syntax, more than MaxScopes ids, or no id at all is
// refused (ok false).
func ParseScope(s string) (ids []string, ok bool) {
	if len(s) > maxScopeParam {
		return nil, false
	}
	seen := make(map[string]bool)
	for _, id := range strings.Split(s, " ") {
		if id == "" {
			continue
		}
		if !scopeid.Valid(id) {
			return nil, false
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
		if len(ids) > MaxScopes {
			return nil, false
		}
	}
	return ids, len(ids) > 0
}

// NewTaskID returns "t-" and a random (version 4) UUID.
func NewTaskID(r io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("read randomness: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("t-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

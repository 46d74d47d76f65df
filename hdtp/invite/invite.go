// Package invite mints and reads invite tokens (HDTP/PACT §4): the last
// path segment of an invite URL, https://<issuer host>/i/<token>. The text
// leaves the format open; pactd's tokens are "inv_" and 192 random bits in
// unpadded base64url (32 characters), shown once to the person who made
// the invite and stored only as their SHA-256 hash, so a copy of the store
// redeems nothing.
//
// A string that is not a token of this form is refused before any lookup;
// callers answer it exactly as they answer an unknown, expired, revoked or
// used-up token (invite_invalid, and one not-found on the landing), so
// the format check tells a guesser nothing.
package invite

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"pactd.dev/pactd/hdtp/wire"
)

// Prefix starts every token.
const Prefix = "inv_"

// randomBytes is the token's entropy: 192 bits.
const randomBytes = 24

// Len is a token's length: the prefix and 32 base64url characters.
const Len = len(Prefix) + randomBytes*4/3

// PathPrefix is the path an invite URL's token follows.
const PathPrefix = "/i/"

// Hash is the stored form of a token.
type Hash [sha256.Size]byte

// New mints a token and returns it with its hash. The token is shown
// once; only the hash is kept.
func New() (token string, h Hash) {
	b := make([]byte, randomBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	token = Prefix + wire.B64Encode(b)
	return token, sha256.Sum256([]byte(token))
}

// Parse reads a token: exactly Len characters, the prefix and canonical
// base64url. It returns the token's hash, the key to look it up by; ok is
// false for anything else (answer it as an unknown token).
func Parse(s string) (h Hash, ok bool) {
	if len(s) != Len || !strings.HasPrefix(s, Prefix) {
		return h, false
	}
	if b, ok := wire.B64Decode(s[len(Prefix):]); !ok || len(b) != randomBytes {
		return h, false
	}
	return sha256.Sum256([]byte(s)), true
}

// FromPath reads the token of an invite URL's path, "/i/<token>" and
// nothing more.
func FromPath(path string) (Hash, bool) {
	tok, ok := strings.CutPrefix(path, PathPrefix)
	if !ok {
		return Hash{}, false
	}
	return Parse(tok)
}

// Path is the path of the invite URL of a token.
func Path(token string) string { return PathPrefix + token }

// Equal compares two hashes in constant time.
func (h Hash) Equal(o Hash) bool { return subtle.ConstantTimeCompare(h[:], o[:]) == 1 }

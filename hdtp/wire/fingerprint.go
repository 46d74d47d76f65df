package wire

import (
	"crypto/sha256"
	"strings"

	"pactd.dev/pactd/token/jws"
)

// KeyID is the 32-byte key identifier of a public key: SHA-256 of its
// DER SubjectPublicKeyInfo (HDTP/PACT §2, §14.1). A certificate's
// subjectKeyIdentifier holds it, a leaf's authorityKeyIdentifier holds its
// root's, and its fingerprint spells it.
type KeyID [32]byte

// FingerprintPrefix starts every fingerprint.
const FingerprintPrefix = "sha256:"

// FingerprintLen is the length of a fingerprint: the prefix and 43
// base64url characters.
const FingerprintLen = len(FingerprintPrefix) + 43

// KeyIDOf returns the key id of a DER SubjectPublicKeyInfo.
func KeyIDOf(spki []byte) KeyID { return sha256.Sum256(spki) }

// Fingerprint spells the key id: "sha256:" + base64url without padding.
// An identity is its root's fingerprint; the same formula over a leaf's
// key gives the envelope kid and the small form's leaf.
func (k KeyID) Fingerprint() string { return FingerprintPrefix + B64Encode(k[:]) }

// ParseFingerprint reads a fingerprint in its one canonical spelling:
// exactly "sha256:" and 43 characters of the base64url alphabet whose
// unused trailing bits are zero, which makes the last character one of
// AEIMQUYcgkosw048 (the rule HDTP 1.1.0-draft states, enforced in both
// generations because it is only canonical base64url).
func ParseFingerprint(s string) (KeyID, bool) {
	var k KeyID
	if len(s) != FingerprintLen || !strings.HasPrefix(s, FingerprintPrefix) {
		return k, false
	}
	b, ok := B64Decode(s[len(FingerprintPrefix):])
	if !ok || len(b) != len(k) {
		return k, false
	}
	copy(k[:], b)
	return k, true
}

// B64Decode decodes unpadded base64url strictly: only the 64 characters of
// the alphabet (no padding, no whitespace, no CR or LF, which
// encoding/base64 skips even in strict mode) and zero unused trailing bits,
// so every byte string has exactly one accepted spelling. It is pactd's one
// base64url decoder (token/jws).
func B64Decode(s string) ([]byte, bool) { return jws.Decode(s) }

// B64Encode encodes b as unpadded base64url.
func B64Encode(b []byte) string { return jws.Encode(b) }

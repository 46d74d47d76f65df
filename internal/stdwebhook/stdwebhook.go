// Package stdwebhook signs and verifies webhook requests as the Standard
// Webhooks specification (v1.0.0, "Signature scheme" and "Webhook
// headers") defines them: three headers, webhook-id (the message id, the
// same on every retry, for de-duplication), webhook-timestamp (unix seconds
// of the attempt) and webhook-signature, a space-separated list of
// "v1,<base64 HMAC-SHA256>" signatures over "{id}.{timestamp}.{body}", keyed
// with the bytes of a "whsec_<base64>" secret.
package stdwebhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The header names (lower case, as the specification writes them).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix marks a symmetric signing secret.
const SecretPrefix = "whsec_"

// Bounds from the specification: a secret holds 24 to 64 random bytes.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
	// secretBytes is what NewSecret generates.
	secretBytes = 32
	// maxHeaderBytes bounds each header Verify reads.
	maxHeaderBytes = 4096
	// maxIDBytes bounds a message id.
	maxIDBytes = 256
)

// The refusals of ParseSecret and Verify.
var (
	ErrSecret       = errors.New("stdwebhook: secret is not whsec_ and base64 of 24 to 64 bytes")
	ErrID           = errors.New("stdwebhook: webhook-id is missing, too long, or holds a character other than A-Z a-z 0-9 _ -")
	ErrTimestamp    = errors.New("stdwebhook: webhook-timestamp is missing or not unix seconds")
	ErrStale        = errors.New("stdwebhook: webhook-timestamp is outside the tolerance")
	ErrNoSignature  = errors.New("stdwebhook: webhook-signature has no v1 signature")
	ErrBadSignature = errors.New("stdwebhook: no v1 signature matches")
)

// NewSecret returns a new random secret in its "whsec_" form.
func NewSecret() string {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ParseSecret returns the HMAC key of a "whsec_" secret.
func ParseSecret(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok || len(rest) > base64.StdEncoding.EncodedLen(MaxSecretBytes) {
		return nil, ErrSecret
	}
	key, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil || len(key) < MinSecretBytes || len(key) > MaxSecretBytes || strings.ContainsAny(rest, "\r\n") {
		return nil, ErrSecret
	}
	return key, nil
}

// ValidID reports whether id may be a message id: 1 to 256 characters of
// A-Z a-z 0-9 _ - (no '.', which would make the signed content ambiguous).
func ValidID(id string) bool {
	if id == "" || len(id) > maxIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Sign returns the "v1,<base64>" signature of body sent as message id at ts.
func Sign(key []byte, id string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, strconv.FormatInt(ts.Unix(), 10), body))
}

func mac(key []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// SetHeaders sets the three headers of a request carrying body as message
// id at ts, signed with each key in turn: webhook-signature lists one
// "v1,<base64>" per key, separated by single spaces, which is how the
// specification rotates a secret without downtime (a receiver accepts the
// request when any listed signature verifies with its secret). A sender
// rotating passes the new key first, then the previous one.
func SetHeaders(h http.Header, keys [][]byte, id string, ts time.Time, body []byte) {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = Sign(k, id, ts, body)
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
}

// Verify checks a received request as a receiver does: the timestamp is
// within tolerance of now (either way), and one of the v1 signatures is
// the HMAC of "{id}.{timestamp}.{body}" under key (compared in constant
// time). It returns the message id, the key to de-duplicate on.
func Verify(key []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) (string, error) {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if !ValidID(id) {
		return "", ErrID
	}
	if ts == "" || len(ts) > 19 || ts[0] == '+' || ts[0] == '-' {
		return "", ErrTimestamp
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || strconv.FormatInt(sec, 10) != ts {
		return "", ErrTimestamp
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return "", ErrStale
	}
	if len(sigs) > maxHeaderBytes {
		return "", ErrNoSignature
	}
	want := mac(key, id, ts, body)
	found := false
	for _, s := range strings.Split(sigs, " ") {
		b64, ok := strings.CutPrefix(s, "v1,")
		if !ok {
			continue // another scheme (v1a) or an empty field
		}
		found = true
		got, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err == nil && !strings.ContainsAny(b64, "\r\n") && hmac.Equal(got, want) {
			return id, nil
		}
	}
	if !found {
		return "", ErrNoSignature
	}
	return "", ErrBadSignature
}

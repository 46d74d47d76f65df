// Package provkeys is the Provider's key ring: the ES256 (P-256) keys that
// sign delegation tokens (typ at+jwt), consent sessions (pact-consent+jwt)
// and receipts (pact-receipt+jws), and the JWKS document that publishes
// them (PACT §4.4, §5.4, §5.6).
//
// # Keys at rest
//
// Keys are generated on first start and kept in the store (db.KeyStore).
// The private scalar is sealed with AES-256-GCM under a 32-byte
// key-encryption key (KEK) that comes from configuration and is never
// stored in the database; the key id is bound into the ciphertext as
// additional data, so a sealed key cannot be moved to another row. See
// [LoadKEK] for where the KEK comes from.
//
// # Key ids
//
// A key's kid is its RFC 7638 JWK thumbprint (base64url SHA-256 of the
// canonical {"crv","kty","x","y"} JSON), see [Thumbprint].
//
// # Rotation
//
// [Ring.Rotate] adds a next key. It is published in the JWKS at once but
// signs only from activate_time = now + PublishDelay. At that moment the
// previous key retires; it stays published until retire + RetireGrace
// (the longest token lifetime, 1 h, plus a margin), so every token it
// signed keeps verifying until it has expired.
//
// # Replicas and the freshness bound
//
// Every replica caches the keys in memory and reloads them from the store
// at most RefreshInterval (default 60 s) after its last load, on the next
// call that needs them. So a replica publishes a new key at most
// RefreshInterval after another replica created it, and the default
// PublishDelay (JWKS max-age 300 s + RefreshInterval 60 s = 360 s) makes
// sure no JWKS that lacks a key can still sit in a cache when that key
// starts signing. A replica whose snapshot is older than PublishDelay (the
// store has been unreachable that long) refuses to sign or publish rather
// than sign with a key that may have retired; this bound is also what keeps
// every signature it made verifiable until the token expires. [Ring.Refresh]
// reloads on demand (for example on a PostgreSQL NOTIFY).
//
// Signatures are raw R||S (64 bytes) with a low S value, so a token has
// exactly one valid encoding.
package provkeys

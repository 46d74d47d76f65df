// Package jose holds pactd's hardened JWKS client and the small JSON Web Key
// helpers the token verifiers need.
//
// # Key sets
//
// [ParseJWKS] turns a JWKS document (RFC 7517) into an immutable [KeySet] of
// public keys ready for crypto/ecdsa and crypto/rsa. It is deliberately strict
// and refuses the whole document (with a sentinel error that wraps
// [ErrBadDocument]) when it finds private key members, symmetric keys, RSA keys
// shorter than 2048 bits, EC curves other than P-256, duplicate "kid" values,
// a "use" other than "sig", "key_ops" without "verify", an "alg" that does not
// fit the key, unsupported key types, or more keys than the configured bound.
// An empty key set is a valid document: a PA that withdraws all its keys is
// honoured, not papered over with stale keys.
//
// [Key.VerifyES256] checks an ES256 signature with a key under the low-S
// rule of package jws. A key set fetched by a [JWKSClient] whose
// Config.Tables is set carries, per P-256 key, a verifier of package es256
// that earns a precomputed table after the key has verified enough
// signatures: a refetch that still publishes the key (same thumbprint) keeps
// it, one that drops the key, or a 404 or 410, releases it.
//
// # JWKS client
//
// [JWKSClient] fetches and caches key sets per URI. It honours Cache-Control
// max-age within bounds, fetches at most once at a time per URI
// (single-flight), rate-limits refetches for unknown key ids per URI, caches
// failures briefly, keeps last-good keys through outages for a bounded time
// (callers wait at most StaleWait for a refetch before being served them),
// bounds the response size and the time spent, and never holds a lock across
// I/O, so a slow JWKS of one URI never delays callers of another. Entries
// are kept per URI for the life of the client (URIs come from registered
// agents, never from tokens).
//
// Transport policy: https only (plain http only to loopback when the
// development allowance is on), no proxy from the environment, no redirects
// off the origin and at most three, and a dial-time address guard
// ([CheckAddress]) applied to every IP actually dialed, so DNS rebinding to a
// private, loopback, link-local, CGNAT or otherwise non-global address fails.
// [CheckURI] exposes the same URI policy for registration-time checks.
//
// Errors: every failure wraps exactly one class sentinel, [ErrInvalidURI] (the
// URI is refused by policy), [ErrUnavailable] (the fetch failed: network,
// timeout, status, redirect, forbidden address) or [ErrBadDocument] (the
// response is not an acceptable key set), plus a more specific sentinel.
package jose

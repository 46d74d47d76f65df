// Package es256 verifies ES256 signatures (ECDSA on P-256 with SHA-256,
// RFC 7518 §3.4, the raw 64-byte R||S form of JWS) and decides exactly as
// crypto/ecdsa does, either through crypto/ecdsa itself (VerifyStock) or,
// for a key that verifies many tokens, through a table of precomputed
// multiples of that key (Table), kept under a byte budget (Cache, Key).
//
// # Why a table
//
// An ECDSA verification computes R = u1·G + u2·Q. crypto/ecdsa already
// uses a precomputed table for the fixed generator G; the variable-base
// half u2·Q costs about three quarters of a verification because Q changes
// from call to call. A PA's key verifies many tokens, so a table of Q's
// multiples can be built once per key, the way Go's table for G is. All
// the inputs of a verification are public (key, digest, signature), so the
// table is read at the digit's index (no constant-time scan of a window).
//
// The table holds, for each of 37 windows of 7 bits, the multiples 1..64
// of 2^(7i)·Q; u2 is recoded into signed 7-bit digits, so u2·Q is at most
// 37 point additions (a negative digit adds the negated entry). A table is
// 227,328 bytes (TableBytes) and takes about as long to build as 15 stock
// verifications; windows of 4, 5, 6, 7 and 8 bits were measured and
// 7 is the smallest whose new-token PA-JWT verification keeps a margin over
// 1.7× the stock verification (docs/es256-tables.md).
//
// # The arithmetic is Go's own
//
// The point arithmetic is filippo.io/nistec (pinned in go.mod): the
// exported copy of the standard library's crypto/internal/fips140/nistec,
// the code crypto/ecdsa runs, with the same assembly on amd64 and arm64.
// Its P256Point gives complete additions (any two points, the point at
// infinity and equal points included), doubling, negation, the generator's
// own fixed-base multiplication and the affine x coordinate; this package
// writes no field arithmetic. The scalar arithmetic mod n (one inversion,
// two products) is math/big: variable time is fine for public inputs.
//
// # Exactly crypto/ecdsa's decision
//
// Table.Verify follows crypto/ecdsa's verification step for step: r and s
// in [1, n-1], e the digest as an integer reduced mod n (SHA-256 is as wide
// as n, so nothing is truncated), w = s⁻¹, u1 = e·w, u2 = r·w,
// R = u1·G + u2·Q, refuse R at infinity, accept when R.x mod n = r. The
// tests hold it to that: the Wycheproof ECDSA P-256/SHA-256 vectors
// (testdata/wycheproof) through both paths, and a differential fuzz target
// against crypto/ecdsa.
//
// # The budget
//
// A Cache holds the tables of many keys within MaxBytes. A key gets a table
// only after BuildAfter successful stock verifications (a key that signs
// one registration or a few tokens never pays for one; an attacker must
// present that many valid signatures per key before any table CPU is
// spent), builds are bounded to BuildsPerSecond, and when the budget is
// full the least recently used table is evicted (a second-chance clock).
// A Key released because its key left its key set drops its table at once
// and never builds one again. Keys without a table verify with VerifyStock.
package es256

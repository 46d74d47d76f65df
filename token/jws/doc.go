// Package jws is pactd's one compact-JWS core (RFC 7515): the parser front
// end, the strict base64url codec, a strict unique-member JSON object
// reader, ES256 and RS256 verification and ES256 signing, and the
// NumericDate helpers. Every token pactd reads goes through it: PA JWTs
// (token/pajwt), delegation tokens, receipts and consent sessions
// (token/delegtoken), registration JWTs (token/regjwt) and Brand login
// assertions (token/brandassert).
//
// # One envelope policy
//
// Each verifier configures a Policy (the size bound, the algorithms, the
// typ, the forbidden header members, the kid rule) instead of copying the
// checks, and maps Parse's first Failure to its own refusal reason and
// message; the key, the signature and the claims stay the verifier's. The
// forbidden header members (jwk, jku, x5u, x5c, crit, b64, zip, enc) are
// defined once, in ForbiddenHeaders; the PA-JWT hot path walks its header
// without building a map and reads the same list through ForbiddenHeader.
//
// # Strict JSON
//
// There is one strict JSON reader, with two views of what it reads. The
// object view (Object, Members) walks a token's header and claims without
// building them; the tree view (DecodeValue) builds a whole value, for
// authorization_details and receipts. Both run the same lexer under the
// same rules: valid UTF-8, no unpaired surrogate escape, member names
// unique after unescaping in every object at every depth. Canonical is the
// one canonical form (members sorted, no whitespace, numbers as written).
// encoding/json only binds, into Go types, text this reader has judged.
//
// # Strictness
//
// A token is at most a caller-given number of bytes (checked before any
// decoding) and exactly three segments; the header and payload segments are
// non-empty, the signature segment may be empty (an "alg":"none" token looks
// like that, and is refused by the caller's alg rule). Each segment is
// unpadded base64url of the alphabet only: no padding, no whitespace, no CR
// or LF (encoding/base64 skips CR and LF even in strict mode, so it is not
// used to decode), and the unused trailing bits are zero, so every byte
// string has exactly one accepted encoding. The header and payload are one
// JSON object each (RFC 8259: valid UTF-8, escapes, numbers, literals,
// nesting at most MaxDepth) whose member names are unique after
// unescaping, at every depth ("\u0061lg" and "alg" are the same name and
// refused together), since parsers that resolve duplicates differently
// would read different tokens.
// The header also has no whitespace before its "{" or after its "}": the
// differential test found that jwx rebuilds the signing input from the
// header as its JSON decoder hands it over (trimmed), so such a token
// verifies here and not there; no JOSE library emits one.
//
// # Low-S policy
//
// ECDSA signatures are malleable: if (r, s) verifies, so does (r, n−s).
// RFC 7515 and RFC 7518 §3.4 do not require the low-S form, and common
// conformant signers do not produce it: Go's crypto/ecdsa.Sign and WebCrypto
// (which Node's jose uses, backed by OpenSSL) return a high S about half
// the time, and WebAuthn authenticators are known to as well; lestrrat-go/jwx
// accepts high S on purpose for that reason. So the one rule is keyed on
// who signed:
//
//   - ThirdParty (PA JWTs, Brand login assertions): either form is
//     accepted. Refusing high S would reject about half the tokens of a
//     conformant PA or Brand. The twin grants nothing new: it carries the
//     same claims, PACT allows replay of a PA JWT within its lifetime, and
//     no state is keyed by signature bytes (the PA-JWT cache compares the
//     whole signature segment, so a twin is merely a cache miss).
//   - Own (delegation tokens, receipts, consent sessions, signed by
//     pactd's Provider keys): only low S is accepted. SignES256 always
//     normalizes, so no genuine token is refused, and each of pactd's own
//     tokens has exactly one valid encoding.
//
// Both forms also require 0 < r, s < n and a 64-byte raw R||S (not DER).
// The arithmetic is package es256's: crypto/ecdsa (VerifyES256), or a key's
// precomputed table once it has earned one (VerifyES256Key), which decide
// alike.
//
// # jwx
//
// lestrrat-go/jwx/v3 is the independent oracle in this package's tests: the
// differential test and FuzzDifferential feed the same mutated tokens to
// this core and to jwx's jws.Verify with the exact key and algorithm, and
// fail on any token the core accepts and jwx refuses. It is not used on the
// hot path (docs/benchmarks.md, "Verification and storage", has the side-by-side figures).
package jws

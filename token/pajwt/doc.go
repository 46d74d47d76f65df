// Package pajwt verifies the PA JWT that personal agents send as
// "Authorization: Bearer" on every PACT request (PACT 1.0 §3).
//
// The hot path runs on pactd's one compact-JWS core, package jws (a bounded
// splitter, a strict base64url decoder, a small validating unique-member
// JSON reader, crypto/ecdsa and crypto/rsa directly; a PA's ES256 signature
// may have either S form, the core's low-S policy). It does not use a
// general JOSE library on the token path, so no library
// default can loosen a rule: the algorithm allowlist (ES256, RS256), the
// forbidden header members, the exact-issuer lookup, a single-string "aud",
// "iat" and "exp" required and positive, 30 s skew, exp - iat <= 300 s and
// raw R||S ES256 signatures are all enforced here and pinned by tests.
//
// Keys come from a [KeySource] (in production *jose.JWKSClient); agents from
// an [AgentLookup] supplied per call. Refusals are *[Error] values carrying a
// [Reason]; see [Verifier.Verify] for the order of the checks and for how
// repeated tokens skip only the signature check.
//
// The unverified "iss" is used to find the agent before the signature is
// checked (as PACT's reference does), so the lookup is driven by
// unauthenticated input: it should be cheap and cache negative answers.
package pajwt

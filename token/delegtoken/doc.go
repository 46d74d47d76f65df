// Package delegtoken mints and verifies PACT delegation tokens (§5.4),
// signs and verifies receipts (§5.6) and consent sessions (typ
// pact-consent+jwt, the consent page's signed state in signed-assertion
// mode), all with the Provider's ES256 keys. Each kind has its own typ and
// its own validator, and no validator accepts another kind's typ.
//
// A delegation token is a compact JWS with the protected header
// {"alg":"ES256","kid":…,"typ":"at+jwt"} and the claims iss
// ({interfaceUrl}/oauth), sub (the User's id at the Brand), aud (the
// interface URL), client_id (the PA's issuer), scope (space-separated),
// grant_id, jti (128 random bits, unique per token: RFC 9068 §2.2 requires
// it although the PACT reference omits it), iat, exp (at most 1 h after
// iat) and, for resource-bound grants, authorization_details.
//
// [Verifier.Verify] checks, in this order, and refuses with an [*Error]
// naming the first rule broken: the size (8 KiB) before any decoding;
// exactly three strict base64url segments (no padding, whitespace or line
// breaks: package jws, the one compact-JWS core) and a header of unique
// members; alg exactly ES256 (before any key is
// touched); typ exactly at+jwt, so a consent session (pact-consent+jwt) or
// a receipt (pact-receipt+jws) signed by the same key never passes; no
// header member but alg, kid and typ (so no jwk, jku, x5u, x5c, crit or
// b64); a kid that names a published Provider key; the signature (raw
// R||S, low S only); aud and then iss single strings equal to the
// expected ones (and iss = aud + "/oauth" always); exp present and in the future with
// no clock skew allowed (the reference applies none, and the same
// Provider mints and checks); iat present, not more than 30 s in the
// future (replica clocks) and at most 1 h before exp; client_id equal to
// the expected PA issuer when one is given; grant_id, sub and scope
// present; jti, when present, 1 to 256 printable ASCII bytes (a token
// without one was minted before pactd added it and lives at most 1 h).
//
// Verify does not know grants: whether the grant is still live (not
// revoked, not expired, of this Brand and client, with this Brand user)
// is the caller's check against the store.
package delegtoken

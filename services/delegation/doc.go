// Package delegation implements pact.v1.DelegationService: the OAuth 2.0
// device-grant authorization server of PACT Delegated (spec §5), one per
// Brand, with the PA as the OAuth client and the PA JWT as its client
// authentication.
//
// # Parts
//
// The Service is the Connect handler: each method hands the call to its
// part, a subpackage, and every part shares one base.Env (collaborators,
// clock, faults, Brand loading, the PA's client authentication, audit):
//
//   - device: the device authorization endpoint (StartDeviceAuthorization);
//   - token: token issuance and revocation (IssueDelegation, RevokeToken);
//   - grants: ListGrants, RevokeGrant, the action guard CheckGrant and
//     PurgeExpired;
//   - stepup: StartStepUp;
//   - consent: the consent page (DescribeConsent, ApproveConsent,
//     DenyConsent), consent sessions (BeginConsent), the connected page
//     (BeginConnected, RevokeConnected) and Brand login assertions;
//   - skip: the consent-skipping rule (which grant covers a request);
//   - codes: device codes, refresh tokens, user codes, the scope parameter.
//
// The guessing limits are core/guesslimit's, the Brand login assertion
// verifier token/brandassert's, and the OAuth wire form (error JSON,
// challenges) internal/oauthwire's.
//
// # Refusals
//
// The PA-facing RPCs (StartDeviceAuthorization, IssueDelegation,
// RevokeToken) answer protocol refusals as normal responses carrying a
// pact.v1.OAuthError with the HTTP status, WWW-Authenticate and JSON body a
// frontend sends as is. Every one first runs, in this order:
//
//   - PA JWT missing or refused → bare 401, WWW-Authenticate: Bearer
//     realm="a2a", no body (the reason goes to the log only);
//   - client_id ≠ the PA JWT's iss → 401 invalid_client (401, not 400: the
//     PA's client turns a non-401 into an OAuth error, the suite expects an
//     HTTP error);
//   - unknown Brand → bare 404 (as every route of an unknown Brand; a
//     response field, not an RPC error, so the frontend needs no mapping);
//   - Brand without delegation → 400 unauthorized_client.
//
// RPC errors are for malformed calls (InvalidArgument) and infrastructure
// (Unavailable, the cause logged once).
//
// # Consent
//
// DescribeConsent, ApproveConsent and DenyConsent are called by the
// authenticated frontend that serves the consent page. In
// BRAND_LOGIN_MODE_TRUSTED_FRONTEND the frontend passes the Brand user id
// it established. Decisions are pending-only guarded updates: deciding
// twice, after expiry or after redemption is FailedPrecondition and changes
// nothing.
//
// # Signed Brand login assertions
//
// In BRAND_LOGIN_MODE_SIGNED_ASSERTION (and UNSPECIFIED, which means it)
// ApproveConsent and DenyConsent need brand_assertion, the single-use JWT
// the Brand's login posted (spec §2.5), and refuse brand_user: the User is
// the assertion's sub. Verification runs before the user code is looked
// up, by package brandassert, in this order (the first failure is reported as a
// pact.v1.BrandAssertionRefusal, the ErrorInfo reason of the error):
//
//   - at most brandassert.MaxBytes (8 KiB) before anything is decoded;
//     three segments of strict base64url; header and claims JSON objects of
//     unique members [MALFORMED, InvalidArgument];
//   - alg ES256 or RS256, judged before any key is touched [ALGORITHM,
//     InvalidArgument]; no jwk, jku, x5u, x5c, crit, b64, zip or enc
//     [FORBIDDEN_HEADER, InvalidArgument]; typ is ignored;
//   - the key by kid from the Brand's assertion_jwks_uri through BrandKeys
//     (the server's hardened JWKS client), refetched once for an unknown
//     kid; no kid, an unknown kid or a key of another type [UNKNOWN_KEY];
//     keys not obtainable [KEYS_UNAVAILABLE, Unavailable];
//   - the signature (ES256 raw R||S, RS256 PKCS #1 v1.5) [SIGNATURE];
//   - iss == the Brand's assertion_issuer exactly [ISSUER]; aud == the
//     consent URL {PublicURL}/a2a/{brandId}/oauth/consent as one string
//     [AUDIENCE]; sub 1 to 256 bytes without control characters [SUBJECT];
//   - iat present and at most brandassert.Skew (30 s) ahead, nbf likewise
//     [NOT_YET_VALID]; exp present and at most 30 s past [EXPIRED];
//     exp - iat in (0, 300 s] [LIFETIME]; now - iat at most
//     brandassert.MaxAge (300 s) [TOO_OLD];
//   - jti 1 to 256 bytes, email (optional) a string [CLAIMS];
//   - user_code present [USER_CODE_MISSING] and, normalized, equal to the
//     request's [USER_CODE_MISMATCH].
//
// Single use: the jti is recorded per Brand (used_brand_assertions, kept
// until exp + 30 s, then pruned by PurgeExpired) with an insert-if-absent
// in the same transaction as the decision, first. A replayed jti
// [REPLAYED] and a decision on an authorization that is no longer pending
// [NOT_PENDING] both change nothing, and the latter does not use the
// assertion up. Of concurrent posts of one assertion exactly one decides.
// The other refusals are FailedPrecondition. Refusals are logged with the
// reason (and kid and jti once verified), never the assertion or the code.
//
// # Consent sessions
//
// A frontend that keeps no cookie state for a signed-assertion Brand calls
// BeginConsent with the assertion the Brand's login posted: it is verified
// as above (the user code from its claim), the authorization must be
// pending (NOT_PENDING, not used up), its jti is recorded (REPLAYED), and
// the answer carries a consent session: a Provider-signed JWT (typ
// pact-consent+jwt, iss {interfaceUrl}/oauth, aud the decision URL
// {interfaceUrl}/oauth/consent/decision, sub, user_code, email, jti, iat,
// exp 600 s but never past the authorization). ApproveConsent and
// DenyConsent take it as consent_session instead of brand_assertion. It is
// verified by its own validator (delegtoken.VerifyConsentSession), which
// refuses every other typ, as the delegation-token and receipt validators
// refuse it; refusals are pact.v1.ConsentSessionRefusal reasons. A session
// is not tracked: the pending-only decision update lets it decide once,
// and a second decision is NOT_PENDING.
//
// # Guessing user codes
//
// User codes (8 of 20 consonants, ≈34.6 bits, 10 minutes) are guarded
// against guessing per Brand by core/guesslimit, counted in the store so
// every replica counts against the same limit: at most
// guesslimit.DefaultGuessLimit failed lookups per
// guesslimit.DefaultGuessWindow (20 a minute). A call that names its
// source (the client the frontend saw) is also limited per (Brand,
// source): guesslimit.DefaultSourceGuessLimit failures per window. A
// lookup is counted before the store is asked for the code (so concurrent
// guesses cannot all pass) and given back when the code is found. While a
// limit is exhausted the lookup is ResourceExhausted with RetryInfo —
// except that a source which has not failed in the window is never stopped
// by the Brand's limit, so other clients' guesses cannot lock a User with
// the right code out. Each failed lookup is logged (Brand, operation,
// source) without the code.
//
// # Pending authorizations
//
// A PA may hold at most guesslimit.DefaultMaxPendingPerAgentBrand pending,
// unexpired device authorizations at one Brand and
// guesslimit.DefaultMaxPendingPerAgent in all; over a bound the device
// authorization endpoint answers 400 invalid_request and stores nothing.
//
// # Secrets
//
// Device codes ("dc_" + 32 random bytes, base64url) and refresh tokens
// ("rt_" + 32 bytes) are stored as SHA-256 only; user codes as SHA-256 over
// the Brand and the normalized code. No code or token is ever logged.
//
// # Resource-bound delegation (§5.7, RFC 9396)
//
// authorization_details is checked strictly against the Brand's declared
// types at the device authorization (anything else is
// invalid_authorization_details and stores nothing), stored canonical with
// the scope each entry's type required then, shown at consent in pactd's
// words under that scope, cut to the granted scopes on approval by it,
// judged by it when consent is skipped (skip.go), and carried unchanged by
// the token response, the token and every refresh (details.go,
// token/authzdetails). A Brand's later change of a type's scope moves no
// accepted entry.
package delegation

// Package delegation implements pact.v1.DelegationService: the OAuth 2.0
// device-grant authorization server of PACT Delegated (spec §5), one per
// Brand, with the PA as the OAuth client and the PA JWT as its client
// authentication.
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
// it established. BRAND_LOGIN_MODE_SIGNED_ASSERTION (and UNSPECIFIED, which
// means it) is not verified yet: ApproveConsent answers Unimplemented.
// Decisions are pending-only guarded updates: deciding twice, after expiry
// or after redemption is FailedPrecondition and changes nothing.
//
// User codes (8 of 20 consonants, ≈34.6 bits, 10 minutes) are guarded
// against guessing per Brand, in memory per replica: at most
// DefaultGuessBurst failed lookups in a burst, then one per DefaultGuessEvery
// (20 + 1,200 in the first hour). While a Brand is over the limit, every
// lookup there is ResourceExhausted with RetryInfo before the store is
// asked. Each failed lookup is logged (Brand, operation) without the code.
//
// # Secrets
//
// Device codes ("dc_" + 32 random bytes, base64url) and refresh tokens
// ("rt_" + 32 bytes) are stored as SHA-256 only; user codes as SHA-256 over
// the Brand and the normalized code. No code or token is ever logged.
//
// # Not supported
//
// authorization_details (RFC 9396, §5.7): any value is refused with
// invalid_authorization_details, never silently dropped. Consent skipping
// is not implemented. Verification of signed Brand login assertions is not
// implemented.
package delegation

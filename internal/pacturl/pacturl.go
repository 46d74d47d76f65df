// Package pacturl builds the public URLs PACT fixes for a Brand, so every
// service derives them the same way from PACT_PUBLIC_URL and the Brand id.
package pacturl

import (
	"net/url"
	"strings"
)

// Interface is the Brand's A2A interface URL: {publicURL}/a2a/{brandID}. It
// is the aud of delegation tokens and the brand of receipts.
func Interface(publicURL, brandID string) string { return publicURL + "/a2a/" + brandID }

// OAuthIssuer is the Brand's authorization server: {interface}/oauth. It is
// the iss of delegation tokens.
func OAuthIssuer(publicURL, brandID string) string {
	return Interface(publicURL, brandID) + OAuthSuffix
}

// OAuthSuffix turns an interface URL into its authorization server's.
const OAuthSuffix = "/oauth"

// Consent is the Provider's consent page of a Brand: {oauthIssuer}/consent,
// that is {publicURL}/a2a/{brandID}/oauth/consent. The Brand's login returns
// the User there, and it is the aud of the Brand's signed login assertions.
func Consent(publicURL, brandID string) string { return OAuthIssuer(publicURL, brandID) + "/consent" }

// ConsentDecision is where the consent page's form posts the User's
// decision: {consent}/decision. It is the aud of consent sessions.
func ConsentDecision(publicURL, brandID string) string {
	return Consent(publicURL, brandID) + "/decision"
}

// Connected is the Provider's connected page of a Brand:
// {oauthIssuer}/connected. A signed-assertion Brand's login returns the
// User there with an assertion whose aud it is, and it is the aud of
// connected sessions.
func Connected(publicURL, brandID string) string {
	return OAuthIssuer(publicURL, brandID) + "/connected"
}

// Verification is the Brand login link without a user code,
// {loginURL}/login?return_to={consentURL} (the return target
// query-escaped); loginURL's trailing slashes are dropped.
func Verification(loginURL, consentURL string) string {
	return strings.TrimRight(loginURL, "/") + "/login?return_to=" + url.QueryEscape(consentURL)
}

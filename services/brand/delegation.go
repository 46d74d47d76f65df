package brand

import (
	"strings"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/bounds"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/scopeid"
	"pactd.dev/pactd/internal/urlrule"
)

// Bounds of delegation settings.
const (
	// MaxScopes is the most scopes a Brand may define.
	MaxScopes = bounds.Scopes
	// MaxScopeDescription bounds the consent text of one scope.
	MaxScopeDescription = 500
)

// checkDelegation validates delegation settings; every broken rule becomes
// a field violation under field. Settings that are present but disabled are
// checked too, for whatever they contain. When enabled they need 1 to 50
// scopes, a login_url, and for BRAND_LOGIN_MODE_SIGNED_ASSERTION (which
// UNSPECIFIED means) an assertion_issuer and assertion_jwks_uri. URLs
// follow urlrule: https with a public host, http to loopback only with Dev,
// no user info, query or fragment.
func (s *Service) checkDelegation(v *rpcerr.Violations, field string, d *pactv1.DelegationSettings) {
	if d == nil {
		return
	}
	f := func(name string) string { return field + "." + name }
	scopes := d.GetScopes()
	switch {
	case len(scopes) > MaxScopes:
		v.Add(f("scopes"), "at most %d scopes", MaxScopes)
	case d.GetEnabled() && len(scopes) == 0:
		v.Add(f("scopes"), "name at least one scope when delegation is enabled")
	}
	seen := make(map[string]bool, len(scopes))
	for i, sc := range scopes {
		sf := func(name string) string { return f("scopes") + "[" + itoa(i) + "]." + name }
		switch id := sc.GetId(); {
		case !scopeid.Valid(id):
			v.Add(sf("id"), `must be 1 to %d printable ASCII characters other than space, '"' and '\'`, scopeid.MaxLen)
		case seen[id]:
			v.Add(sf("id"), "duplicates an earlier scope id")
		default:
			seen[id] = true
		}
		if strings.TrimSpace(sc.GetDescription()) == "" {
			v.Add(sf("description"), "is required")
		} else {
			checkText(v, sf("description"), sc.GetDescription(), MaxScopeDescription)
		}
	}
	policy := urlrule.Policy{Dev: s.d.Dev}
	checkURL := func(name, raw string, required bool) {
		if raw == "" && !required {
			return
		}
		if _, err := policy.Check(raw, false); err != nil {
			v.Add(f(name), "%s", err.Error())
		}
	}
	checkURL("login_url", d.GetLoginUrl(), d.GetEnabled())
	mode := d.GetLoginMode()
	if _, ok := pactv1.BrandLoginMode_name[int32(mode)]; !ok {
		v.Add(f("login_mode"), "must be BRAND_LOGIN_MODE_SIGNED_ASSERTION or BRAND_LOGIN_MODE_TRUSTED_FRONTEND")
		return
	}
	signed := mode != pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND
	checkURL("assertion_issuer", d.GetAssertionIssuer(), d.GetEnabled() && signed)
	checkURL("assertion_jwks_uri", d.GetAssertionJwksUri(), d.GetEnabled() && signed)
	checkDetailsTypes(v, f("authorization_details_types"), d)
}

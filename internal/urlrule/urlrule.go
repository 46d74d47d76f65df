// Package urlrule holds the rules pactd applies to URLs it is given at
// onboarding: agent issuers, JWKS URIs and Brand URLs. The rules are checked
// before anything is stored; the JWKS client enforces the address rule
// (IsPublicAddr, the one rule for both) again at dial time, so a name that
// later resolves somewhere private still fails.
package urlrule

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"
)

// MaxURLLength bounds every URL pactd stores.
const MaxURLLength = 2048

// Errors name the rule a URL broke.
var (
	ErrEmpty         = errors.New("is required")
	ErrTooLong       = errors.New("must be at most 2048 bytes")
	ErrNotAbsolute   = errors.New("must be an absolute URL with a host")
	ErrScheme        = errors.New("must use https (http only to a loopback host when pactd runs with PACT_DEV=true)")
	ErrQueryFragment = errors.New("must not have a query or fragment")
	ErrUserinfo      = errors.New("must not contain user info")
	ErrPrivateHost   = errors.New("must not name a private, loopback, link-local or internal host")
	ErrControl       = errors.New("must not contain control characters or spaces")
)

// Policy says which relaxations are in force.
type Policy struct {
	// Dev allows http:// to loopback hosts (127.0.0.0/8, ::1, localhost).
	Dev bool
	// AllowHosts names hosts (names, case-insensitive, or IP literals)
	// whose https URLs may be loopback, private or internal
	// (PACT_JWKS_ALLOW_HOSTS): PAs an operator runs inside the network.
	AllowHosts []string
}

// allowed reports whether host is one of p.AllowHosts.
func (p Policy) allowed(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	ha, herr := netip.ParseAddr(h)
	for _, x := range p.AllowHosts {
		x = strings.TrimSuffix(strings.ToLower(x), ".")
		if xa, err := netip.ParseAddr(x); err == nil && herr == nil {
			if xa.Unmap() == ha.Unmap() {
				return true
			}
			continue
		}
		if x == h {
			return true
		}
	}
	return false
}

// Check validates an https URL that pactd will fetch from or hand out: an
// absolute URL with a public host, https (or http to loopback under Dev), no
// user info. allowQuery permits a query string (never a fragment).
func (p Policy) Check(raw string, allowQuery bool) (*url.URL, error) {
	if raw == "" {
		return nil, ErrEmpty
	}
	if err := Text(raw); err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return nil, ErrNotAbsolute
	}
	if u.User != nil {
		return nil, ErrUserinfo
	}
	if u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#") || (!allowQuery && (u.RawQuery != "" || u.ForceQuery)) {
		return nil, ErrQueryFragment
	}
	loop := IsLoopbackHost(u.Hostname())
	switch u.Scheme {
	case "https":
		if p.allowed(u.Hostname()) {
			return u, nil // the operator named this host
		}
		if loop && !p.Dev {
			return nil, ErrPrivateHost
		}
	case "http":
		if !(p.Dev && loop) {
			return nil, ErrScheme
		}
	default:
		return nil, ErrScheme
	}
	if !loop && !IsPublicHost(u.Hostname()) {
		return nil, ErrPrivateHost
	}
	return u, nil
}

// Text checks what every URL-like string pactd stores must be, URL or not
// (an audience may be any string): at most MaxURLLength bytes of valid
// UTF-8 without spaces or control characters.
func Text(raw string) error {
	if len(raw) > MaxURLLength {
		return ErrTooLong
	}
	if !utf8.ValidString(raw) || strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return ErrControl
	}
	return nil
}

// IsLoopbackHost reports whether host is localhost or a loopback address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// IsPublicHost reports whether a host name or address may be a public
// destination: IP literals must pass IsPublicAddr, and names without a dot
// or under one of internalSuffixes are refused. The JWKS client applies the
// same name rule (IsInternalName) to the URIs it fetches (jose.CheckURI).
func IsPublicHost(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		return IsPublicAddr(a)
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return strings.Contains(h, ".") && !IsInternalName(h)
}

// IsInternalName reports whether a lower-case host name without a trailing
// dot ends in one of internalSuffixes: a name that is never public.
func IsInternalName(name string) bool {
	for _, suffix := range internalSuffixes {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// internalSuffixes end the names that are never public: mDNS (.local),
// RFC 6761 and 6762 special-use names (.localhost, .home.arpa), and the
// names private networks use by convention (.internal, .lan, .localdomain).
var internalSuffixes = [...]string{".local", ".internal", ".localhost", ".home.arpa", ".lan", ".localdomain"}

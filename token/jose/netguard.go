package jose

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"pactd.dev/pactd/internal/urlrule"
)

// MaxURIBytes bounds the length of a JWKS URI.
const MaxURIBytes = 2048

// CheckURI parses a JWKS URI and applies the transport policy: an absolute
// https URL without userinfo or fragment, whose host is a DNS name with at
// least one dot (not an internal name, urlrule.IsInternalName) or an IP
// literal that [CheckAddress] allows. Plain http, and the host "localhost",
// are accepted only when allowLoopbackHTTP is set, and http then only for
// "localhost" or a loopback IP literal. Errors wrap [ErrInvalidURI].
//
// CheckURI involves no network traffic; the dial guard still checks every
// address the name resolves to at connection time.
func CheckURI(raw string, allowLoopbackHTTP bool) (*url.URL, error) {
	return checkURI(raw, allowLoopbackHTTP, func(string) bool { return false })
}

// hostListed reports whether host (a URL hostname) is in hosts: names
// compared case-insensitively without a trailing dot, IP literals as
// addresses.
func hostListed(hosts []string, host string) bool {
	if len(hosts) == 0 {
		return false
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	ha, hIP := parseHostIP(h)
	for _, x := range hosts {
		x = strings.TrimSuffix(strings.ToLower(x), ".")
		if xa, ok := parseHostIP(x); ok && hIP {
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

// checkURI is CheckURI with an exemption: for a host exempt reports, an
// https URI passes the structural rules alone (no name or address rules).
func checkURI(raw string, allowLoopbackHTTP bool, exempt func(host string) bool) (*url.URL, error) {
	fail := func(why string) (*url.URL, error) {
		return nil, fmt.Errorf("%w: %s", ErrInvalidURI, why)
	}
	if raw == "" || len(raw) > MaxURIBytes {
		return fail("empty or too long")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fail("not a URL")
	}
	if !u.IsAbs() || u.Opaque != "" {
		return fail("not an absolute hierarchical URL")
	}
	if u.User != nil {
		return fail("userinfo not allowed")
	}
	if u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#") {
		return fail("fragment not allowed")
	}
	host := u.Hostname()
	if host == "" {
		return fail("no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fail("bad port")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return fail("empty port")
	}
	addr, isIP := parseHostIP(host)
	loopbackHost := strings.EqualFold(host, "localhost") || (isIP && addr.Unmap().IsLoopback())
	switch strings.ToLower(u.Scheme) {
	case "https":
		if exempt(host) {
			if addr.Zone() != "" {
				return fail("zoned IPv6 address")
			}
			return u, nil
		}
	case "http":
		if !allowLoopbackHTTP || !loopbackHost {
			return fail("http is allowed only to loopback in development")
		}
	default:
		return fail("scheme must be https")
	}
	if isIP {
		if addr.Zone() != "" {
			return fail("zoned IPv6 address")
		}
		if err := CheckAddress(addr, allowLoopbackHTTP); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidURI, err)
		}
		return u, nil
	}
	if strings.Contains(u.Host, "[") {
		return fail("bad IPv6 literal")
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "localhost" {
		if !allowLoopbackHTTP {
			return fail("localhost is allowed only in development")
		}
		return u, nil
	}
	if !strings.Contains(name, ".") {
		return fail("single-label host name")
	}
	if urlrule.IsInternalName(name) { // the onboarding rule for names
		return fail("internal host name")
	}
	return u, nil
}

// parseHostIP parses a URL hostname as an IP literal.
func parseHostIP(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a, true
}

// CheckAddress reports whether the dial guard allows connecting to addr:
// urlrule.IsPublicAddr, the address rule onboarding applies too (private,
// loopback, link-local, CGNAT, multicast, RFC 6890 special-purpose,
// documentation, benchmarking and reserved addresses, zoned and
// IPv4-compatible addresses, and the IPv4-mapped, NAT64 and 6to4 forms of
// refused IPv4 addresses are refused), except that loopback addresses
// (127/8, ::1) are allowed when allowLoopback is set. The error wraps
// [ErrForbiddenAddress].
func CheckAddress(addr netip.Addr, allowLoopback bool) error {
	if !addr.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrForbiddenAddress)
	}
	if addr.Zone() != "" {
		return fmt.Errorf("%w: zoned address %s", ErrForbiddenAddress, addr)
	}
	a := addr.Unmap()
	// The embedded form never gets the loopback allowance.
	if v4, ok := urlrule.EmbeddedIPv4(a); ok && !urlrule.IsPublicAddr(v4) {
		return refused(v4, addr)
	}
	if a.IsLoopback() && allowLoopback {
		return nil
	}
	if !urlrule.IsPublicAddr(a) {
		return refused(a, addr)
	}
	return nil
}

// refused is the dial guard's error for a, a non-public address (orig, or
// the IPv4 address orig embeds).
func refused(a, orig netip.Addr) error {
	if a.IsLoopback() {
		return fmt.Errorf("%w: loopback %s", ErrForbiddenAddress, orig)
	}
	return fmt.Errorf("%w: non-public %s", ErrForbiddenAddress, orig)
}

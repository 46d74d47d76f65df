package jose

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxURIBytes bounds the length of a JWKS URI.
const MaxURIBytes = 2048

// CheckURI parses a JWKS URI and applies the transport policy: an absolute
// https URL without userinfo or fragment, whose host is a DNS name with at
// least one dot (not .local, .internal, .localhost or .home.arpa) or an IP
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
	for _, suffix := range [...]string{".localhost", ".local", ".internal", ".home.arpa", ".localdomain"} {
		if strings.HasSuffix(name, suffix) {
			return fail("internal host name")
		}
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

// forbiddenPrefix reports whether a (already unmapped) address falls in a
// range that is not globally reachable: RFC 6890 special-purpose ranges, and
// documentation, benchmarking and reserved space.
func forbiddenPrefix(a netip.Addr) bool {
	if a.Is4() {
		b := a.As4()
		switch {
		case b[0] == 0: // 0.0.0.0/8 "this network"
			return true
		case b[0] == 100 && b[1]&0xc0 == 64: // 100.64.0.0/10 CGNAT
			return true
		case b[0] == 192 && b[1] == 0 && b[2] == 0: // 192.0.0.0/24 IETF assignments
			return true
		case b[0] == 192 && b[1] == 0 && b[2] == 2: // 192.0.2.0/24 TEST-NET-1
			return true
		case b[0] == 198 && b[1]&0xfe == 18: // 198.18.0.0/15 benchmarking
			return true
		case b[0] == 198 && b[1] == 51 && b[2] == 100: // 198.51.100.0/24 TEST-NET-2
			return true
		case b[0] == 203 && b[1] == 0 && b[2] == 113: // 203.0.113.0/24 TEST-NET-3
			return true
		case b[0] >= 240: // 240.0.0.0/4 reserved, 255.255.255.255 broadcast
			return true
		}
		return false
	}
	b := a.As16()
	var zero [12]byte
	switch {
	case [12]byte(b[:12]) == zero: // ::/96 unspecified, loopback, IPv4-compatible (deprecated)
		return true
	case b[0] == 0x01 && b[1] == 0 && b[2] == 0 && b[3] == 0 && b[4] == 0 && b[5] == 0 && b[6] == 0 && b[7] == 0: // 100::/64 discard
		return true
	case b[0] == 0x20 && b[1] == 0x01 && b[2]&0xfe == 0: // 2001::/23 IETF assignments (Teredo, ORCHID, ...)
		return true
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8: // 2001:db8::/32 documentation
		return true
	case b[0] == 0x3f && b[1] == 0xff && b[2]&0xf0 == 0: // 3fff::/20 documentation
		return true
	case b[0] == 0xfe && b[1]&0xc0 == 0xc0: // fec0::/10 site-local (deprecated)
		return true
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1: // 64:ff9b:1::/48 local NAT64
		return true
	}
	return false
}

// embeddedIPv4 returns the IPv4 address embedded in NAT64 (64:ff9b::/96)
// and 6to4 (2002::/16) IPv6 addresses.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	isZero := func(bs []byte) bool {
		for _, x := range bs {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12]):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// CheckAddress reports whether the dial guard allows connecting to addr. It
// refuses unspecified, private (RFC 1918, fc00::/7), link-local (169.254/16,
// fe80::/10), CGNAT (100.64/10), multicast, 0.0.0.0/8, broadcast,
// documentation, benchmarking and reserved addresses, zoned addresses,
// IPv4-compatible IPv6 addresses (::/96), and the IPv4-mapped, NAT64 and
// 6to4 forms of refused IPv4 addresses. Loopback addresses (127/8, ::1) are allowed only when
// allowLoopback is set. The error wraps [ErrForbiddenAddress].
func CheckAddress(addr netip.Addr, allowLoopback bool) error {
	if !addr.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrForbiddenAddress)
	}
	if addr.Zone() != "" {
		return fmt.Errorf("%w: zoned address %s", ErrForbiddenAddress, addr)
	}
	a := addr.Unmap()
	if a.Is6() {
		if v4, ok := embeddedIPv4(a); ok {
			// The embedded form never gets the loopback allowance.
			if err := checkPlain(v4, false, addr); err != nil {
				return err
			}
		}
	}
	return checkPlain(a, allowLoopback, addr)
}

func checkPlain(a netip.Addr, allowLoopback bool, orig netip.Addr) error {
	switch {
	case a.IsLoopback():
		if allowLoopback {
			return nil
		}
		return fmt.Errorf("%w: loopback %s", ErrForbiddenAddress, orig)
	case a.IsUnspecified(), a.IsMulticast(), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(),
		a.IsInterfaceLocalMulticast(), a.IsPrivate(), !a.IsGlobalUnicast(), forbiddenPrefix(a):
		return fmt.Errorf("%w: non-public %s", ErrForbiddenAddress, orig)
	}
	return nil
}

package urlrule

import "net/netip"

// IsPublicAddr reports whether an address is a public unicast destination:
// the one address rule, applied at onboarding (Check) and by the JWKS
// client's dial guard (jose.CheckAddress) to every address it connects to.
// It refuses invalid and zoned addresses, loopback, unspecified, multicast,
// link-local, private (RFC 1918, fc00::/7) and every range of the RFC 6890
// special-purpose registries that is not globally reachable: 0.0.0.0/8,
// CGNAT 100.64.0.0/10, 192.0.0.0/24, the documentation ranges,
// benchmarking 198.18.0.0/15, reserved 240.0.0.0/4 and broadcast; ::/96,
// 100::/64, 2001::/23, 2001:db8::/32, 3fff::/20, site-local fec0::/10 and
// local NAT64 64:ff9b:1::/48. IPv4-mapped IPv6 addresses are judged as
// IPv4, and a NAT64 or 6to4 address also by the IPv4 address it embeds.
func IsPublicAddr(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if v4, ok := EmbeddedIPv4(a); ok && !publicPlain(v4) {
		return false
	}
	return publicPlain(a)
}

// publicPlain is IsPublicAddr for a valid, unzoned, unmapped address,
// without looking inside NAT64 and 6to4 forms.
func publicPlain(a netip.Addr) bool {
	switch {
	case a.IsLoopback(), a.IsUnspecified(), a.IsMulticast(), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(),
		a.IsInterfaceLocalMulticast(), a.IsPrivate(), !a.IsGlobalUnicast(), specialPurpose(a):
		return false
	}
	return true
}

// specialPurpose reports whether a (already unmapped) address falls in a
// range that is not globally reachable: RFC 6890 special-purpose ranges, and
// documentation, benchmarking and reserved space.
func specialPurpose(a netip.Addr) bool {
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

// EmbeddedIPv4 returns the IPv4 address embedded in an (unmapped) NAT64
// (64:ff9b::/96) or 6to4 (2002::/16) IPv6 address; ok is false for any
// other address.
func EmbeddedIPv4(a netip.Addr) (v4 netip.Addr, ok bool) {
	if !a.Is6() || a.Is4In6() {
		return netip.Addr{}, false
	}
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

package jose_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"pactd.dev/pactd/internal/urlrule"
	"pactd.dev/pactd/token/jose"
)

func TestCheckAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr          string
		allowLoopback bool
		ok            bool
	}{
		{"93.184.216.34", false, true},
		{"8.8.8.8", false, true},
		{"2606:2800:220:1:248:1893:25c8:1946", false, true},
		{"::ffff:93.184.216.34", false, true},
		{"64:ff9b::5db8:d822", false, true}, // NAT64 of a public address
		{"127.0.0.1", true, true},
		{"127.5.6.7", true, true},
		{"::1", true, true},
		{"::ffff:127.0.0.1", true, true},

		{"127.0.0.1", false, false},
		{"::1", false, false},
		{"::ffff:127.0.0.1", false, false},
		{"10.0.0.1", false, false},
		{"10.0.0.1", true, false},
		{"172.16.0.1", false, false},
		{"172.31.255.255", false, false},
		{"192.168.0.1", false, false},
		{"169.254.169.254", false, false},
		{"169.254.169.254", true, false},
		{"100.64.0.1", false, false},
		{"100.127.255.255", false, false},
		{"0.0.0.0", false, false},
		{"0.1.2.3", false, false},
		{"224.0.0.1", false, false},
		{"239.255.255.250", false, false},
		{"255.255.255.255", false, false},
		{"240.0.0.1", false, false},
		{"192.0.0.1", false, false},
		{"192.0.2.1", false, false},
		{"198.18.0.1", false, false},
		{"198.51.100.1", false, false},
		{"203.0.113.1", false, false},
		{"::", false, false},
		{"fc00::1", false, false},
		{"fd12:3456::1", false, false},
		{"fe80::1", false, false},
		{"fec0::1", false, false},
		{"ff02::1", false, false},
		{"2001:db8::1", false, false},
		{"2001::1", false, false},    // Teredo
		{"100::1", false, false},     // discard
		{"::10.0.0.1", false, false}, // IPv4-compatible
		{"::8.8.8.8", false, false},  // IPv4-compatible, deprecated
		{"::ffff:10.0.0.1", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"::ffff:100.64.0.1", false, false},
		{"::ffff:0.0.0.0", false, false},
		{"64:ff9b::a00:1", false, false},    // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", true, false},    // NAT64 of loopback: never allowed
		{"64:ff9b:1::1", false, false},      // local-use NAT64
		{"2002:a9fe:a9fe::1", false, false}, // 6to4 of 169.254.169.254
		{"fe80::1%eth0", false, false},
	}
	for _, tt := range tests {
		name := "fail/"
		if tt.ok {
			name = "ok/"
		}
		name += strings.ReplaceAll(tt.addr, ":", "_")
		if tt.allowLoopback {
			name += "/dev"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := jose.CheckAddress(netip.MustParseAddr(tt.addr), tt.allowLoopback)
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok && !errors.Is(err, jose.ErrForbiddenAddress) {
				t.Fatalf("err = %v, want ErrForbiddenAddress", err)
			}
		})
	}
	if err := jose.CheckAddress(netip.Addr{}, true); !errors.Is(err, jose.ErrForbiddenAddress) {
		t.Fatalf("zero Addr: %v", err)
	}
}

func TestCheckURI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		uri  string
		dev  bool
		ok   bool
	}{
		{name: "ok/https-name", uri: "https://pa.example.com/.well-known/jwks.json", ok: true},
		{name: "ok/https-port-query", uri: "https://pa.example.com:8443/jwks?v=2", ok: true},
		{name: "ok/https-public-ip", uri: "https://93.184.216.34/jwks", ok: true},
		{name: "ok/dev-http-localhost", uri: "http://localhost:8080/jwks", dev: true, ok: true},
		{name: "ok/dev-http-127", uri: "http://127.0.0.1:8080/jwks", dev: true, ok: true},
		{name: "ok/dev-http-v6-loopback", uri: "http://[::1]:8080/jwks", dev: true, ok: true},
		{name: "ok/dev-https-localhost", uri: "https://localhost/jwks", dev: true, ok: true},

		{name: "fail/http-name", uri: "http://pa.example.com/jwks"},
		{name: "fail/dev-http-name", uri: "http://pa.example.com/jwks", dev: true},
		{name: "fail/dev-http-private-ip", uri: "http://10.0.0.1/jwks", dev: true},
		{name: "fail/http-localhost-no-dev", uri: "http://localhost/jwks"},
		{name: "fail/https-localhost-no-dev", uri: "https://localhost/jwks"},
		{name: "fail/https-loopback-no-dev", uri: "https://127.0.0.1/jwks"},
		{name: "fail/https-private-ip", uri: "https://192.168.1.10/jwks"},
		{name: "fail/https-metadata-ip", uri: "https://169.254.169.254/jwks"},
		{name: "fail/https-mapped-ip", uri: "https://[::ffff:10.0.0.1]/jwks"},
		{name: "fail/zoned-v6", uri: "https://[fe80::1%25eth0]/jwks"},
		{name: "fail/ftp", uri: "ftp://pa.example.com/jwks"},
		{name: "fail/file", uri: "file:///etc/passwd"},
		{name: "fail/relative", uri: "/jwks"},
		{name: "fail/empty", uri: ""},
		{name: "fail/userinfo", uri: "https://user:pw@pa.example.com/jwks"},
		{name: "fail/fragment", uri: "https://pa.example.com/jwks#x"},
		{name: "fail/no-host", uri: "https:///jwks"},
		{name: "fail/bad-port", uri: "https://pa.example.com:99999/jwks"},
		{name: "fail/empty-port", uri: "https://pa.example.com:/jwks"},
		{name: "fail/single-label", uri: "https://intranet/jwks"},
		{name: "fail/dot-local", uri: "https://printer.local/jwks"},
		{name: "fail/dot-internal", uri: "https://metadata.google.internal/jwks"},
		{name: "fail/dot-localhost", uri: "https://a.localhost/jwks"},
		{name: "fail/dot-lan", uri: "https://pa.lan/jwks"},
		{name: "fail/dot-localdomain", uri: "https://pa.localdomain/jwks"},
		{name: "ok/lan-inside-a-label", uri: "https://pa.lanes.example/jwks", ok: true},
		{name: "fail/too-long", uri: "https://pa.example.com/" + strings.Repeat("a", 2100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := jose.CheckURI(tt.uri, tt.dev)
			if tt.ok {
				if err != nil || u == nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, jose.ErrInvalidURI) {
				t.Fatalf("err = %v, want ErrInvalidURI", err)
			}
		})
	}
}

// TestDialGuardAndOnboardingAgree: the dial guard and onboarding apply one
// address rule (urlrule.IsPublicAddr), so no address is accepted at
// onboarding and refused at dial time, or the other way round. Loopback is
// the one difference, and only with the development allowance.
func TestDialGuardAndOnboardingAgree(t *testing.T) {
	t.Parallel()
	var addrs []netip.Addr
	for a := 0; a < 256; a++ {
		for _, b := range []byte{0, 1, 18, 19, 20, 51, 64, 127, 168, 254, 255} {
			addrs = append(addrs, netip.AddrFrom4([4]byte{byte(a), b, 2, 1}), netip.AddrFrom4([4]byte{byte(a), b, 100, 1}))
		}
	}
	for _, s := range []string{"2606:2800:220:1::1", "2001:db8::1", "2001::1", "2002:c612::1", "2002:5db8:d822::1",
		"64:ff9b::c612:1", "64:ff9b::5db8:d822", "::ffff:198.18.0.1", "::ffff:240.0.0.1", "fec0::1", "3fff::1", "100::1"} {
		addrs = append(addrs, netip.MustParseAddr(s))
	}
	for _, a := range addrs {
		dial := jose.CheckAddress(a, false) == nil
		if onboard := urlrule.IsPublicAddr(a); dial != onboard {
			t.Errorf("%s: dial guard allows %v, onboarding %v", a, dial, onboard)
		}
	}
	// Positive controls, and the benchmarking and reserved ranges, which are
	// not public although they are outside the private ones.
	for s, want := range map[string]bool{"93.184.216.34": true, "198.20.0.1": true, "198.18.0.1": false, "240.0.0.1": false} {
		if got := urlrule.IsPublicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("IsPublicAddr(%s) = %v, want %v", s, got, want)
		}
	}
}

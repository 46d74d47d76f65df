package urlrule

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	prod, dev := Policy{}, Policy{Dev: true}
	allow := Policy{AllowHosts: []string{"pa.staging.internal", "127.0.0.1", "::1"}}
	cases := []struct {
		name  string
		p     Policy
		raw   string
		query bool
		want  error
	}{
		{"ok/https", prod, "https://pa.example/.well-known/jwks.json", false, nil},
		{"ok/https-port", prod, "https://pa.example:8443/jwks", false, nil},
		{"ok/dev-http-loopback", dev, "http://127.0.0.1:9999/jwks", false, nil},
		{"ok/dev-http-localhost", dev, "http://localhost:9999/jwks", false, nil},
		{"ok/query-allowed", prod, "https://brand.example/login?x=1", true, nil},
		{"ok/allowed-internal-name", allow, "https://PA.staging.internal./jwks", false, nil},
		{"ok/allowed-loopback", allow, "https://127.0.0.1:8443/jwks", false, nil},
		{"ok/allowed-v6-loopback", allow, "https://[::1]:8443/jwks", false, nil},
		{"fail/allowed-host-http", allow, "http://pa.staging.internal/jwks", false, ErrScheme},
		{"fail/allowed-host-userinfo", allow, "https://u@pa.staging.internal/jwks", false, ErrUserinfo},
		{"fail/other-loopback-not-allowed", allow, "https://127.0.0.2/jwks", false, ErrPrivateHost},
		{"fail/other-internal-not-allowed", allow, "https://db.staging.internal/jwks", false, ErrPrivateHost},
		{"fail/empty", prod, "", false, ErrEmpty},
		{"fail/relative", prod, "/jwks.json", false, ErrNotAbsolute},
		{"fail/no-host", prod, "https:///x", false, ErrNotAbsolute},
		{"fail/opaque", prod, "https:pa.example", false, ErrNotAbsolute},
		{"fail/http-public", prod, "http://pa.example/jwks", false, ErrScheme},
		{"fail/http-public-dev", dev, "http://pa.example/jwks", false, ErrScheme},
		{"fail/http-loopback-prod", prod, "http://127.0.0.1/jwks", false, ErrScheme},
		{"fail/https-loopback-prod", prod, "https://127.0.0.1/jwks", false, ErrPrivateHost},
		{"fail/ftp", prod, "ftp://pa.example/jwks", false, ErrScheme},
		{"fail/query", prod, "https://pa.example/jwks?x=1", false, ErrQueryFragment},
		{"fail/empty-query", prod, "https://pa.example/jwks?", false, ErrQueryFragment},
		{"fail/fragment", prod, "https://pa.example/jwks#k", false, ErrQueryFragment},
		{"fail/userinfo", prod, "https://u:p@pa.example/jwks", false, ErrUserinfo},
		{"fail/private-ip", prod, "https://10.1.2.3/jwks", false, ErrPrivateHost},
		{"fail/metadata-ip", prod, "https://169.254.169.254/latest", false, ErrPrivateHost},
		{"fail/cgnat", prod, "https://100.64.1.1/jwks", false, ErrPrivateHost},
		{"fail/v6-ula", prod, "https://[fd00::1]/jwks", false, ErrPrivateHost},
		{"fail/v4-mapped-private", prod, "https://[::ffff:10.0.0.1]/jwks", false, ErrPrivateHost},
		{"fail/dot-local", prod, "https://pa.local/jwks", false, ErrPrivateHost},
		{"fail/dot-internal", prod, "https://pa.internal/jwks", false, ErrPrivateHost},
		{"fail/single-label", prod, "https://intranet/jwks", false, ErrPrivateHost},
		{"fail/dot-lan", prod, "https://pa.lan/jwks", false, ErrPrivateHost},
		{"fail/dot-localdomain", prod, "https://pa.localdomain/jwks", false, ErrPrivateHost},
		{"fail/dot-home-arpa", prod, "https://pa.home.arpa./jwks", false, ErrPrivateHost},
		{"ok/allowed-localdomain", Policy{AllowHosts: []string{"pa.localdomain"}}, "https://pa.localdomain/jwks", false, nil},
		{"ok/lan-inside-a-label", prod, "https://pa.lanes.example/jwks", false, nil},
		{"fail/space", prod, "https://pa.example/a b", false, ErrControl},
		{"fail/newline", prod, "https://pa.example/\njwks", false, ErrControl},
		// The dial guard's ranges: onboarding and the JWKS client's dial guard
		// hold one public-address rule.
		{"ok/public-v4-literal", prod, "https://93.184.216.34/jwks", false, nil},
		{"ok/public-v6-literal", prod, "https://[2606:2800:220:1::1]/jwks", false, nil},
		{"ok/next-to-benchmarking", prod, "https://198.20.0.1/jwks", false, nil},
		{"ok/nat64-public", prod, "https://[64:ff9b::5db8:d822]/jwks", false, nil},
		{"ok/allowed-benchmarking", Policy{AllowHosts: []string{"198.18.0.1"}}, "https://198.18.0.1/jwks", false, nil},
		{"fail/benchmarking", prod, "https://198.18.0.1/jwks", false, ErrPrivateHost},
		{"fail/benchmarking-top", prod, "https://198.19.255.255/jwks", false, ErrPrivateHost},
		{"fail/reserved", prod, "https://240.0.0.1/jwks", false, ErrPrivateHost},
		{"fail/reserved-dev", dev, "https://250.1.2.3/jwks", false, ErrPrivateHost},
		{"fail/documentation", prod, "https://192.0.2.1/jwks", false, ErrPrivateHost},
		{"fail/v6-documentation", prod, "https://[2001:db8::1]/jwks", false, ErrPrivateHost},
		{"fail/nat64-private", prod, "https://[64:ff9b::a00:1]/jwks", false, ErrPrivateHost},
		{"fail/6to4-loopback-dev", dev, "https://[2002:7f00:1::1]/jwks", false, ErrPrivateHost},
		{"fail/zoned-global", prod, "https://[2606:2800:220:1::1%25eth0]/jwks", false, ErrPrivateHost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.Check(tc.raw, tc.query)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Check(%q) = %v, want %v", tc.raw, err, tc.want)
			}
		})
	}
}

func TestIsPublicAddr(t *testing.T) {
	for s, want := range map[string]bool{
		"93.184.216.34": true, "2606:2800:220:1::1": true,
		"10.0.0.1": false, "172.16.0.1": false, "192.168.1.1": false, "127.0.0.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "100.127.255.255": false, "0.1.2.3": false,
		"::1": false, "fe80::1": false, "fc00::1": false, "::": false, "ff02::1": false,
		"::ffff:127.0.0.1": false, "255.255.255.255": false, "224.0.0.1": false,
		"198.18.0.1": false, "198.19.255.255": false, "240.0.0.1": false, "192.0.2.1": false,
		"198.51.100.1": false, "203.0.113.1": false, "192.0.0.1": false, "2001:db8::1": false,
		"64:ff9b::a00:1": false, "2002:a00:1::1": false, "::8.8.8.8": false, "fec0::1": false,
		"198.17.255.255": true, "198.20.0.1": true, "239.0.0.1": false, "223.255.255.254": true,
		"64:ff9b::5db8:d822": true, "::ffff:93.184.216.34": true,
	} {
		if got := IsPublicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("IsPublicAddr(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestText(t *testing.T) {
	for _, ok := range []string{"", "https://provider.example/a2a", "urn:example:aud", "é", strings.Repeat("a", MaxURLLength)} {
		if err := Text(ok); err != nil {
			t.Errorf("Text(%q) = %v", ok, err)
		}
	}
	for bad, want := range map[string]error{
		strings.Repeat("a", MaxURLLength+1): ErrTooLong,
		"a b":                               ErrControl,
		"a\tb":                              ErrControl,
		"a\x7fb":                            ErrControl,
		"a\xffb":                            ErrControl,
	} {
		if err := Text(bad); err != want {
			t.Errorf("Text(%.20q) = %v, want %v", bad, err, want)
		}
	}
}

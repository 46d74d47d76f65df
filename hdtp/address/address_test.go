package address_test

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"pactd.dev/pactd/hdtp/address"
	"pactd.dev/pactd/internal/urlrule"
)

// TestCheck: endpoints in normal form pass with their parts; each way of
// not being in normal form (hdtp.md §8 item 33 and the rest of RFC 3986's
// normal form) is refused for its reason.
func TestCheck(t *testing.T) {
	ok := map[string]address.Parts{
		"https://agent.alina.example/mcp":         {Host: "agent.alina.example", Path: "/mcp"},
		"https://agent.alina.example:8443/a/b":    {Host: "agent.alina.example", Port: 8443, Path: "/a/b"},
		"https://h.example/a%2Fb":                 {Host: "h.example", Path: "/a%2Fb"},
		"https://h.example/~x-y_z.1!$&'()*+,;=:@": {Host: "h.example", Path: "/~x-y_z.1!$&'()*+,;=:@"},
		"https://xn--bcher-kva.example/mcp":       {Host: "xn--bcher-kva.example", Path: "/mcp"},
		"https://93.184.216.34/mcp":               {Host: "93.184.216.34", Path: "/mcp"},
		"https://[2001:4860:4860::8888]:8443/mcp": {Host: "[2001:4860:4860::8888]", Port: 8443, Path: "/mcp"},
		"https://a.example/%C3%A9":                {Host: "a.example", Path: "/%C3%A9"},
		"https://a.example/..a":                   {Host: "a.example", Path: "/..a"},
	}
	for s, want := range ok {
		got, err := address.Check(s)
		if err != nil || got != want {
			t.Errorf("Check(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	bad := map[string]address.Reason{
		"": address.ReasonEmpty,
		"https://a.example/" + strings.Repeat("a", 2048): address.ReasonTooLong,
		"HTTPS://agent.alina.example/mcp":                address.ReasonScheme,
		"http://agent.alina.example/mcp":                 address.ReasonScheme,
		"hdtp://agent.alina.example/mcp":                 address.ReasonScheme,
		"https://Agent.alina.example/mcp":                address.ReasonHost,
		"https://agent.alina.example./mcp":               address.ReasonHost,
		"https://agent..example/mcp":                     address.ReasonHost,
		"https://-a.example/mcp":                         address.ReasonHost,
		"https://a_b.example/mcp":                        address.ReasonHost,
		"https://127.1/mcp":                              address.ReasonHost,
		"https://010.0.0.1/mcp":                          address.ReasonHost,
		"https://[2001:DB8::1]/mcp":                      address.ReasonHost,
		"https://[2001:db8:0::1]/mcp":                    address.ReasonHost,
		"https://[fe80::1%25eth0]/mcp":                   address.ReasonHost,
		"https:///mcp":                                   address.ReasonHost,
		"https://agent.alina.example:443/mcp":            address.ReasonPort,
		"https://agent.alina.example:/mcp":               address.ReasonPort,
		"https://agent.alina.example:08443/mcp":          address.ReasonPort,
		"https://agent.alina.example:65536/mcp":          address.ReasonPort,
		"https://agent.alina.example":                    address.ReasonPath,
		"https://agent.alina.example/":                   address.ReasonPath,
		"https://agent.alina.example/mcp/":               address.ReasonTrailingSlash,
		"https://agent.alina.example/a/../mcp":           address.ReasonDotSegment,
		"https://agent.alina.example/./mcp":              address.ReasonDotSegment,
		"https://agent.alina.example/a//mcp":             address.ReasonEmptySegment,
		"https://agent.alina.example/a%2fb":              address.ReasonPercentEncoding,
		"https://agent.alina.example/%41":                address.ReasonPercentEncoding,
		"https://agent.alina.example/%2":                 address.ReasonPercentEncoding,
		"https://agent.alina.example/%GG":                address.ReasonPercentEncoding,
		"https://agent.alina.example/mcp?q":              address.ReasonQuery,
		"https://agent.alina.example/mcp#f":              address.ReasonFragment,
		"https://user@agent.alina.example/mcp":           address.ReasonUserinfo,
		"https://agent.alina.example/m cp":               address.ReasonCharacter,
		"https://agent.alina.example/mcp\n":              address.ReasonCharacter,
		"https://agent.alina.example/é":                  address.ReasonCharacter,
		"https://agent.alina.example/a\"b":               address.ReasonCharacter,
	}
	for s, want := range bad {
		if _, err := address.Check(s); address.ReasonOf(err) != want {
			t.Errorf("Check(%q) = %v, want %s", s, err, want)
		}
	}
}

// TestGuard runs hdtp.md §8 item 38 (endpoints that point inside) and the
// reference library's local names, with public controls.
func TestGuard(t *testing.T) {
	g := address.Guard{IsPublic: urlrule.IsPublicAddr}
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	type tc struct {
		endpoint string
		resolved []netip.Addr
		want     address.Reason
	}
	for _, c := range []tc{
		{"https://agent.alina.example/mcp", addrs("93.184.216.34"), ""},
		{"https://agent.alina.example/mcp", nil, ""},
		{"https://93.184.216.34/mcp", nil, ""},
		{"https://[2606:4700::1111]/mcp", nil, ""},
		{"https://127.0.0.1/mcp", nil, address.ReasonNotPublic},
		{"https://10.0.0.1/mcp", nil, address.ReasonNotPublic},
		{"https://[fe80::1]/mcp", nil, address.ReasonNotPublic},
		{"https://[::ffff:127.0.0.1]/mcp", nil, address.ReasonNotPublic},
		{"https://[64:ff9b::7f00:1]/mcp", nil, address.ReasonNotPublic},
		{"https://[2002:7f00:1::]/mcp", nil, address.ReasonNotPublic},
		{"https://[64:ff9b:1::1]/mcp", nil, address.ReasonNotPublic},
		{"https://0.0.0.0/mcp", nil, address.ReasonNotPublic},
		{"https://[::]/mcp", nil, address.ReasonNotPublic},
		{"https://100.64.0.1/mcp", nil, address.ReasonNotPublic},
		{"https://[fc00::1]/mcp", nil, address.ReasonNotPublic},
		{"https://localhost/mcp", nil, address.ReasonLocalName},
		{"https://agent.localhost/mcp", nil, address.ReasonLocalName},
		{"https://agent.alina.example/mcp", addrs("93.184.216.34", "192.168.1.1"), address.ReasonNotPublic},
		{"https://agent.alina.example/mcp", addrs("::1"), address.ReasonNotPublic},
		{"https://agent.alina.example/mcp", []netip.Addr{{}}, address.ReasonNoAddress},
		{"https://agent.alina.example/mcp/", nil, address.ReasonTrailingSlash},
	} {
		if err := g.Check(c.endpoint, c.resolved); address.ReasonOf(err) != c.want {
			t.Errorf("Guard(%q, %v) = %v, want %q", c.endpoint, c.resolved, err, c.want)
		}
	}
	allowed := address.Guard{IsPublic: urlrule.IsPublicAddr, AllowHosts: []string{"agent.internal.example"}}
	if err := allowed.Check("https://agent.internal.example/mcp", addrs("10.1.2.3")); err != nil {
		t.Errorf("an allowed host was refused: %v", err)
	}
}

// FuzzCheck: no input stops the check, and an accepted endpoint is its own
// normal form: it round-trips through its parts unchanged.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"https://agent.alina.example/mcp", "https://[::1]:8443/a%2Fb", "https://a.example/%C3%A9", "HTTPS://x/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := address.Check(s)
		if err != nil {
			if address.ReasonOf(err) == "" {
				t.Fatalf("a refusal without a reason: %v", err)
			}
			return
		}
		port := ""
		if p.Port != 0 {
			port = ":" + strconv.Itoa(p.Port)
		}
		if got := "https://" + p.Host + port + p.Path; got != s {
			t.Fatalf("parts %+v rebuild %q, not %q", p, got, s)
		}
	})
}

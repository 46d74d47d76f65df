// Package address holds the rules for an identity's endpoint, the one
// https URL its leaf names (HDTP/PACT §14.1, §3): the RFC 3986 normal form
// an endpoint must already be in, and the guard that keeps a card or a
// dial from pointing at a loopback, private or otherwise internal host.
//
// Endpoints compare by plain byte equality, never after normalising
// (§14.2 rule 5), which is why a certificate whose URI is not already in
// normal form is refused rather than normalised: two spellings of one
// address would otherwise pin two different contacts.
package address

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// MaxEndpointBytes bounds an endpoint.
const MaxEndpointBytes = 2048

// Reason names the rule an endpoint broke.
type Reason string

// The reasons. Each is stable: tests, logs and the RPC answer name them.
const (
	ReasonEmpty           Reason = "empty"
	ReasonTooLong         Reason = "too_long"
	ReasonCharacter       Reason = "character"        // a space, control, non-ASCII or disallowed character
	ReasonScheme          Reason = "scheme"           // not exactly "https://" (http:, HTTPS: ...)
	ReasonUserinfo        Reason = "userinfo"         // user@host
	ReasonQuery           Reason = "query"            // ?q
	ReasonFragment        Reason = "fragment"         // #f
	ReasonHost            Reason = "host"             // empty, uppercase, trailing dot, bad label or IP literal not canonical
	ReasonPort            Reason = "port"             // :443 (the default), empty, leading zero, out of range
	ReasonPath            Reason = "path"             // no path, or the bare "/"
	ReasonTrailingSlash   Reason = "trailing_slash"   // /mcp/
	ReasonDotSegment      Reason = "dot_segment"      // /a/../mcp, /./mcp
	ReasonEmptySegment    Reason = "empty_segment"    // /a//mcp
	ReasonPercentEncoding Reason = "percent_encoding" // %2f (lowercase), %41 (an unreserved character), a bad escape
	ReasonLocalName       Reason = "local_name"       // localhost, *.localhost
	ReasonNotPublic       Reason = "not_public"       // an address that is loopback, private, link-local, ...
	ReasonNoAddress       Reason = "no_address"       // a resolved address that does not parse
)

// Error is an endpoint refused by one rule.
type Error struct {
	Reason Reason
	// Detail says what in the endpoint broke it; it quotes no more than
	// the offending part.
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "endpoint: " + string(e.Reason)
	}
	return "endpoint: " + string(e.Reason) + ": " + e.Detail
}

// ReasonOf returns the reason of an *Error, or "".
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func fail(r Reason, detail string) error { return &Error{Reason: r, Detail: detail} }

// Parts are an endpoint split at its authority.
type Parts struct {
	// Host is the host as written: a lowercase name, a dotted IPv4
	// address, or an IPv6 address in brackets.
	Host string
	// Port is the explicit port, 0 for none (443).
	Port int
	// Path is the path, starting with "/".
	Path string
}

// Check reports whether s is an endpoint in normal form and returns its
// parts. In normal form an endpoint is "https://" (lowercase), a host
// (lowercase DNS name, or a canonical IPv4 or bracketed IPv6 literal), an
// optional port other than 443, and a non-empty path that is not "/" and
// does not end in "/"; it has no userinfo, query or fragment, no "." or
// ".." segment and no empty segment, and percent-encoding appears only
// where needed and in uppercase hex. The two empty-segment and
// IP-literal rules are pactd's readings of what the texts leave open
// (docs/hdtp.md).
func Check(s string) (Parts, error) {
	var p Parts
	switch {
	case s == "":
		return p, fail(ReasonEmpty, "")
	case len(s) > MaxEndpointBytes:
		return p, fail(ReasonTooLong, strconv.Itoa(len(s))+" bytes")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f {
			return p, fail(ReasonCharacter, "byte "+strconv.Itoa(i))
		}
	}
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		return p, fail(ReasonScheme, "must start with https://")
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		return p, fail(ReasonFragment, "")
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		return p, fail(ReasonQuery, "")
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		if strings.IndexByte(rest, '@') >= 0 {
			return p, fail(ReasonUserinfo, "")
		}
		return p, fail(ReasonPath, "no path")
	}
	authority, path := rest[:slash], rest[slash:]
	if strings.IndexByte(authority, '@') >= 0 {
		return p, fail(ReasonUserinfo, "")
	}
	host, port, err := splitAuthority(authority)
	if err != nil {
		return p, err
	}
	if err := checkPath(path); err != nil {
		return p, err
	}
	return Parts{Host: host, Port: port, Path: path}, nil
}

// Host returns the host of an endpoint in normal form (without brackets
// for IPv6), or "" if s is not one.
func Host(s string) string {
	p, err := Check(s)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(p.Host, "["), "]")
}

func splitAuthority(a string) (host string, port int, err error) {
	host = a
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return "", 0, fail(ReasonHost, "unclosed IPv6 literal")
		}
		host = a[:end+1]
		switch after := a[end+1:]; {
		case after == "":
		case after[0] == ':':
			if port, err = checkPort(after[1:]); err != nil {
				return "", 0, err
			}
		default:
			return "", 0, fail(ReasonHost, "characters after the IPv6 literal")
		}
		addr, perr := netip.ParseAddr(host[1:end])
		if perr != nil || !addr.Is6() || addr.Zone() != "" || addr.String() != host[1:end] {
			return "", 0, fail(ReasonHost, "IPv6 literal not in canonical form (RFC 5952)")
		}
		return host, port, nil
	}
	if i := strings.LastIndexByte(a, ':'); i >= 0 {
		host = a[:i]
		if port, err = checkPort(a[i+1:]); err != nil {
			return "", 0, err
		}
	}
	if err := checkHostName(host); err != nil {
		return "", 0, err
	}
	return host, port, nil
}

func checkPort(s string) (int, error) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, fail(ReasonPort, "empty, too long or a leading zero")
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fail(ReasonPort, "not a number")
		}
		n = n*10 + int(s[i]-'0')
	}
	switch {
	case n > 65535:
		return 0, fail(ReasonPort, "out of range")
	case n == 443:
		return 0, fail(ReasonPort, "the default port 443 is written by leaving it out")
	}
	return n, nil
}

// checkHostName accepts a lowercase DNS name of LDH labels (punycode for
// international names), or a dotted-quad IPv4 address in canonical form.
func checkHostName(h string) error {
	if h == "" {
		return fail(ReasonHost, "empty")
	}
	if len(h) > 253 {
		return fail(ReasonHost, "longer than 253 characters")
	}
	if addr, err := netip.ParseAddr(h); err == nil {
		if !addr.Is4() || addr.String() != h {
			return fail(ReasonHost, "IP literal not in canonical form")
		}
		return nil
	}
	labels := strings.Split(h, ".")
	for i, l := range labels {
		if l == "" {
			if i == len(labels)-1 {
				return fail(ReasonHost, "trailing dot")
			}
			return fail(ReasonHost, "empty label")
		}
		if len(l) > 63 {
			return fail(ReasonHost, "label longer than 63 characters")
		}
		for j := 0; j < len(l); j++ {
			c := l[j]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			case c == '-':
				if j == 0 || j == len(l)-1 {
					return fail(ReasonHost, "label starts or ends with '-'")
				}
			case c >= 'A' && c <= 'Z':
				return fail(ReasonHost, "uppercase letter")
			default:
				return fail(ReasonHost, "character "+strconv.QuoteRune(rune(c)))
			}
		}
	}
	// A name whose last label is all digits reads as an IPv4 address to
	// some resolvers (127.1, 0x7f.1): refuse it rather than guess.
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" {
		return fail(ReasonHost, "numeric top-level label that is not a canonical IPv4 address")
	}
	return nil
}

// pchar reports whether c may appear unencoded in a path segment
// (RFC 3986: unreserved, sub-delims, ':' and '@').
func pchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func upperHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func checkPath(path string) error {
	if path == "/" {
		return fail(ReasonPath, `the bare path "/"`)
	}
	if strings.HasSuffix(path, "/") {
		return fail(ReasonTrailingSlash, "")
	}
	for _, seg := range strings.Split(path[1:], "/") {
		switch seg {
		case "":
			return fail(ReasonEmptySegment, "")
		case ".", "..":
			return fail(ReasonDotSegment, "")
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if c == '%' {
				if i+2 >= len(seg) {
					return fail(ReasonPercentEncoding, "incomplete escape")
				}
				hi, ok1 := upperHex(seg[i+1])
				lo, ok2 := upperHex(seg[i+2])
				if !ok1 || !ok2 {
					return fail(ReasonPercentEncoding, "escape not in uppercase hex: "+seg[i:i+3])
				}
				if unreserved(hi<<4 | lo) {
					return fail(ReasonPercentEncoding, "escape of a character that needs none: "+seg[i:i+3])
				}
				i += 2
				continue
			}
			if !pchar(c) {
				return fail(ReasonCharacter, strconv.QuoteRune(rune(c))+" in the path")
			}
		}
	}
	return nil
}

// Guard judges where an endpoint points (HDTP/PACT §3), at card intake and
// before every dial: the name must not be a local one (localhost,
// *.localhost), an IP literal must be public, and so must every address
// the host resolved the name to. The host resolves DNS; pactd vets what
// it found. IsPublic is the one public-address rule (internal/urlrule's
// IsPublicAddr, which also judges NAT64, 6to4 and mapped IPv6 addresses by
// the IPv4 address they embed). With no resolved addresses for a name,
// only the name is judged.
type Guard struct {
	// IsPublic reports whether an address is a public unicast destination.
	IsPublic func(netip.Addr) bool
	// AllowHosts are hosts the operator configured on purpose (an internal
	// network it serves); they pass whatever they resolve to.
	AllowHosts []string
}

// Check judges an endpoint (which must be in normal form) and the
// addresses its host resolved to.
func (g Guard) Check(endpoint string, resolved []netip.Addr) error {
	p, err := Check(endpoint)
	if err != nil {
		return err
	}
	host := strings.TrimSuffix(strings.TrimPrefix(p.Host, "["), "]")
	for _, h := range g.AllowHosts {
		if strings.EqualFold(h, host) {
			return nil
		}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fail(ReasonLocalName, host)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !g.IsPublic(addr) {
			return fail(ReasonNotPublic, host)
		}
		return nil
	}
	for _, a := range resolved {
		if !a.IsValid() {
			return fail(ReasonNoAddress, "")
		}
		if !g.IsPublic(a) {
			return fail(ReasonNotPublic, a.String())
		}
	}
	return nil
}

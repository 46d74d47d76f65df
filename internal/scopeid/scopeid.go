// Package scopeid is the one rule for a scope id, everywhere pactd reads
// one: a Brand's declared scopes, a scope parameter, a CheckGrant call, the
// scopes of a delegation token and of a receipt.
package scopeid

// MaxLen is the longest scope id pactd accepts, in bytes. The syntax is
// PACT §5.1's; the bound is pactd's own (the spec sets none), and every
// Brand scope has been held to it since delegation shipped, so no grant,
// token or receipt pactd made carries a longer id.
const MaxLen = 128

// Valid reports whether s is a scope id: 1 to MaxLen printable ASCII
// characters other than space, '"' and '\', i.e. PACT §5.1's
// ^[\x21\x23-\x5B\x5D-\x7E]+$ (RFC 6749 §3.3 scope-token) within MaxLen.
func Valid(s string) bool {
	if len(s) == 0 || len(s) > MaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

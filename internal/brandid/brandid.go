// Package brandid is the one rule for a Brand id, everywhere pactd reads
// one: creating a Brand, a webhook's Brand filter, a token or metadata
// request, a front-door route.
package brandid

// MaxLen is the longest Brand id, in bytes.
const MaxLen = 64

// Valid reports whether s is a Brand id: 1 to MaxLen of [A-Za-z0-9_-].
func Valid(s string) bool {
	if len(s) == 0 || len(s) > MaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

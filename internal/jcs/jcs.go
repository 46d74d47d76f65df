// Package jcs writes the JSON Canonicalization Scheme form (RFC 8785) of a
// JSON text.
//
// Canonicalize reads JSON text, refuses what is not I-JSON (RFC 7493) with a
// named error, and writes the canonical form: no insignificant whitespace,
// object members sorted by the UTF-16 code units of their names, numbers in
// ECMAScript's Number serialization, strings with the minimal escaping of
// ECMAScript's JSON.stringify. Two JSON texts with the same data canonicalize
// to the same bytes, which is what a signature or a hash over JSON needs.
//
// The reader is strict and bounded: the input size and the nesting depth are
// limited, so any input, however odd, ends in a result or an error.
package jcs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	// MaxInputBytes bounds the JSON text Canonicalize reads.
	MaxInputBytes = 8 << 20
	// MaxDepth bounds the nesting of arrays and objects.
	MaxDepth = 256
)

// The refusals. Each error Canonicalize returns wraps exactly one of them
// (test with errors.Is); the wrapping text says where in the input it is.
var (
	// ErrSyntax: the input is not one JSON value (RFC 8259), or has
	// something other than whitespace after it.
	ErrSyntax = errors.New("jcs: not JSON")
	// ErrInvalidUTF8: the input is not valid UTF-8 (RFC 7493 §2.1).
	ErrInvalidUTF8 = errors.New("jcs: invalid UTF-8")
	// ErrLoneSurrogate: a \u escape names a surrogate that is not half of a
	// pair, which no Unicode string holds (RFC 7493 §2.1).
	ErrLoneSurrogate = errors.New("jcs: lone surrogate escape")
	// ErrDuplicateName: an object has two members whose names are equal
	// once unescaped (RFC 7493 §2.3).
	ErrDuplicateName = errors.New("jcs: duplicate member name")
	// ErrNumberRange: a number is not a finite IEEE 754 double: its
	// magnitude is above the largest double, or it is not zero and below
	// the smallest (RFC 7493 §2.2, RFC 8785 §3.2.2.3).
	ErrNumberRange = errors.New("jcs: number outside the IEEE 754 double range")
	// ErrTooLarge: the input is longer than MaxInputBytes.
	ErrTooLarge = errors.New("jcs: input too large")
	// ErrTooDeep: arrays and objects nest deeper than MaxDepth.
	ErrTooDeep = errors.New("jcs: nesting too deep")
)

// Canonicalize returns the RFC 8785 canonical form of the JSON text input.
// Whitespace before and after the one value is allowed; a byte order mark is
// not (RFC 8259 §8.1).
func Canonicalize(input []byte) ([]byte, error) {
	if len(input) > MaxInputBytes {
		return nil, ErrTooLarge
	}
	if !utf8.Valid(input) {
		return nil, fmt.Errorf("%w at byte %d", ErrInvalidUTF8, firstInvalid(input))
	}
	r := reader{in: input}
	r.skipSpace()
	out, err := r.value(make([]byte, 0, len(input)), 0)
	if err != nil {
		return nil, err
	}
	r.skipSpace()
	if r.pos != len(r.in) {
		return nil, r.fail(ErrSyntax, "data after the value")
	}
	return out, nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		c, size := utf8.DecodeRune(b[i:])
		if c == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

type reader struct {
	in  []byte
	pos int
}

func (r *reader) fail(kind error, what string) error {
	return fmt.Errorf("%w: %s at byte %d", kind, what, r.pos)
}

func (r *reader) skipSpace() {
	for r.pos < len(r.in) {
		switch r.in[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// value appends the canonical form of the value at r.pos to dst.
func (r *reader) value(dst []byte, depth int) ([]byte, error) {
	if r.pos >= len(r.in) {
		return nil, r.fail(ErrSyntax, "value expected")
	}
	switch c := r.in[r.pos]; {
	case c == '{':
		return r.object(dst, depth+1)
	case c == '[':
		return r.array(dst, depth+1)
	case c == '"':
		s, err := r.str()
		if err != nil {
			return nil, err
		}
		return appendString(dst, s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number(dst)
	case c == 't':
		return r.literal(dst, "true")
	case c == 'f':
		return r.literal(dst, "false")
	case c == 'n':
		return r.literal(dst, "null")
	default:
		return nil, r.fail(ErrSyntax, "value expected")
	}
}

func (r *reader) literal(dst []byte, word string) ([]byte, error) {
	if !bytes.HasPrefix(r.in[r.pos:], []byte(word)) {
		return nil, r.fail(ErrSyntax, "bad literal")
	}
	r.pos += len(word)
	return append(dst, word...), nil
}

func (r *reader) array(dst []byte, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, r.fail(ErrTooDeep, "array")
	}
	r.pos++ // [
	dst = append(dst, '[')
	r.skipSpace()
	if r.pos < len(r.in) && r.in[r.pos] == ']' {
		r.pos++
		return append(dst, ']'), nil
	}
	for first := true; ; first = false {
		if !first {
			dst = append(dst, ',')
		}
		r.skipSpace()
		var err error
		if dst, err = r.value(dst, depth); err != nil {
			return nil, err
		}
		r.skipSpace()
		if r.pos >= len(r.in) {
			return nil, r.fail(ErrSyntax, "unterminated array")
		}
		switch r.in[r.pos] {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return append(dst, ']'), nil
		default:
			return nil, r.fail(ErrSyntax, "',' or ']' expected")
		}
	}
}

// member is one object member: its unescaped name and where its canonical
// "name":value text stands in the output.
type member struct {
	name       string
	start, end int
}

func (r *reader) object(dst []byte, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, r.fail(ErrTooDeep, "object")
	}
	r.pos++ // {
	dst = append(dst, '{')
	base := len(dst)
	r.skipSpace()
	if r.pos < len(r.in) && r.in[r.pos] == '}' {
		r.pos++
		return append(dst, '}'), nil
	}
	var members []member
	for {
		r.skipSpace()
		if r.pos >= len(r.in) || r.in[r.pos] != '"' {
			return nil, r.fail(ErrSyntax, "member name expected")
		}
		name, err := r.str()
		if err != nil {
			return nil, err
		}
		r.skipSpace()
		if r.pos >= len(r.in) || r.in[r.pos] != ':' {
			return nil, r.fail(ErrSyntax, "':' expected")
		}
		r.pos++
		r.skipSpace()
		start := len(dst)
		dst = appendString(dst, name)
		dst = append(dst, ':')
		if dst, err = r.value(dst, depth); err != nil {
			return nil, err
		}
		members = append(members, member{name: name, start: start, end: len(dst)})
		r.skipSpace()
		if r.pos >= len(r.in) {
			return nil, r.fail(ErrSyntax, "unterminated object")
		}
		if r.in[r.pos] == '}' {
			r.pos++
			break
		}
		if r.in[r.pos] != ',' {
			return nil, r.fail(ErrSyntax, "',' or '}' expected")
		}
		r.pos++
	}
	slices.SortStableFunc(members, func(a, b member) int { return compareUTF16(a.name, b.name) })
	for i := 1; i < len(members); i++ {
		if members[i-1].name == members[i].name {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateName, members[i].name)
		}
	}
	// Rewrite the members in sorted order, separated by commas.
	written := slices.Clone(dst[base:])
	dst = dst[:base]
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, written[m.start-base:m.end-base]...)
	}
	return append(dst, '}'), nil
}

// compareUTF16 orders two strings by their UTF-16 code units (RFC 8785
// §3.2.3). It differs from byte order only where a supplementary character
// (a surrogate pair, 0xD800-0xDFFF) meets a BMP character at or above 0xE000.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmpUnit(firstUnit(ra), firstUnit(rb), ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func firstUnit(c rune) rune {
	if c >= 0x10000 {
		hi, _ := utf16.EncodeRune(c)
		return hi
	}
	return c
}

func cmpUnit(ua, ub, ra, rb rune) int {
	if ua != ub {
		return int(ua) - int(ub)
	}
	// Both supplementary with the same high surrogate: the low surrogates
	// are in the order of the code points.
	return int(ra) - int(rb)
}

// str reads the string at r.pos (which holds '"') and returns it unescaped.
func (r *reader) str() (string, error) {
	r.pos++ // opening quote
	start := r.pos
	// The common case: no escapes.
	for r.pos < len(r.in) {
		c := r.in[r.pos]
		if c == '"' {
			s := string(r.in[start:r.pos])
			r.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", r.fail(ErrSyntax, "control character in string")
		}
		r.pos++
	}
	buf := append([]byte(nil), r.in[start:r.pos]...)
	for r.pos < len(r.in) {
		c := r.in[r.pos]
		switch {
		case c == '"':
			r.pos++
			return string(buf), nil
		case c < 0x20:
			return "", r.fail(ErrSyntax, "control character in string")
		case c != '\\':
			buf = append(buf, c)
			r.pos++
			continue
		}
		if r.pos+1 >= len(r.in) {
			break
		}
		esc := r.in[r.pos+1]
		r.pos += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			u, err := r.hex4()
			if err != nil {
				return "", err
			}
			switch {
			case u >= 0xDC00 && u <= 0xDFFF:
				return "", r.fail(ErrLoneSurrogate, "low surrogate first")
			case u >= 0xD800 && u <= 0xDBFF:
				if r.pos+1 >= len(r.in) || r.in[r.pos] != '\\' || r.in[r.pos+1] != 'u' {
					return "", r.fail(ErrLoneSurrogate, "high surrogate alone")
				}
				r.pos += 2
				lo, err := r.hex4()
				if err != nil {
					return "", err
				}
				if lo < 0xDC00 || lo > 0xDFFF {
					return "", r.fail(ErrLoneSurrogate, "high surrogate without low")
				}
				buf = utf8.AppendRune(buf, utf16.DecodeRune(u, lo))
			default:
				buf = utf8.AppendRune(buf, u)
			}
		default:
			return "", r.fail(ErrSyntax, "bad escape")
		}
	}
	return "", r.fail(ErrSyntax, "unterminated string")
}

func (r *reader) hex4() (rune, error) {
	if r.pos+4 > len(r.in) {
		return 0, r.fail(ErrSyntax, "short \\u escape")
	}
	var v rune
	for _, c := range r.in[r.pos : r.pos+4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			v |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			v |= rune(c - 'A' + 10)
		default:
			return 0, r.fail(ErrSyntax, "bad \\u escape")
		}
	}
	r.pos += 4
	return v, nil
}

// appendString writes s as ECMAScript's JSON.stringify does (RFC 8785
// §3.2.2.2): '"' and '\' escaped, the five control characters with a short
// escape as such, the other controls below 0x20 as \u00xx in lowercase hex,
// everything else as it is.
func appendString(dst []byte, s string) []byte {
	const hexdigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexdigits[c>>4], hexdigits[c&0xF])
		}
	}
	return append(dst, '"')
}

// number reads the number at r.pos (RFC 8259 §6 grammar) and appends its
// ECMAScript serialization.
func (r *reader) number(dst []byte) ([]byte, error) {
	start := r.pos
	if r.in[r.pos] == '-' {
		r.pos++
	}
	switch {
	case r.pos < len(r.in) && r.in[r.pos] == '0':
		r.pos++
	case r.pos < len(r.in) && r.in[r.pos] >= '1' && r.in[r.pos] <= '9':
		r.digits()
	default:
		return nil, r.fail(ErrSyntax, "digit expected")
	}
	if r.pos < len(r.in) && r.in[r.pos] == '.' {
		r.pos++
		if r.digits() == 0 {
			return nil, r.fail(ErrSyntax, "digit expected after '.'")
		}
	}
	if r.pos < len(r.in) && (r.in[r.pos] == 'e' || r.in[r.pos] == 'E') {
		r.pos++
		if r.pos < len(r.in) && (r.in[r.pos] == '+' || r.in[r.pos] == '-') {
			r.pos++
		}
		if r.digits() == 0 {
			return nil, r.fail(ErrSyntax, "digit expected in exponent")
		}
	}
	text := r.in[start:r.pos]
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: %s", ErrNumberRange, text)
	}
	if f == 0 && nonZeroDigit(text) {
		return nil, fmt.Errorf("%w: %s underflows to zero", ErrNumberRange, text)
	}
	return AppendNumber(dst, f), nil
}

func (r *reader) digits() int {
	n := 0
	for r.pos < len(r.in) && r.in[r.pos] >= '0' && r.in[r.pos] <= '9' {
		r.pos++
		n++
	}
	return n
}

// nonZeroDigit reports whether the significand of a JSON number (the part
// before any exponent) has a digit other than zero.
func nonZeroDigit(text []byte) bool {
	for _, c := range text {
		if c == 'e' || c == 'E' {
			return false
		}
		if c >= '1' && c <= '9' {
			return true
		}
	}
	return false
}

// AppendNumber appends the ECMAScript Number::toString form of the finite
// double f (ECMA-262 Number::toString, RFC 8785 §3.2.2.3): the shortest
// digits that round-trip, in plain notation for decimal exponents from -6
// to 20 and in exponent notation (with an explicit sign) outside them; -0 is
// written 0. f must be finite.
func AppendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-trip digits: "d.ddddde±XX".
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	mark := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[mark+1:]))
	digits := make([]byte, 0, 17)
	for _, c := range e[:mark] {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	k := len(digits)
	n := exp + 1 // the decimal point stands after n digits
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

package pajwt

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a small, strict, bounded JSON (RFC 8259) reader for the two
// objects of a compact JWS. It validates the whole text (strings, escapes,
// UTF-8, numbers, literals, nesting up to maxJSONDepth) and exposes the
// top-level members of an object without reflection or allocation.

// maxJSONDepth bounds nesting inside a header or claims object.
const maxJSONDepth = 32

// jsonKind is the JSON type of a member value.
type jsonKind uint8

const (
	kindAbsent jsonKind = iota // member not present
	kindString
	kindNumber
	kindOther // object, array, true, false or null
)

// jsonValue is one member value: for a string the bytes between the quotes
// (escaped reports whether they hold escapes), for a number its literal.
type jsonValue struct {
	kind    jsonKind
	raw     []byte
	escaped bool
}

// objectIter walks the members of a top-level JSON object.
type objectIter struct {
	b    []byte
	i    int
	n    int // members read so far
	done bool
	bad  bool
}

// newObjectIter starts walking b, which must hold one JSON object.
func newObjectIter(b []byte) objectIter {
	it := objectIter{b: b}
	it.ws()
	if it.i >= len(b) || b[it.i] != '{' {
		it.bad = true
		return it
	}
	it.i++
	return it
}

// next returns the next member. ok is false at the end of the object or on a
// syntax error; the caller then checks valid().
func (it *objectIter) next() (name []byte, nameEscaped bool, v jsonValue, ok bool) {
	if it.done || it.bad {
		return nil, false, jsonValue{}, false
	}
	it.ws()
	if it.n == 0 {
		if it.i < len(it.b) && it.b[it.i] == '}' {
			it.i++
			it.finish()
			return nil, false, jsonValue{}, false
		}
	} else {
		switch {
		case it.i < len(it.b) && it.b[it.i] == '}':
			it.i++
			it.finish()
			return nil, false, jsonValue{}, false
		case it.i < len(it.b) && it.b[it.i] == ',':
			it.i++
			it.ws()
		default:
			it.bad = true
			return nil, false, jsonValue{}, false
		}
	}
	if it.i >= len(it.b) || it.b[it.i] != '"' {
		it.bad = true
		return nil, false, jsonValue{}, false
	}
	name, nameEscaped, good := it.readString()
	if !good {
		it.bad = true
		return nil, false, jsonValue{}, false
	}
	it.ws()
	if it.i >= len(it.b) || it.b[it.i] != ':' {
		it.bad = true
		return nil, false, jsonValue{}, false
	}
	it.i++
	it.ws()
	if it.i >= len(it.b) {
		it.bad = true
		return nil, false, jsonValue{}, false
	}
	start := it.i
	switch c := it.b[it.i]; {
	case c == '"':
		raw, esc, good := it.readString()
		if !good {
			it.bad = true
			return nil, false, jsonValue{}, false
		}
		v = jsonValue{kind: kindString, raw: raw, escaped: esc}
	case c == '-' || (c >= '0' && c <= '9'):
		if !it.readNumber() {
			it.bad = true
			return nil, false, jsonValue{}, false
		}
		v = jsonValue{kind: kindNumber, raw: it.b[start:it.i]}
	default:
		if !it.skipValue(1) {
			it.bad = true
			return nil, false, jsonValue{}, false
		}
		v = jsonValue{kind: kindOther, raw: it.b[start:it.i]}
	}
	it.n++
	return name, nameEscaped, v, true
}

// valid reports whether the whole text was one well-formed object (after
// next returned false).
func (it *objectIter) valid() bool { return it.done && !it.bad }

func (it *objectIter) finish() {
	it.ws()
	if it.i != len(it.b) {
		it.bad = true
		return
	}
	it.done = true
}

func (it *objectIter) ws() {
	for it.i < len(it.b) {
		switch it.b[it.i] {
		case ' ', '\t', '\n', '\r':
			it.i++
		default:
			return
		}
	}
}

// readString reads a string starting at the opening quote and returns the
// bytes between the quotes. It validates escapes, control characters and
// UTF-8 (surrogate pairing is checked by unescape).
func (it *objectIter) readString() (raw []byte, escaped, ok bool) {
	it.i++
	start := it.i
	for it.i < len(it.b) {
		c := it.b[it.i]
		switch {
		case c == '"':
			raw = it.b[start:it.i]
			it.i++
			return raw, escaped, true
		case c == '\\':
			escaped = true
			if it.i+1 >= len(it.b) {
				return nil, false, false
			}
			switch it.b[it.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				it.i += 2
			case 'u':
				if it.i+6 > len(it.b) {
					return nil, false, false
				}
				if _, ok := hex4(it.b[it.i+2 : it.i+6]); !ok {
					return nil, false, false
				}
				it.i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		case c < utf8.RuneSelf:
			it.i++
		default:
			r, size := utf8.DecodeRune(it.b[it.i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, false, false
			}
			it.i += size
		}
	}
	return nil, false, false
}

// readNumber reads a JSON number literal.
func (it *objectIter) readNumber() bool {
	b := it.b
	if it.i < len(b) && b[it.i] == '-' {
		it.i++
	}
	switch {
	case it.i >= len(b):
		return false
	case b[it.i] == '0':
		it.i++
	case b[it.i] >= '1' && b[it.i] <= '9':
		for it.i < len(b) && b[it.i] >= '0' && b[it.i] <= '9' {
			it.i++
		}
	default:
		return false
	}
	if it.i < len(b) && b[it.i] == '.' {
		it.i++
		if !it.digits() {
			return false
		}
	}
	if it.i < len(b) && (b[it.i] == 'e' || b[it.i] == 'E') {
		it.i++
		if it.i < len(b) && (b[it.i] == '+' || b[it.i] == '-') {
			it.i++
		}
		if !it.digits() {
			return false
		}
	}
	return true
}

func (it *objectIter) digits() bool {
	start := it.i
	for it.i < len(it.b) && it.b[it.i] >= '0' && it.b[it.i] <= '9' {
		it.i++
	}
	return it.i > start
}

// skipValue validates and skips any JSON value at the current position.
func (it *objectIter) skipValue(depth int) bool {
	it.ws()
	if it.i >= len(it.b) {
		return false
	}
	switch c := it.b[it.i]; {
	case c == '"':
		_, _, ok := it.readString()
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		return it.readNumber()
	case c == 't':
		return it.literal("true")
	case c == 'f':
		return it.literal("false")
	case c == 'n':
		return it.literal("null")
	case c == '{' || c == '[':
		if depth > maxJSONDepth {
			return false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		it.i++
		it.ws()
		if it.i < len(it.b) && it.b[it.i] == closer {
			it.i++
			return true
		}
		for {
			if c == '{' {
				it.ws()
				if it.i >= len(it.b) || it.b[it.i] != '"' {
					return false
				}
				if _, _, ok := it.readString(); !ok {
					return false
				}
				it.ws()
				if it.i >= len(it.b) || it.b[it.i] != ':' {
					return false
				}
				it.i++
			}
			if !it.skipValue(depth + 1) {
				return false
			}
			it.ws()
			if it.i >= len(it.b) {
				return false
			}
			switch it.b[it.i] {
			case ',':
				it.i++
			case closer:
				it.i++
				return true
			default:
				return false
			}
		}
	}
	return false
}

func (it *objectIter) literal(lit string) bool {
	if len(it.b)-it.i < len(lit) || string(it.b[it.i:it.i+len(lit)]) != lit {
		return false
	}
	it.i += len(lit)
	return true
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

// unescape decodes the content of a JSON string already validated by
// readString. It refuses unpaired UTF-16 surrogates.
func unescape(raw []byte) ([]byte, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := hex4(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
					return nil, false
				}
				r2, _ := hex4(raw[i+2 : i+6])
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return nil, false
				}
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		}
		i += 2
	}
	return out, true
}

// stringValue returns the decoded string of a kindString value.
func stringValue(v jsonValue) (string, bool) {
	if !v.escaped {
		return string(v.raw), true
	}
	b, ok := unescape(v.raw)
	if !ok {
		return "", false
	}
	return string(b), true
}

// nameIs reports whether a member name (raw, possibly escaped) equals want.
func nameIs(raw []byte, escaped bool, want string) bool {
	if !escaped {
		return string(raw) == want
	}
	b, ok := unescape(raw)
	return ok && string(b) == want
}

// maxNumericDate bounds accepted NumericDate values (about year 33658).
const maxNumericDate = 1e12

// numberValue parses a kindNumber literal as a NumericDate. Integer literals
// of up to 15 digits take a fast path; anything else goes through
// strconv.ParseFloat. Non-finite or out-of-range values report false.
func numberValue(v jsonValue) (float64, bool) {
	raw := v.raw
	if len(raw) > 0 && len(raw) <= 15 {
		var n int64
		neg := raw[0] == '-'
		digits := raw
		if neg {
			digits = raw[1:]
		}
		simple := len(digits) > 0
		for _, c := range digits {
			if c < '0' || c > '9' {
				simple = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if simple {
			if neg {
				n = -n
			}
			f := float64(n)
			return f, f > -maxNumericDate && f < maxNumericDate
		}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != f || f <= -maxNumericDate || f >= maxNumericDate {
		return 0, false
	}
	return f, true
}

package jws

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a small, strict, bounded JSON (RFC 8259) reader for the two
// objects of a compact JWS. It validates the whole text (strings, escapes,
// UTF-8, numbers, literals, nesting up to MaxDepth), refuses a member name
// given twice (compared after unescaping) and exposes the top-level members
// of an object without reflection, and without allocation unless a name is
// escaped or the object has more than inlineNames members.

// MaxDepth bounds nesting inside a header or claims object.
const MaxDepth = 32

// Kind is the JSON type of a member value.
type Kind uint8

// The kinds of member value.
const (
	// KindAbsent: the member is not present.
	KindAbsent Kind = iota
	// KindString: a JSON string.
	KindString
	// KindNumber: a JSON number.
	KindNumber
	// KindOther: an object, array, true, false or null.
	KindOther
)

// Value is one member value: for a string the bytes between the quotes
// (Escaped reports whether they hold escapes), for anything else its whole
// text.
type Value struct {
	// Kind is the JSON type.
	Kind Kind
	// Raw is the string content between the quotes, or the literal text.
	Raw []byte
	// Escaped reports whether a string's Raw holds backslash escapes.
	Escaped bool
	// Text is the member value's whole JSON text (quotes included).
	Text []byte
}

// Name is a member name as it appears between the quotes.
type Name struct {
	// Raw is the name between the quotes, possibly escaped.
	Raw []byte
	// Escaped reports whether Raw holds backslash escapes.
	Escaped bool
}

// Is reports whether the name, unescaped, equals want.
func (n Name) Is(want string) bool {
	if !n.Escaped {
		return string(n.Raw) == want
	}
	b, ok := unescape(n.Raw)
	return ok && string(b) == want
}

// StringHeader reports whether name is one of the registered header
// parameters that are JSON strings (RFC 7515 §4.1: kid, typ, cty, x5t,
// x5t#S256) and not refused by every pactd verifier anyway. A verifier that
// lets such a member through must refuse it when it is not a string: jwx
// refuses such a token, so one pactd accepts would read differently there.
func StringHeader(name Name) bool {
	for _, n := range [...]string{"kid", "typ", "cty", "x5t", "x5t#S256"} {
		if name.Is(n) {
			return true
		}
	}
	return false
}

// inlineNames is how many names an Object remembers without allocating.
const inlineNames = 16

// Object walks the members of one top-level JSON object.
type Object struct {
	b    []byte
	i    int
	n    int // members read so far
	done bool
	bad  bool
	dup  bool
	// badName: an escaped name that does not decode (unpaired surrogate).
	badName bool
	// names are the top-level member names seen so far.
	names memberNames
}

// NewObject starts walking b, which must hold exactly one JSON object.
func NewObject(b []byte) Object {
	o := Object{b: b}
	o.ws()
	if o.i >= len(b) || b[o.i] != '{' {
		o.bad = true
		return o
	}
	o.i++
	return o
}

// NewHeader starts walking a protected header: one JSON object as
// NewObject, with no whitespace before its "{" or after its "}". jwx (and
// any verifier that rebuilds the signing input from a re-read header)
// sees such a header differently, and no JOSE library emits one.
func NewHeader(b []byte) Object {
	if len(b) == 0 || b[0] != '{' || b[len(b)-1] != '}' {
		return Object{b: b, bad: true}
	}
	return NewObject(b)
}

// Next returns the next member. ok is false at the end of the object, on a
// syntax error or on a duplicate name; the caller then checks Valid.
func (o *Object) Next() (name Name, v Value, ok bool) {
	if o.done || o.bad {
		return Name{}, Value{}, false
	}
	o.ws()
	if o.i < len(o.b) && o.b[o.i] == '}' {
		o.i++
		o.finish()
		return Name{}, Value{}, false
	}
	if o.n > 0 {
		if o.i >= len(o.b) || o.b[o.i] != ',' {
			o.bad = true
			return Name{}, Value{}, false
		}
		o.i++
		o.ws()
	}
	if o.i >= len(o.b) || o.b[o.i] != '"' {
		o.bad = true
		return Name{}, Value{}, false
	}
	nameStart := o.i + 1
	raw, esc, good := o.readString()
	if !good || !o.remember(nameStart, nameStart+len(raw), esc) {
		o.bad = true
		return Name{}, Value{}, false
	}
	o.ws()
	if o.i >= len(o.b) || o.b[o.i] != ':' {
		o.bad = true
		return Name{}, Value{}, false
	}
	o.i++
	o.ws()
	if o.i >= len(o.b) {
		o.bad = true
		return Name{}, Value{}, false
	}
	start := o.i
	switch c := o.b[o.i]; {
	case c == '"':
		s, sesc, good := o.readString()
		if !good {
			o.bad = true
			return Name{}, Value{}, false
		}
		v = Value{Kind: KindString, Raw: s, Escaped: sesc}
	case c == '-' || (c >= '0' && c <= '9'):
		if !o.readNumber() {
			o.bad = true
			return Name{}, Value{}, false
		}
		v = Value{Kind: KindNumber, Raw: o.b[start:o.i]}
	default:
		if !o.skipValue(1) {
			o.bad = true
			return Name{}, Value{}, false
		}
		v = Value{Kind: KindOther, Raw: o.b[start:o.i]}
	}
	v.Text = o.b[start:o.i]
	o.n++
	return Name{Raw: raw, Escaped: esc}, v, true
}

// span is a member name's position in the text: b[start:end] between the
// quotes, escaped when it holds backslash escapes.
type span struct {
	start, end int32
	escaped    bool
}

// memberNames are the names of one object's members seen so far: the
// first inlineNames as spans (offsets, not slices, so that the text does
// not escape to the heap), the rest unescaped in more.
type memberNames struct {
	n     int
	names [inlineNames]span
	more  map[string]struct{}
}

// nameResult is what memberNames.add found.
type nameResult uint8

const (
	nameNew       nameResult = iota // first time seen
	nameDuplicate                   // seen before, compared after unescaping
	nameBad                         // an escaped name that does not decode
)

// add records the member name at b[start:end].
func (m *memberNames) add(b []byte, start, end int, esc bool) nameResult {
	cur := span{start: int32(start), end: int32(end), escaped: esc}
	var curText []byte // the unescaped name, computed only when needed
	if esc {
		u, ok := unescape(b[start:end])
		if !ok {
			return nameBad
		}
		curText = u
	}
	for _, prev := range m.names[:min(m.n, inlineNames)] {
		if sameName(b, prev, cur, curText) {
			return nameDuplicate
		}
	}
	if m.n < inlineNames {
		m.names[m.n] = cur
		m.n++
		return nameNew
	}
	if curText == nil {
		curText = b[start:end]
	}
	if m.more == nil {
		m.more = make(map[string]struct{})
	}
	if _, seen := m.more[string(curText)]; seen {
		return nameDuplicate
	}
	m.more[string(curText)] = struct{}{}
	m.n++
	return nameNew
}

// remember records a top-level member name and reports false when it was
// seen before or does not decode.
func (o *Object) remember(start, end int, esc bool) bool {
	switch o.names.add(o.b, start, end, esc) {
	case nameDuplicate:
		o.dup = true
		return false
	case nameBad:
		o.badName = true
		return false
	}
	return true
}

// sameName reports whether the remembered name prev equals cur (whose
// unescaped text is curText when cur is escaped).
func sameName(b []byte, prev, cur span, curText []byte) bool {
	p := b[prev.start:prev.end]
	if !prev.escaped && !cur.escaped {
		return bytes.Equal(p, b[cur.start:cur.end])
	}
	if prev.escaped {
		p, _ = unescape(p) // decodes: it was checked when remembered
	}
	if !cur.escaped {
		curText = b[cur.start:cur.end]
	}
	return bytes.Equal(p, curText)
}

// Valid reports whether the whole text was one well-formed object of
// unique member names (after Next returned false).
func (o *Object) Valid() bool { return o.done && !o.bad }

// Duplicate reports whether walking stopped at a member name given twice.
func (o *Object) Duplicate() bool { return o.dup }

func (o *Object) finish() {
	o.ws()
	if o.i != len(o.b) {
		o.bad = true
		return
	}
	o.done = true
}

func (o *Object) ws() {
	for o.i < len(o.b) {
		switch o.b[o.i] {
		case ' ', '\t', '\n', '\r':
			o.i++
		default:
			return
		}
	}
}

// readString reads a string starting at the opening quote and returns the
// bytes between the quotes. It validates escapes, control characters and
// UTF-8 (surrogate pairing is checked by unescape).
func (o *Object) readString() (raw []byte, escaped, ok bool) {
	o.i++
	start := o.i
	for o.i < len(o.b) {
		c := o.b[o.i]
		switch {
		case c == '"':
			raw = o.b[start:o.i]
			o.i++
			return raw, escaped, true
		case c == '\\':
			escaped = true
			if o.i+1 >= len(o.b) {
				return nil, false, false
			}
			switch o.b[o.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				o.i += 2
			case 'u':
				if o.i+6 > len(o.b) {
					return nil, false, false
				}
				if _, ok := hex4(o.b[o.i+2 : o.i+6]); !ok {
					return nil, false, false
				}
				o.i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		case c < utf8.RuneSelf:
			o.i++
		default:
			r, size := utf8.DecodeRune(o.b[o.i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, false, false
			}
			o.i += size
		}
	}
	return nil, false, false
}

// readNumber reads a JSON number literal.
func (o *Object) readNumber() bool {
	b := o.b
	if o.i < len(b) && b[o.i] == '-' {
		o.i++
	}
	switch {
	case o.i >= len(b):
		return false
	case b[o.i] == '0':
		o.i++
	case b[o.i] >= '1' && b[o.i] <= '9':
		for o.i < len(b) && b[o.i] >= '0' && b[o.i] <= '9' {
			o.i++
		}
	default:
		return false
	}
	if o.i < len(b) && b[o.i] == '.' {
		o.i++
		if !o.digits() {
			return false
		}
	}
	if o.i < len(b) && (b[o.i] == 'e' || b[o.i] == 'E') {
		o.i++
		if o.i < len(b) && (b[o.i] == '+' || b[o.i] == '-') {
			o.i++
		}
		if !o.digits() {
			return false
		}
	}
	return true
}

func (o *Object) digits() bool {
	start := o.i
	for o.i < len(o.b) && o.b[o.i] >= '0' && o.b[o.i] <= '9' {
		o.i++
	}
	return o.i > start
}

// skipValue validates and skips any JSON value at the current position,
// under the same rules as the top level: a nested object's member names
// are unique after unescaping and every escaped string decodes (no lone
// UTF-16 surrogate). A nested duplicate sets dup, as a top-level one does.
// It allocates only for a nested object of more than inlineNames members.
func (o *Object) skipValue(depth int) bool {
	o.ws()
	if o.i >= len(o.b) {
		return false
	}
	switch c := o.b[o.i]; {
	case c == '"':
		raw, esc, ok := o.readString()
		return ok && (!esc || decodes(raw))
	case c == '-' || (c >= '0' && c <= '9'):
		return o.readNumber()
	case c == 't':
		return o.literal("true")
	case c == 'f':
		return o.literal("false")
	case c == 'n':
		return o.literal("null")
	case c == '{' || c == '[':
		if depth > MaxDepth {
			return false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		var names memberNames
		o.i++
		o.ws()
		if o.i < len(o.b) && o.b[o.i] == closer {
			o.i++
			return true
		}
		for {
			if c == '{' {
				o.ws()
				if o.i >= len(o.b) || o.b[o.i] != '"' {
					return false
				}
				start := o.i + 1
				raw, esc, ok := o.readString()
				if !ok {
					return false
				}
				switch names.add(o.b, start, start+len(raw), esc) {
				case nameDuplicate:
					o.dup = true
					return false
				case nameBad:
					return false
				}
				o.ws()
				if o.i >= len(o.b) || o.b[o.i] != ':' {
					return false
				}
				o.i++
			}
			if !o.skipValue(depth + 1) {
				return false
			}
			o.ws()
			if o.i >= len(o.b) {
				return false
			}
			switch o.b[o.i] {
			case ',':
				o.i++
			case closer:
				o.i++
				return true
			default:
				return false
			}
		}
	}
	return false
}

func (o *Object) literal(lit string) bool {
	if len(o.b)-o.i < len(lit) || string(o.b[o.i:o.i+len(lit)]) != lit {
		return false
	}
	o.i += len(lit)
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

// decodes reports whether the content of a JSON string already validated
// by readString unescapes, that is, pairs every UTF-16 surrogate, without
// building the decoded text.
func decodes(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r, _ := hex4(raw[i+2 : i+6])
		i += 5
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r >= 0xdc00 || i+7 > len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
			return false
		}
		r2, _ := hex4(raw[i+3 : i+7])
		if utf16.DecodeRune(r, r2) == utf8.RuneError {
			return false
		}
		i += 6
	}
	return true
}

// String returns the decoded string of a KindString value; false for any
// other kind or an unpaired surrogate escape.
func (v Value) String() (string, bool) {
	if v.Kind != KindString {
		return "", false
	}
	if !v.Escaped {
		return string(v.Raw), true
	}
	b, ok := unescape(v.Raw)
	if !ok {
		return "", false
	}
	return string(b), true
}

// MaxNumericDate bounds accepted NumericDate values (about year 33658).
const MaxNumericDate = 1e12

// NumericDate parses a KindNumber value as a NumericDate in seconds.
// Integer literals of up to 15 digits take a fast path; anything else goes
// through strconv.ParseFloat. Non-finite values and values not strictly
// within ±MaxNumericDate report false.
func (v Value) NumericDate() (float64, bool) {
	if v.Kind != KindNumber {
		return 0, false
	}
	return parseNumericDate(v.Raw)
}

func parseNumericDate(raw []byte) (float64, bool) {
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
			return f, f > -MaxNumericDate && f < MaxNumericDate
		}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != f || f <= -MaxNumericDate || f >= MaxNumericDate {
		return 0, false
	}
	return f, true
}

// Members reads one JSON object of unique member names (see Object) into a
// map from unescaped name to the value's JSON text. It is for the paths
// that are not hot (delegation tokens, receipts, sessions, assertions).
func Members(b []byte) (map[string]json.RawMessage, bool) {
	return members(NewObject(b))
}

// HeaderMembers is Members for a protected header (see NewHeader).
func HeaderMembers(b []byte) (map[string]json.RawMessage, bool) {
	return members(NewHeader(b))
}

func members(o Object) (map[string]json.RawMessage, bool) {
	m := make(map[string]json.RawMessage)
	for {
		name, v, ok := o.Next()
		if !ok {
			break
		}
		key := string(name.Raw)
		if name.Escaped {
			u, _ := unescape(name.Raw) // decodes: Next checked it
			key = string(u)
		}
		m[key] = v.Text
	}
	if !o.Valid() {
		return nil, false
	}
	return m, true
}

// StringMember returns member name of m (from Members) as a string:
// present reports whether it is there at all, isString whether it is a
// JSON string (that decodes).
func StringMember(m map[string]json.RawMessage, name string) (v string, present, isString bool) {
	raw, ok := m[name]
	if !ok {
		return "", false, false
	}
	if len(raw) < 2 || raw[0] != '"' {
		return "", true, false
	}
	inner := raw[1 : len(raw)-1]
	v, isString = Value{Kind: KindString, Raw: inner, Escaped: bytes.IndexByte(inner, '\\') >= 0}.String()
	return v, true, isString
}

// NumericDateMember returns member name of m (from Members) as a
// NumericDate in seconds: present reports whether it is there at all, ok
// whether it is a JSON number strictly within ±MaxNumericDate.
func NumericDateMember(m map[string]json.RawMessage, name string) (v float64, present, ok bool) {
	raw, found := m[name]
	if !found {
		return 0, false, false
	}
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, true, false
	}
	v, ok = parseNumericDate(raw)
	return v, true, ok
}

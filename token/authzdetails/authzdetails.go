// Package authzdetails implements PACT §5.7 resource-bound delegation on
// RFC 9396 authorization_details: the types a Brand declares, the strict
// validation of what a PA requests (every refusal is
// invalid_authorization_details), the canonical JSON that is stored,
// signed into tokens and compared, the consent words every frontend shows,
// and the structured entries a resource server enforces.
//
// Only three value kinds exist (a string constrained by an anchored RE2
// pattern, one string of an enum, a non-empty array of distinct strings of
// an enum), so an accepted entry is an object of strings and arrays of
// strings, and its canonical JSON is that of encoding/json: members sorted
// by name, no insignificant whitespace, arrays in the order sent.
package authzdetails

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"

	"pactd.dev/pactd/token/jws"
)

// Bounds of a request (what a PA sends) and of a Brand's declarations.
const (
	// MaxRequestBytes bounds the authorization_details form value.
	MaxRequestBytes = 8 << 10
	// MaxCanonicalBytes bounds the canonical JSON of accepted details, so
	// a delegation token carrying them stays well under its 8 KiB bound.
	MaxCanonicalBytes = 4 << 10
	// MaxEntries is the most entries one request may carry.
	MaxEntries = 16
	// MaxValueBytes bounds one string value.
	MaxValueBytes = 256

	// MaxTypes is the most types a Brand may declare.
	MaxTypes = 16
	// MaxFields is the most fields one type may declare.
	MaxFields = 16
	// MaxEnumValues is the most values one enum field may allow.
	MaxEnumValues = 32
	// MaxTypeURI bounds a type URI.
	MaxTypeURI = 256
	// MaxPattern bounds a pattern's source.
	MaxPattern = 256
	// MaxDescription bounds a type's description (characters).
	MaxDescription = 200
	// MaxLabel bounds a field's label (characters).
	MaxLabel = 100
)

// Kind is the kind of value a field takes.
type Kind string

// The field kinds.
const (
	// KindString is a JSON string, 1 to MaxValueBytes bytes, that the
	// field's Pattern matches.
	KindString Kind = "string"
	// KindEnum is a JSON string equal to one of the field's Values.
	KindEnum Kind = "enum"
	// KindEnumArray is a non-empty JSON array of distinct strings, each one
	// of the field's Values (RFC 9396 §2.2 actions, datatypes, ...).
	KindEnumArray Kind = "enum_array"
)

// Combination says how several entries of one type combine.
type Combination string

// The combinations.
const (
	// CombineUnion: each entry is an independent, exact permission; the
	// details allow an operation when at least one entry matches it
	// exactly. Identical entries are refused (they say nothing new).
	CombineUnion Combination = "union"
	// CombineSingle: at most one entry of the type per request.
	CombineSingle Combination = "single"
)

// Field is one member an entry of a type may carry.
type Field struct {
	// Name is the JSON member name.
	Name string `json:"name"`
	// Kind is the kind of value.
	Kind Kind `json:"kind"`
	// Required means every entry must carry it.
	Required bool `json:"required,omitempty"`
	// Label names the field in the consent words ("order").
	Label string `json:"label"`
	// Pattern is the anchored RE2 pattern of a KindString field.
	Pattern string `json:"pattern,omitempty"`
	// Values are the allowed values of a KindEnum or KindEnumArray field.
	Values []string `json:"values,omitempty"`
}

// Type is one authorization_details type a Brand declares.
type Type struct {
	// Type is the type URI (the entries' "type" member).
	Type string `json:"type"`
	// Description starts the consent words of each entry ("Cancel an
	// order").
	Description string `json:"description"`
	// Scope is the scope id an entry of this type requires: it must be
	// requested with it, and is dropped when the User declines it.
	Scope string `json:"scope"`
	// Fields are the members an entry may carry besides "type".
	Fields []Field `json:"fields"`
	// Combination says how several entries combine; empty means union.
	Combination Combination `json:"combination,omitempty"`
	// ConsentTemplate is the Brand's own wording of an entry, with
	// "{field}" placeholders (see checkTemplate); empty means the default
	// words (Words).
	ConsentTemplate string `json:"consent_template,omitempty"`
}

// commonFields are the RFC 9396 §2.2 common data fields, with the kinds a
// Brand may give them: their RFC meaning fixes the JSON shape (arrays of
// strings, identifier a string). "type" itself is never a field.
var commonFields = map[string][]Kind{
	"locations":  {KindEnumArray},
	"actions":    {KindEnumArray},
	"datatypes":  {KindEnumArray},
	"identifier": {KindString, KindEnum},
	"privileges": {KindEnumArray},
}

var fieldNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Problem is one broken rule of a Brand's declarations; Field is the path
// below the list of types ("[0].fields[1].pattern").
type Problem struct {
	Field   string
	Message string
}

// CheckTypes validates a Brand's declared types against its scope ids
// (scopes): type URIs absolute and unique, descriptions and labels
// present and bounded, the scope declared, field names unique and not
// "type", RFC 9396 common fields with their RFC shape, patterns that are
// valid RE2 and anchored (^…$ around the whole expression), enum values
// present, distinct and bounded, consent templates well formed over the
// type's own fields (checkTemplate), and every count bounded.
func CheckTypes(types []Type, scopes map[string]bool) []Problem {
	var out []Problem
	add := func(field, format string, args ...any) {
		out = append(out, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if len(types) > MaxTypes {
		add("", "at most %d types", MaxTypes)
		return out
	}
	seen := map[string]bool{}
	for i, t := range types {
		p := fmt.Sprintf("[%d].", i)
		switch {
		case !absoluteURI(t.Type):
			add(p+"type", "must be an absolute URI of at most %d bytes without spaces", MaxTypeURI)
		case seen[t.Type]:
			add(p+"type", "duplicates an earlier type")
		default:
			seen[t.Type] = true
		}
		checkText(add, p+"description", t.Description, MaxDescription)
		if !scopes[t.Scope] {
			add(p+"scope", "must be one of the Brand's scope ids")
		}
		switch t.Combination {
		case "", CombineUnion, CombineSingle:
		default:
			add(p+"combination", "must be union or single")
		}
		if problem := checkTemplate(t.ConsentTemplate, t.Fields); problem != "" {
			add(p+"consent_template", "%s", problem)
		}
		if len(t.Fields) == 0 || len(t.Fields) > MaxFields {
			add(p+"fields", "must declare 1 to %d fields", MaxFields)
			continue
		}
		names := map[string]bool{}
		for j, f := range t.Fields {
			checkField(add, fmt.Sprintf("%sfields[%d].", p, j), f, names)
		}
	}
	return out
}

func checkField(add func(string, string, ...any), p string, f Field, names map[string]bool) {
	switch {
	case f.Name == "type":
		add(p+"name", `"type" is the RFC 9396 type member, not a field`)
	case !fieldNamePattern.MatchString(f.Name):
		add(p+"name", "must be 1 to 64 characters of A-Z, a-z, 0-9 and '_', not starting with a digit")
	case names[f.Name]:
		add(p+"name", "duplicates an earlier field of this type")
	default:
		names[f.Name] = true
		if kinds, common := commonFields[f.Name]; common && !slices.Contains(kinds, f.Kind) {
			add(p+"kind", "the RFC 9396 common field %q must have kind %s", f.Name, kindList(kinds))
		}
	}
	checkText(add, p+"label", f.Label, MaxLabel)
	switch f.Kind {
	case KindString:
		if len(f.Values) > 0 {
			add(p+"values", "only enum fields have values")
		}
		if err := checkPattern(f.Pattern); err != "" {
			add(p+"pattern", "%s", err)
		}
	case KindEnum, KindEnumArray:
		if f.Pattern != "" {
			add(p+"pattern", "only string fields have a pattern")
		}
		if len(f.Values) == 0 || len(f.Values) > MaxEnumValues {
			add(p+"values", "must list 1 to %d values", MaxEnumValues)
		}
		vals := map[string]bool{}
		for k, v := range f.Values {
			switch {
			case !cleanValue(v):
				add(fmt.Sprintf("%svalues[%d]", p, k), "must be 1 to %d bytes of UTF-8 without control or bidirectional formatting characters", MaxValueBytes)
			case vals[v]:
				add(fmt.Sprintf("%svalues[%d]", p, k), "duplicates an earlier value")
			}
			vals[v] = true
		}
	default:
		add(p+"kind", "must be string, enum or enum_array")
	}
}

func kindList(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, " or ")
}

func checkText(add func(string, string, ...any), field, s string, max int) {
	switch {
	case strings.TrimSpace(s) == "":
		add(field, "is required")
	case !utf8.ValidString(s) || utf8.RuneCountInString(s) > max || strings.ContainsFunc(s, unsafeWordsRune):
		add(field, "must be UTF-8 of at most %d characters without control or bidirectional formatting characters", max)
	}
}

// cleanValue is the rule of every string value, declared or sent: 1 to
// MaxValueBytes bytes of UTF-8 without the characters unsafeWordsRune names.
func cleanValue(v string) bool {
	return v != "" && len(v) <= MaxValueBytes && utf8.ValidString(v) && !strings.ContainsFunc(v, unsafeWordsRune)
}

// checkPattern returns why p is not an acceptable pattern, or "".
// Anchored means the whole expression is ^ … $ (begin and end of text):
// "^a|b$" is refused, because its second branch is not anchored at the
// start; "^(?:a|b)$" is fine.
func checkPattern(p string) string {
	if p == "" || len(p) > MaxPattern {
		return fmt.Sprintf("is required for a string field, at most %d bytes", MaxPattern)
	}
	if _, err := regexp.Compile(p); err != nil {
		return "is not a valid RE2 pattern: " + err.Error()
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "is not a valid RE2 pattern: " + err.Error()
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 3 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return "must be anchored: ^ at the start and $ at the end of the whole expression (without (?m))"
	}
	return ""
}

func absoluteURI(s string) bool {
	if s == "" || len(s) > MaxTypeURI || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && (u.Host != "" || u.Opaque != "")
}

// Reason names the rule a request broke; for logs and tests.
type Reason string

// The refusal reasons.
const (
	ReasonTooLarge     Reason = "too_large"     // more than MaxRequestBytes, MaxEntries or MaxCanonicalBytes
	ReasonMalformed    Reason = "malformed"     // not JSON, invalid UTF-8, trailing data, nesting too deep
	ReasonNotArray     Reason = "not_array"     // null, an object, a string, ...
	ReasonEmpty        Reason = "empty"         // []
	ReasonNotObject    Reason = "not_object"    // an entry that is not a JSON object
	ReasonDuplicate    Reason = "duplicate"     // a JSON member given twice in one object
	ReasonType         Reason = "type"          // type missing or not a string
	ReasonUnknownType  Reason = "unknown_type"  // a type the Brand does not declare
	ReasonUnknownField Reason = "unknown_field" // a member the type does not declare
	ReasonMissingField Reason = "missing_field" // a required field absent
	ReasonKind         Reason = "kind"          // a value of the wrong JSON kind
	ReasonValue        Reason = "value"         // outside the pattern or the enum, empty, too long, repeated in an array
	ReasonScope        Reason = "scope"         // the type's scope is not in the request's scope
	ReasonCombination  Reason = "combination"   // identical entries, or two entries of a single type
)

// Error is a refused request: the answer is invalid_authorization_details
// with Description as error_description.
type Error struct {
	Reason      Reason
	Description string
}

// Error implements error.
func (e *Error) Error() string { return "authorization_details: " + e.Description }

func refuse(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Description: fmt.Sprintf(format, args...)}
}

// Value is one member of an entry: a string, or an array of strings.
type Value struct {
	// Array is true for a JSON array.
	Array bool
	// Values holds the string (one) or the array's strings, in order.
	Values []string
}

// Entry is one accepted authorization_details object.
type Entry struct {
	// Type is the type URI.
	Type string
	// Members are the entry's members other than "type", by name.
	Members map[string]Value
}

// Names are the member names of e, sorted.
func (e Entry) Names() []string {
	out := make([]string, 0, len(e.Members))
	for n := range e.Members {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Canonical is the canonical JSON of one entry.
func (e Entry) Canonical() string {
	b, _ := json.Marshal(e.object()) // strings only: cannot fail
	return string(b)
}

func (e Entry) object() map[string]any {
	m := make(map[string]any, len(e.Members)+1)
	m["type"] = e.Type
	for n, v := range e.Members {
		if v.Array {
			m[n] = v.Values
		} else {
			m[n] = v.Values[0]
		}
	}
	return m
}

// Encode is the canonical JSON array of entries; "" for none.
func Encode(entries []Entry) string {
	if len(entries) == 0 {
		return ""
	}
	objs := make([]map[string]any, len(entries))
	for i, e := range entries {
		objs[i] = e.object()
	}
	b, _ := json.Marshal(objs)
	return string(b)
}

// Parse validates a PA's authorization_details against the Brand's types
// and the request's scope ids, and returns the accepted entries in request
// order and their canonical JSON. Every refusal is an *Error; nothing is
// ever dropped.
func Parse(raw string, types []Type, requested []string) ([]Entry, string, *Error) {
	if len(raw) > MaxRequestBytes {
		return nil, "", refuse(ReasonTooLarge, "authorization_details is larger than %d bytes", MaxRequestBytes)
	}
	doc, err := decodeStrict([]byte(raw))
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, "", e
		}
		return nil, "", refuse(ReasonMalformed, "authorization_details is not valid JSON")
	}
	arr, ok := doc.([]any)
	switch {
	case !ok:
		return nil, "", refuse(ReasonNotArray, "authorization_details must be a JSON array of objects (RFC 9396 section 2)")
	case len(arr) == 0:
		return nil, "", refuse(ReasonEmpty, "authorization_details must not be an empty array")
	case len(arr) > MaxEntries:
		return nil, "", refuse(ReasonTooLarge, "authorization_details holds more than %d entries", MaxEntries)
	}
	byURI := make(map[string]*Type, len(types))
	for i := range types {
		byURI[types[i].Type] = &types[i]
	}
	entries := make([]Entry, 0, len(arr))
	seen := map[string]bool{}
	perType := map[string]int{}
	for i, item := range arr {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, "", refuse(ReasonNotObject, "authorization_details[%d] is not a JSON object", i)
		}
		tv, present := obj["type"]
		uri, isString := tv.(string)
		if !present || !isString || uri == "" {
			return nil, "", refuse(ReasonType, "authorization_details[%d].type must be a non-empty string", i)
		}
		t := byURI[uri]
		if t == nil {
			return nil, "", refuse(ReasonUnknownType, "authorization_details[%d].type is not a type this authorization server supports", i)
		}
		e, rerr := parseEntry(i, obj, t)
		if rerr != nil {
			return nil, "", rerr
		}
		if !slices.Contains(requested, t.Scope) {
			return nil, "", refuse(ReasonScope, "authorization_details[%d] needs scope %q in the request's scope", i, t.Scope)
		}
		c := e.Canonical()
		if seen[c] {
			return nil, "", refuse(ReasonCombination, "authorization_details[%d] repeats an earlier entry", i)
		}
		seen[c] = true
		perType[uri]++
		if t.Combination == CombineSingle && perType[uri] > 1 {
			return nil, "", refuse(ReasonCombination, "authorization_details[%d]: type %s allows one entry per request", i, uri)
		}
		entries = append(entries, e)
	}
	canonical := Encode(entries)
	if len(canonical) > MaxCanonicalBytes {
		return nil, "", refuse(ReasonTooLarge, "authorization_details is larger than %d bytes once normalized", MaxCanonicalBytes)
	}
	return entries, canonical, nil
}

func parseEntry(i int, obj map[string]any, t *Type) (Entry, *Error) {
	e := Entry{Type: t.Type, Members: map[string]Value{}}
	fields := make(map[string]*Field, len(t.Fields))
	for k := range t.Fields {
		fields[t.Fields[k].Name] = &t.Fields[k]
	}
	names := make([]string, 0, len(obj))
	for n := range obj {
		names = append(names, n)
	}
	slices.Sort(names) // deterministic: the first problem by name
	for _, n := range names {
		if n == "type" {
			continue
		}
		f := fields[n]
		if f == nil {
			return Entry{}, refuse(ReasonUnknownField, "authorization_details[%d] has member %q, which its type does not define", i, n)
		}
		v, err := checkValue(i, f, obj[n])
		if err != nil {
			return Entry{}, err
		}
		e.Members[n] = v
	}
	for _, f := range t.Fields {
		if _, ok := obj[f.Name]; f.Required && !ok {
			return Entry{}, refuse(ReasonMissingField, "authorization_details[%d] lacks the required member %q", i, f.Name)
		}
	}
	return e, nil
}

func checkValue(i int, f *Field, v any) (Value, *Error) {
	path := fmt.Sprintf("authorization_details[%d].%s", i, f.Name)
	switch f.Kind {
	case KindString, KindEnum:
		s, ok := v.(string)
		if !ok {
			return Value{}, refuse(ReasonKind, "%s must be a string", path)
		}
		if !fieldAllows(f, s) {
			return Value{}, refuse(ReasonValue, "%s has a value its type does not allow", path)
		}
		return Value{Values: []string{s}}, nil
	case KindEnumArray:
		arr, ok := v.([]any)
		if !ok {
			return Value{}, refuse(ReasonKind, "%s must be an array of strings", path)
		}
		if len(arr) == 0 {
			return Value{}, refuse(ReasonValue, "%s must not be empty", path)
		}
		out := make([]string, 0, len(arr))
		for k, item := range arr {
			s, ok := item.(string)
			if !ok {
				return Value{}, refuse(ReasonKind, "%s[%d] must be a string", path, k)
			}
			if !fieldAllows(f, s) {
				return Value{}, refuse(ReasonValue, "%s[%d] is not an allowed value", path, k)
			}
			if slices.Contains(out, s) {
				return Value{}, refuse(ReasonValue, "%s[%d] repeats a value", path, k)
			}
			out = append(out, s)
		}
		return Value{Array: true, Values: out}, nil
	}
	return Value{}, refuse(ReasonValue, "%s cannot be checked", path) // unreachable for checked types
}

func fieldAllows(f *Field, s string) bool {
	if !cleanValue(s) {
		return false
	}
	if f.Kind == KindString {
		re, err := compiled(f.Pattern)
		return err == nil && re.MatchString(s)
	}
	return slices.Contains(f.Values, s)
}

// maxDepth bounds JSON nesting; accepted details need 3 levels.
const maxDepth = 8

// decodeStrict decodes one JSON value with the strict reader of package
// jws: invalid UTF-8, duplicate object members, nesting deeper than
// maxDepth and trailing data are refused; numbers stay json.Number.
func decodeStrict(raw []byte) (any, error) {
	v, err := jws.DecodeValue(raw, maxDepth)
	if err != nil {
		return nil, named(err)
	}
	return v, nil
}

// named is a strict-reader error as the refusal of authorization_details
// it is (syntax errors stay as they are).
func named(err error) error {
	var dup *jws.DuplicateError
	switch {
	case errors.Is(err, jws.ErrInvalidUTF8):
		return refuse(ReasonMalformed, "authorization_details is not valid UTF-8 (or escapes a lone surrogate)")
	case errors.Is(err, jws.ErrTrailingData):
		return refuse(ReasonMalformed, "authorization_details has data after the JSON value")
	case errors.Is(err, jws.ErrTooDeep):
		return refuse(ReasonMalformed, "authorization_details is nested too deeply")
	case errors.As(err, &dup):
		return refuse(ReasonDuplicate, "authorization_details has member %q twice in one object", dup.Name)
	}
	return err
}

// Decode reads stored (or signed) details back into entries without the
// Brand's declarations: a non-empty array of objects whose "type" is a
// string and whose other members are strings or arrays of strings. ""
// gives no entries. It is for details pactd accepted itself; anything
// else is an error.
func Decode(canonical string) ([]Entry, error) {
	if canonical == "" {
		return nil, nil
	}
	doc, err := decodeStrict([]byte(canonical))
	if err != nil {
		return nil, fmt.Errorf("authorization_details: %w", err)
	}
	arr, ok := doc.([]any)
	if !ok || len(arr) == 0 {
		return nil, errors.New("authorization_details: not a non-empty array")
	}
	out := make([]Entry, 0, len(arr))
	for i, item := range arr {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("authorization_details[%d]: not an object", i)
		}
		uri, ok := obj["type"].(string)
		if !ok || uri == "" {
			return nil, fmt.Errorf("authorization_details[%d]: no type", i)
		}
		e := Entry{Type: uri, Members: map[string]Value{}}
		for n, v := range obj {
			if n == "type" {
				continue
			}
			switch v := v.(type) {
			case string:
				e.Members[n] = Value{Values: []string{v}}
			case []any:
				vals := make([]string, 0, len(v))
				for _, s := range v {
					str, ok := s.(string)
					if !ok {
						return nil, fmt.Errorf("authorization_details[%d].%s: not an array of strings", i, n)
					}
					vals = append(vals, str)
				}
				e.Members[n] = Value{Array: true, Values: vals}
			default:
				return nil, fmt.Errorf("authorization_details[%d].%s: not a string or an array of strings", i, n)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Canonicalize is the canonical JSON of any JSON value (members sorted,
// no whitespace; jws.Canonical), refusing duplicate members; for comparing
// a token's claim with the grant.
func Canonicalize(raw []byte) (string, error) {
	b, err := jws.Canonical(raw, maxDepth)
	if err != nil {
		return "", named(err)
	}
	return string(b), nil
}

// Find returns the declared type with the given URI, or nil.
func Find(types []Type, uri string) *Type {
	for i := range types {
		if types[i].Type == uri {
			return &types[i]
		}
	}
	return nil
}

// Words are the consent words of an entry, built only from the Brand's
// declarations and the entry, so every frontend shows the same text.
// When the type has a ConsentTemplate, they are the template with the
// entry's values in its placeholders (array values joined by ", "; a field
// the entry lacks renders as nothing): "Only order 1002: cancel it".
// Otherwise (the default) they are the type's description, then for each
// field the entry carries, in declaration order, its label and its value
// (array values joined by ", "), fields separated by "; ". Example:
// "Cancel an order: order 1002; actions cancel". A type the Brand no
// longer declares gives its URI and the members by name.
func Words(t *Type, e Entry) string {
	if t != nil && t.ConsentTemplate != "" {
		if w, ok := renderTemplate(t.ConsentTemplate, e); ok {
			return w
		}
	}
	var parts []string
	head := e.Type
	if t != nil {
		head = t.Description
		for _, f := range t.Fields {
			if v, ok := e.Members[f.Name]; ok {
				parts = append(parts, f.Label+" "+strings.Join(v.Values, valueSep))
			}
		}
	} else {
		for _, n := range e.Names() {
			parts = append(parts, n+" "+strings.Join(e.Members[n].Values, valueSep))
		}
	}
	if len(parts) == 0 {
		return head
	}
	return head + ": " + strings.Join(parts, "; ")
}

// Match is the rule that binds a delegation token to its grant: the
// token's authorization_details claim (nil when absent) must say exactly
// what the grant in the store says. Both absent is a scope-only grant;
// otherwise the claim, canonicalized, must equal the grant's canonical
// JSON byte for byte. A grant's details never change, so a difference
// means the token was not minted from this grant (or the grant's details
// would be dropped or widened by honouring it): the token is refused. ok
// is true when they match; entries are then the grant's.
func Match(grant string, claim []byte) (entries []Entry, ok bool) {
	if grant == "" || claim == nil {
		return nil, grant == "" && claim == nil
	}
	c, err := Canonicalize(claim)
	if err != nil || c != grant {
		return nil, false
	}
	entries, err = Decode(grant)
	return entries, err == nil
}

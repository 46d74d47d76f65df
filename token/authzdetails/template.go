package authzdetails

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A consent template is a Brand's own wording of an entry of one type
// (Type.ConsentTemplate): literal text with placeholders "{field_name}"
// that name the type's fields; "{{" and "}}" write literal braces.
// Example: "Only order {order_id}: cancel it".
const (
	// MaxTemplate bounds a consent template (characters): twice a
	// description (MaxDescription), because a template stands for the
	// description and the field list together, and still one sentence a
	// User reads at a glance on a consent page.
	MaxTemplate = 400
	// MaxTemplateWords bounds the longest words a template can render
	// (bytes), checked when the Brand declares it from the longest value
	// each placeholder's field allows: room for several full-length values
	// and the text, while a grant's words (up to MaxEntries entries, on
	// every ListGrants row) stay a few KiB.
	MaxTemplateWords = 2048
)

// segment is one piece of a parsed template: literal text, or (field
// non-empty) a placeholder.
type segment struct {
	text, field string
}

// parseTemplate splits a template into literal text and placeholders, or
// says which brace rule it breaks. It does not look at field names.
func parseTemplate(s string) ([]segment, string) {
	var out []segment
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '}':
			return nil, fmt.Sprintf("has a single \"}\" at byte %d: write a literal } as \"}}\"", i)
		case c == '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 || strings.IndexByte(s[i+1:i+1+end], '{') >= 0 {
				return nil, fmt.Sprintf("has a \"{\" at byte %d that no \"}\" closes: write a literal { as \"{{\"", i)
			}
			if end == 0 {
				return nil, fmt.Sprintf("has an empty placeholder \"{}\" at byte %d", i)
			}
			if lit.Len() > 0 {
				out = append(out, segment{text: lit.String()})
				lit.Reset()
			}
			out = append(out, segment{field: s[i+1 : i+1+end]})
			i += end + 1
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		out = append(out, segment{text: lit.String()})
	}
	return out, ""
}

// unsafeWordsRune reports the characters no text that ends up in the
// consent words may hold (templates, descriptions, labels, enum values and
// the values a PA sends): control characters (C0, DEL, C1) and the
// bidirectional embedding, override and isolate controls, which make text
// display in another order than it reads. The consent words must say what
// they show: a PA's "1002\u202e..." must not make an entry read as another.
func unsafeWordsRune(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// checkTemplate returns why template s is not acceptable for a type with
// these fields, or "". Empty means no template and is fine.
func checkTemplate(s string, fields []Field) string {
	if s == "" {
		return ""
	}
	switch {
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	case strings.TrimSpace(s) == "":
		return "must not be blank (leave it empty for the default words)"
	case utf8.RuneCountInString(s) > MaxTemplate:
		return fmt.Sprintf("must be at most %d characters", MaxTemplate)
	case strings.ContainsFunc(s, unsafeWordsRune):
		return "must not contain control characters or bidirectional formatting characters"
	}
	segs, problem := parseTemplate(s)
	if problem != "" {
		return problem
	}
	byName := make(map[string]*Field, len(fields))
	for i := range fields {
		byName[fields[i].Name] = &fields[i]
	}
	longest, placeholders := 0, 0
	for _, sg := range segs {
		if sg.field == "" {
			longest += len(sg.text)
			continue
		}
		f := byName[sg.field]
		if f == nil {
			return fmt.Sprintf("has placeholder {%s}, which is not a field of this type", sg.field)
		}
		placeholders++
		longest += longestValue(f)
	}
	if placeholders == 0 {
		return "must name at least one field in a placeholder such as {" + firstFieldName(fields) + "}, so the words say which resource an entry is for"
	}
	if longest > MaxTemplateWords {
		return fmt.Sprintf("can render %d bytes with the longest values its fields allow; at most %d", longest, MaxTemplateWords)
	}
	return ""
}

// firstFieldName is the first field's name, for an example in a message.
func firstFieldName(fields []Field) string {
	if len(fields) == 0 {
		return "field_name"
	}
	return fields[0].Name
}

// longestValue is the most bytes a value of f renders as: MaxValueBytes
// for a string (a pattern's own bound is not computed), the longest
// allowed value for an enum, all allowed values joined for an array (its
// values are distinct).
func longestValue(f *Field) int {
	switch f.Kind {
	case KindEnum:
		n := 0
		for _, v := range f.Values {
			n = max(n, len(v))
		}
		return n
	case KindEnumArray:
		n := 0
		for i, v := range f.Values {
			if i > 0 {
				n += len(valueSep)
			}
			n += len(v)
		}
		return n
	}
	return MaxValueBytes
}

// valueSep joins an array's values in the words, template or default.
const valueSep = ", "

// renderTemplate is the words of e under template s; ok is false when s
// cannot be parsed or the words would exceed MaxTemplateWords (a template
// checked against the type's current fields never does, but an entry
// accepted under earlier declarations might carry longer values), and the
// caller then uses the default words. An absent field renders as nothing.
func renderTemplate(s string, e Entry) (words string, ok bool) {
	segs, problem := parseTemplate(s)
	if problem != "" {
		return "", false
	}
	var b strings.Builder
	for _, sg := range segs {
		if sg.field == "" {
			b.WriteString(sg.text)
		} else if v, present := e.Members[sg.field]; present {
			b.WriteString(strings.Join(v.Values, valueSep))
		}
		if b.Len() > MaxTemplateWords {
			return "", false
		}
	}
	return b.String(), true
}

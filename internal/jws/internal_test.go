package jws

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendDecode(t *testing.T) {
	t.Parallel()
	// ok: every length round-trips against the standard encoder, and
	// Encode agrees with it.
	for n := range 200 {
		src := make([]byte, n)
		_, _ = rand.Read(src)
		enc := base64.RawURLEncoding.EncodeToString(src)
		got, ok := AppendDecode(nil, enc)
		if !ok || !bytes.Equal(got, src) {
			t.Fatalf("len %d: ok %v", n, ok)
		}
		if e := Encode(src); e != enc {
			t.Fatalf("Encode len %d = %q, want %q", n, e, enc)
		}
	}
	for _, bad := range []string{"A", "AAAAA", "AA==", "AA=", "A+A/", "AA\nAA", "AA\rAA", "AAAA\r\n", "AA AA", "AA\tA", "AB", "AAB", "ÿÿÿÿ", "AA.A"} {
		t.Run("fail/"+strconv.Quote(bad), func(t *testing.T) {
			if _, ok := AppendDecode(nil, bad); ok {
				t.Fatalf("AppendDecode(%q) accepted", bad)
			}
		})
	}
}

func TestDecodeTable(t *testing.T) {
	t.Parallel()
	if len(decodeTable) != 256 {
		t.Fatalf("table has %d entries", len(decodeTable))
	}
	for c := range 256 {
		want := byte(0xff)
		if i := strings.IndexByte(encodeTable, byte(c)); i >= 0 {
			want = byte(i)
		}
		if decodeTable[c] != want {
			t.Fatalf("decodeTable[%#x] = %#x, want %#x", c, decodeTable[c], want)
		}
	}
}

// FuzzDecode compares the decoder with encoding/base64's strict raw URL
// decoder, which additionally skips \r and \n (ours refuses them).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "AA", "AAA", "AAAA", "AB", "AAB", "_-_-", "A", "AA==", "AA\nAA", "eyJhbGciOiJFUzI1NiJ9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := AppendDecode(nil, s)
		want, err := base64.RawURLEncoding.Strict().DecodeString(s)
		if ok && (err != nil || !bytes.Equal(got, want)) {
			t.Fatalf("accepted %q that the standard decoder refuses or decodes differently", s)
		}
		if !ok && err == nil && !strings.ContainsAny(s, "\r\n") {
			t.Fatalf("refused %q that the standard decoder accepts", s)
		}
		if ok && Encode(got) != s {
			t.Fatalf("accepted non-canonical %q", s)
		}
	})
}

// walk returns the members our reader sees and the Object it used.
func walk(b []byte) (map[string]Value, *Object, bool) {
	out := map[string]Value{}
	o := NewObject(b)
	for {
		name, v, ok := o.Next()
		if !ok {
			break
		}
		n := string(name.Raw)
		if name.Escaped {
			d, _ := unescape(name.Raw)
			n = string(d)
		}
		out[n] = v
	}
	return out, &o, o.Valid()
}

// jsonDepth returns the nesting depth of a valid JSON text.
func jsonDepth(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, maxDepth := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return maxDepth
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			maxDepth = max(maxDepth, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// stdScan reads b with encoding/json's token stream and reports whether
// any object, at any depth, names a member twice (compared as encoding/json
// decodes names) and whether any decoded string holds U+FFFD (which is
// where encoding/json puts an unpaired surrogate escape).
func stdScan(b []byte) (dup, replacement bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj   bool
		key   bool // the next token in this object is a member name
		names map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return dup, replacement
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		s, isString := tok.(string)
		if isString && strings.ContainsRune(s, utf8.RuneError) {
			replacement = true
		}
		if isString && top != nil && top.obj && top.key {
			dup = dup || top.names[s]
			top.names[s] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, key: true, names: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].key = true
		}
	}
}

func TestObject(t *testing.T) {
	t.Parallel()
	ok := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":"b","c":[1,2,{"d":null}],"e":true,"f":false,"g":-0.5e+3}`,
		`{"\u00e9":"\ud83d\ude00"}`, "{\"a\":\"\u00e9\"}\n", `{"a":{"x":1,"y":{"x":2}},"x":3}`,
		`{"a":["\ud83d\ude00","\n\u0041",{"\ud83d\ude00":1,"\u00e9":2,"é\u0301":3}]}`,
		`{"m0":0,"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,"m10":10,"m11":11,"m12":12,"m13":13,"m14":14,"m15":15,"m16":16,"m17":17}`,
	}
	bad := []string{
		``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a":1}x`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`,
		`{"a":tru}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", `{"a":"\u12"}`, `{'a':1}`, `{"a":1 "b":2}`,
		`{"a":[1,]}`, `{"a":{"b"}}`, `{"a":-}`, `{"a":1e}`, `{"\ud800":1}`,
		`{"a":{"b":"\ud800"}}`, `{"a":["x\udc00"]}`, `{"a":{"\ud83dx":1}}`, `{"a":["\ud83d\u0041"]}`,
	}
	dups := []string{
		`{"a":1,"a":1}`, `{"alg":"ES256","\u0061lg":"none"}`, `{"a\/b":1,"a/b":2}`, `{"\u00e9":1,"é":2}`,
		`{"m0":0,"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,"m10":10,"m11":11,"m12":12,"m13":13,"m14":14,"m15":15,"m16":16,"m17":17,"m16":0}`,
		`{"m0":0,"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,"m10":10,"m11":11,"m12":12,"m13":13,"m14":14,"m15":15,"m16":16,"m17":17,"m3":0}`,
		// Nested objects follow the same rule as the top level.
		`{"a":{"x":1,"x":2}}`, `{"a":[{"b":{"\u0078":1,"x":2}}]}`,
		`{"a":{"m0":0,"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,"m10":10,"m11":11,"m12":12,"m13":13,"m14":14,"m15":15,"m16":16,"m17":17,"m17":0}}`,
	}
	for _, s := range ok {
		if _, _, good := walk([]byte(s)); !good {
			t.Errorf("refused %q", s)
		}
	}
	for _, s := range bad {
		if _, _, good := walk([]byte(s)); good {
			t.Errorf("accepted %q", s)
		}
	}
	for _, s := range dups {
		if _, o, good := walk([]byte(s)); good || !o.Duplicate() {
			t.Errorf("%q: accepted %v, duplicate %v; want refused as a duplicate", s, good, o.Duplicate())
		}
	}
	// Lone surrogates are refused when the string is decoded.
	if _, ok := unescape([]byte(`\ud83d`)); ok {
		t.Error("lone high surrogate decoded")
	}
	if _, ok := unescape([]byte(`\ude00`)); ok {
		t.Error("lone low surrogate decoded")
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	m, ok := Members([]byte(`{"\u0061lg":"ES\u0032\u00356","n":1.5e9,"o":{"a":[1]},"e":"a\"b"}`))
	if !ok {
		t.Fatal("refused a valid object")
	}
	if v, p, s := StringMember(m, "alg"); !p || !s || v != "ES256" {
		t.Fatalf("alg = %q %v %v", v, p, s)
	}
	if v, p, s := StringMember(m, "e"); !p || !s || v != `a"b` {
		t.Fatalf("e = %q %v %v", v, p, s)
	}
	if _, p, s := StringMember(m, "n"); !p || s {
		t.Fatalf("n as string: present %v string %v", p, s)
	}
	if _, p, _ := StringMember(m, "x"); p {
		t.Fatal("absent member present")
	}
	if v, p, ok := NumericDateMember(m, "n"); !p || !ok || v != 1.5e9 {
		t.Fatalf("n = %v %v %v", v, p, ok)
	}
	if _, p, ok := NumericDateMember(m, "o"); !p || ok {
		t.Fatalf("o as number: present %v ok %v", p, ok)
	}
	if string(m["o"]) != `{"a":[1]}` {
		t.Fatalf("o text = %s", m["o"])
	}
	for _, s := range []string{`{"a":1,"\u0061":2}`, `{"a":1}{}`, `[]`, `{"a":"\ud800"`, "{\"a\":\"\xff\"}"} {
		if _, ok := Members([]byte(s)); ok {
			t.Errorf("Members accepted %q", s)
		}
	}
}

// FuzzJSONObject holds our reader to encoding/json: whatever it accepts is
// valid JSON with the same members and values; whatever valid UTF-8 object
// of moderate depth encoding/json accepts, it accepts, unless two member
// names of one object, at any depth, are equal (encoding/json keeps the
// last) or a string holds an unpaired surrogate escape (encoding/json
// substitutes U+FFFD). The tree reader (DecodeValue) is the same lexer and
// must agree with the object reader on every such text.
func FuzzJSONObject(f *testing.F) {
	for _, s := range []string{
		`{"alg":"ES256","kid":"k"}`, `{"iss":"x","aud":["a"],"iat":1.5e9,"n":null}`, `{"\u0061lg":"none"}`,
		`{"a":{"b":[1,{"c":"\ud83d\ude00"}]}}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, `[1]`, `{"a":1}}`, `{"a":1,"\u0061":2}`,
	} {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"a":{"x":1,"x":2}}`, `{"a":["\udc00"]}`, `{"a":{"\u0078":[],"x":{}}}`, `{"a":[[[[1]]]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, o, ok := walk(b)
		var std map[string]any
		stdErr := json.Unmarshal(b, &std)
		if ok {
			if stdErr != nil || std == nil {
				t.Fatalf("accepted %q that encoding/json refuses: %v", b, stdErr)
			}
			for name, v := range got {
				sv, present := std[name]
				if !present {
					t.Fatalf("member %q unknown to encoding/json", name)
				}
				switch v.Kind {
				case KindString:
					s, ok := v.String()
					if ok && sv != s {
						t.Fatalf("member %q: %q vs %q", name, s, sv)
					}
				case KindNumber:
					want, err := strconv.ParseFloat(string(v.Raw), 64)
					if n, ok := v.NumericDate(); ok && (err != nil || n != want) {
						t.Fatalf("member %q: %v vs %v", name, n, want)
					}
				}
			}
			return
		}
		_, treeErr := DecodeValue(b, MaxDepth+1)
		if len(bytes.TrimSpace(b)) > 0 && bytes.TrimSpace(b)[0] == '{' && (treeErr == nil) != ok {
			t.Fatalf("%q: object reader valid %v, tree reader %v", b, ok, treeErr)
		}
		if o.Duplicate() {
			// encoding/json must see the same repeated name.
			if dup, _ := stdScan(b); !dup {
				t.Fatalf("reported a duplicate in %q, encoding/json sees none", b)
			}
			return
		}
		if stdErr == nil && std != nil && utf8.Valid(b) && jsonDepth(b) <= MaxDepth {
			if dup, replaced := stdScan(b); !dup && !replaced {
				t.Fatalf("refused %q that encoding/json accepts", b)
			}
		}
	})
}

func TestNumericDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lit  string
		want float64
		ok   bool
	}{
		{"0", 0, true}, {"1780000000", 1780000000, true}, {"-5", -5, true}, {"1.5", 1.5, true},
		{"1.78e9", 1.78e9, true}, {"999999999999999", 0, false}, {"1e12", 0, false}, {"1e400", 0, false},
		{"-1e400", 0, false}, {"123456789012345678", 0, false},
	}
	for _, tt := range tests {
		got, ok := Value{Kind: KindNumber, Raw: []byte(tt.lit)}.NumericDate()
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("%s: %v %v, want %v %v", tt.lit, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := (Value{Kind: KindString, Raw: []byte("1")}).NumericDate(); ok {
		t.Error("a string read as a NumericDate")
	}
}

func TestHeaderMembers(t *testing.T) {
	t.Parallel()
	if _, ok := HeaderMembers([]byte(`{ "alg" : "ES256" ,"kid":"k"}`)); !ok {
		t.Fatal("ok/inner-whitespace: refused")
	}
	for _, s := range []string{` {"alg":"ES256"}`, `{"alg":"ES256"} `, "{\"alg\":\"ES256\"}\n", "\r\n{\"alg\":\"ES256\"}", ``, `{`} {
		if _, ok := HeaderMembers([]byte(s)); ok {
			t.Errorf("fail/%q: accepted", s)
		}
		if o := NewHeader([]byte(s)); o.Valid() {
			t.Errorf("fail/%q: NewHeader valid before walking", s)
		}
	}
}

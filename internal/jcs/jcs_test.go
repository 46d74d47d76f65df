package jcs_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"pactd.dev/pactd/internal/jcs"
)

// TestBriefExample: numbers lose their fraction and exponent, members sort,
// and the raw é stays raw.
func TestBriefExample(t *testing.T) {
	got, err := jcs.Canonicalize([]byte(`{"b":1.0,"a":"é","c":[1e2,{"z":null,"y":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"a":"é","b":1,"c":[100,{"y":true,"z":null}]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestReferenceData runs the cyberphone/json-canonicalization test data
// (testdata/README.md names its source and commits).
func TestReferenceData(t *testing.T) {
	inputs, err := filepath.Glob("testdata/input/*.json")
	if err != nil || len(inputs) != 7 {
		t.Fatalf("want 7 reference inputs, got %d (%v)", len(inputs), err)
	}
	// The repository has no output for arrays.json; its canonical form by
	// RFC 8785 §3.2: members sorted by code units ("1" < "10" < "d").
	derived := map[string]string{"arrays.json": `[56,{"1":[],"10":null,"d":true}]`}
	for _, in := range inputs {
		name := filepath.Base(in)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := derived[name]
			if !ok {
				b, err := os.ReadFile(filepath.Join("testdata/output", name))
				if err != nil {
					t.Fatal(err)
				}
				want = string(b)
			}
			got, err := jcs.Canonicalize(src)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		})
	}
}

// TestSimpleStringHex: the reference data's byte-level expectation
// (testdata/outhex/simpleString.txt in the same repository).
func TestSimpleStringHex(t *testing.T) {
	want, _ := hex.DecodeString(strings.ReplaceAll("22 74 68 69 73 20 69 73 20 61 20 74 65 73 74 20 73 74 72 69 6E 67 20 31 32 33 35 22", " ", ""))
	got, err := jcs.Canonicalize([]byte(`    "this is a test string 1235"`))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got %x, %v; want %x", got, err, want)
	}
}

// TestRFC8785Section32: the example of RFC 8785 §3.2.2 and the sorting
// example of §3.2.3, with the UTF-8 bytes §3.2.4 gives for the latter.
func TestRFC8785Section32(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	got, err := jcs.Canonicalize([]byte(in))
	if err != nil || string(got) != want {
		t.Fatalf("§3.2.2: got %s, %v\nwant %s", got, err, want)
	}

	sorting := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	got, err = jcs.Canonicalize([]byte(sorting))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	dec := json.NewDecoder(bytes.NewReader(got))
	_, _ = dec.Token()
	for dec.More() {
		_, _ = dec.Token() // the name
		v, _ := dec.Token()
		order = append(order, v.(string))
	}
	wantOrder := []string{"Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis", "Euro Sign", "Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Fatalf("§3.2.3 order %q, want %q", order, wantOrder)
	}
	// §3.2.4 gives the UTF-8 of the sorted property names in order.
	wantHex := "7b225c72223a2243617272696167652052657475726e222c2231223a224f6e65222c22c280223a22436f6e74726f6c222c22c3b6223a224c6174696e20536d616c6c204c6574746572204f2057697468204469616572657369732" +
		"22c22e282ac223a224575726f205369676e222c22f09f9880223a22456d6f6a693a204772696e6e696e672046616365222c22efacb3223a22486562726577204c657474657220446" +
		"16c657420576974682044616765736822" + "7d"
	if hex.EncodeToString(got) != wantHex {
		t.Fatalf("§3.2.4 bytes\ngot  %x\nwant %s", got, wantHex)
	}
}

// appendixB is RFC 8785 Appendix B: IEEE 754 bits and their serialization.
var appendixB = []struct{ bits, want string }{
	{"0000000000000000", "0"},
	{"8000000000000000", "0"},
	{"0000000000000001", "5e-324"},
	{"8000000000000001", "-5e-324"},
	{"7fefffffffffffff", "1.7976931348623157e+308"},
	{"ffefffffffffffff", "-1.7976931348623157e+308"},
	{"4340000000000000", "9007199254740992"},
	{"c340000000000000", "-9007199254740992"},
	{"4430000000000000", "295147905179352830000"},
	{"44b52d02c7e14af5", "9.999999999999997e+22"},
	{"44b52d02c7e14af6", "1e+23"},
	{"44b52d02c7e14af7", "1.0000000000000001e+23"},
	{"444b1ae4d6e2ef4e", "999999999999999700000"},
	{"444b1ae4d6e2ef4f", "999999999999999900000"},
	{"444b1ae4d6e2ef50", "1e+21"},
	{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
	{"3eb0c6f7a0b5ed8d", "0.000001"},
	{"41b3de4355555553", "333333333.3333332"},
	{"41b3de4355555554", "333333333.33333325"},
	{"41b3de4355555555", "333333333.3333333"},
	{"41b3de4355555556", "333333333.3333334"},
	{"41b3de4355555557", "333333333.33333343"},
	{"becbf647612f3696", "-0.0000033333333333333333"},
	{"43143ff3c1cb0959", "1424953923781206.2"},
	// The reference data's README samples.
	{"4340000000000001", "9007199254740994"},
	{"4340000000000002", "9007199254740996"},
}

func double(t *testing.T, bits string) float64 {
	b, err := hex.DecodeString(bits)
	if err != nil || len(b) != 8 {
		t.Fatalf("bad bits %q", bits)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}

// TestAppendixB writes each double directly, and again through
// Canonicalize from Go's own shortest text and from a long exact text, so
// the reader's number path is held to the same table.
func TestAppendixB(t *testing.T) {
	for _, tc := range appendixB {
		f := double(t, tc.bits)
		if got := string(jcs.AppendNumber(nil, f)); got != tc.want {
			t.Errorf("%s: AppendNumber %q, want %q", tc.bits, got, tc.want)
		}
		for _, text := range []string{
			jsonNumber(f),
			strconv.FormatFloat(f, 'e', 40, 64),
		} {
			got, err := jcs.Canonicalize([]byte(text))
			if err != nil || string(got) != tc.want {
				t.Errorf("%s: Canonicalize(%s) = %q, %v; want %q", tc.bits, text, got, err, tc.want)
			}
		}
	}
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// TestRefusals: each refusal with its named reason; the positive control is
// every test above.
func TestRefusals(t *testing.T) {
	deep := strings.Repeat("[", jcs.MaxDepth+1) + strings.Repeat("]", jcs.MaxDepth+1)
	okDeep := strings.Repeat("[", jcs.MaxDepth) + strings.Repeat("]", jcs.MaxDepth)
	if _, err := jcs.Canonicalize([]byte(okDeep)); err != nil {
		t.Fatalf("depth %d refused: %v", jcs.MaxDepth, err)
	}
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"invalid UTF-8 in a string", "\"\xff\"", jcs.ErrInvalidUTF8},
		{"overlong UTF-8", "\"\xc0\xaf\"", jcs.ErrInvalidUTF8},
		{"UTF-8 surrogate bytes", "\"\xed\xa0\x80\"", jcs.ErrInvalidUTF8},
		{"lone high surrogate", `"\ud800"`, jcs.ErrLoneSurrogate},
		{"high surrogate then text", `"\ud800x"`, jcs.ErrLoneSurrogate},
		{"high surrogate then BMP escape", `"\ud800\u0041"`, jcs.ErrLoneSurrogate},
		{"lone low surrogate", `"\udc00"`, jcs.ErrLoneSurrogate},
		{"reversed pair", `"\ude00\ud83d"`, jcs.ErrLoneSurrogate},
		{"lone surrogate in a name", `{"\ud800":1}`, jcs.ErrLoneSurrogate},
		{"duplicate name", `{"a":1,"a":2}`, jcs.ErrDuplicateName},
		{"duplicate name once unescaped", `{"a":1,"\u0061":2}`, jcs.ErrDuplicateName},
		{"duplicate name nested", `[{"x":{"k":1,"k":1}}]`, jcs.ErrDuplicateName},
		{"number above double range", `1e400`, jcs.ErrNumberRange},
		{"negative number above double range", `-1.8e308`, jcs.ErrNumberRange},
		{"number below the smallest double", `1e-400`, jcs.ErrNumberRange},
		{"too deep", deep, jcs.ErrTooDeep},
		{"too large", `"` + strings.Repeat("a", jcs.MaxInputBytes) + `"`, jcs.ErrTooLarge},
		{"empty", ``, jcs.ErrSyntax},
		{"byte order mark", "\ufeff{}", jcs.ErrSyntax},
		{"trailing data", `{} {}`, jcs.ErrSyntax},
		{"trailing comma", `[1,]`, jcs.ErrSyntax},
		{"leading zero", `01`, jcs.ErrSyntax},
		{"NaN literal", `NaN`, jcs.ErrSyntax},
		{"Infinity literal", `Infinity`, jcs.ErrSyntax},
		{"plus sign", `+1`, jcs.ErrSyntax},
		{"bare point", `1.`, jcs.ErrSyntax},
		{"empty exponent", `1e`, jcs.ErrSyntax},
		{"raw control in string", "\"a\nb\"", jcs.ErrSyntax},
		{"bad escape", `"\x"`, jcs.ErrSyntax},
		{"short unicode escape", `"\u12"`, jcs.ErrSyntax},
		{"single quotes", `{'a':1}`, jcs.ErrSyntax},
		{"unterminated string", `"abc`, jcs.ErrSyntax},
		{"unterminated object", `{"a":1`, jcs.ErrSyntax},
		{"missing colon", `{"a" 1}`, jcs.ErrSyntax},
		{"bad literal", `tru`, jcs.ErrSyntax},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jcs.Canonicalize([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if got != nil {
				t.Fatalf("output %q with an error", got)
			}
			for _, other := range []error{jcs.ErrSyntax, jcs.ErrInvalidUTF8, jcs.ErrLoneSurrogate, jcs.ErrDuplicateName, jcs.ErrNumberRange, jcs.ErrTooLarge, jcs.ErrTooDeep} {
				if other != tc.want && errors.Is(err, other) {
					t.Fatalf("err %v is also %v", err, other)
				}
			}
		})
	}
}

// TestAccepted: edges that I-JSON allows.
func TestAccepted(t *testing.T) {
	cases := map[string]string{
		`-0`:                             `0`,
		`-0.0e10`:                        `0`,
		`0e-400`:                         `0`,
		`1.7976931348623157e308`:         `1.7976931348623157e+308`,
		`5e-324`:                         `5e-324`,
		`"\u2028\u007f"`:                 "\"\u2028\u007f\"",
		`"\ud83d\ude00"`:                 `"😀"`,
		`"\/\b\f\n\r\t\u0001\u001F"`:     `"/\b\f\n\r\t\u0001\u001f"`,
		" \t\r\n[ 1 , 2 ] \n":            `[1,2]`,
		`{"\ue000":1,"\ud800\udc00":2}`:  "{\"\U00010000\":2,\"\ue000\":1}",
		`123456789012345678901234567890`: `1.2345678901234568e+29`,
		`0.0000001`:                      `1e-7`,
		`0.000001`:                       `0.000001`,
	}
	for in, want := range cases {
		got, err := jcs.Canonicalize([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Canonicalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// FuzzCanonicalize holds the canonical form to three properties on any
// input: it is a fixed point, encoding/json reads it as the same data as
// the input, and a refusal is always one of the named errors.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"b":1.0,"a":"é","c":[1e2,{"z":null,"y":true}]}`, `[1e400]`, `"\ud800"`, `{"a":1,"a":2}`,
		`{"\ud83d\ude00":1,"\ue000":2}`, `[0.1,-0,5e-324,1e21,1e-7]`, "\"\xff\"",
	} {
		f.Add([]byte(s))
	}
	named := []error{jcs.ErrSyntax, jcs.ErrInvalidUTF8, jcs.ErrLoneSurrogate, jcs.ErrDuplicateName, jcs.ErrNumberRange, jcs.ErrTooLarge, jcs.ErrTooDeep}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := jcs.Canonicalize(in)
		if err != nil {
			for _, n := range named {
				if errors.Is(err, n) {
					return
				}
			}
			t.Fatalf("unnamed error %v", err)
		}
		again, err := jcs.Canonicalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point: %q -> %q, %v", out, again, err)
		}
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %q: %v", in, err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("canonical form unreadable: %q: %v", out, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("data changed: %q -> %q", in, out)
		}
	})
}

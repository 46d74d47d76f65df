package pajwt

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"pactd/internal/jose"
)

func TestDecodeB64(t *testing.T) {
	t.Parallel()
	// ok: every length round-trips against the standard encoder.
	for n := range 200 {
		src := make([]byte, n)
		_, _ = rand.Read(src)
		enc := base64.RawURLEncoding.EncodeToString(src)
		got, ok := decodeB64(nil, enc)
		if !ok || !bytes.Equal(got, src) {
			t.Fatalf("len %d: ok %v", n, ok)
		}
	}
	for _, bad := range []string{"A", "AAAAA", "AA==", "AA=", "A+A/", "AA\nAA", "AA AA", "AB", "AAB", "ÿÿÿÿ", "AA.A"} {
		t.Run("fail/"+strconv.Quote(bad), func(t *testing.T) {
			if _, ok := decodeB64(nil, bad); ok {
				t.Fatalf("decodeB64(%q) accepted", bad)
			}
		})
	}
}

func TestB64DecodeTable(t *testing.T) {
	t.Parallel()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(b64Decode) != 256 {
		t.Fatalf("table has %d entries", len(b64Decode))
	}
	for c := range 256 {
		want := byte(0xff)
		if i := strings.IndexByte(alphabet, byte(c)); i >= 0 {
			want = byte(i)
		}
		if b64Decode[c] != want {
			t.Fatalf("b64Decode[%#x] = %#x, want %#x", c, b64Decode[c], want)
		}
	}
}

// FuzzDecodeB64 compares the decoder with encoding/base64's strict raw URL
// decoder, which additionally skips \r and \n (ours refuses them).
func FuzzDecodeB64(f *testing.F) {
	for _, s := range []string{"", "AA", "AAA", "AAAA", "AB", "AAB", "_-_-", "A", "AA==", "AA\nAA", "eyJhbGciOiJFUzI1NiJ9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := decodeB64(nil, s)
		want, err := base64.RawURLEncoding.Strict().DecodeString(s)
		if ok && (err != nil || !bytes.Equal(got, want)) {
			t.Fatalf("accepted %q that the standard decoder refuses or decodes differently", s)
		}
		if !ok && err == nil && !strings.ContainsAny(s, "\r\n") {
			t.Fatalf("refused %q that the standard decoder accepts", s)
		}
		if ok && base64.RawURLEncoding.EncodeToString(got) != s {
			t.Fatalf("accepted non-canonical %q", s)
		}
	})
}

// walk returns the members our reader sees, or ok=false.
func walk(b []byte) (map[string]jsonValue, bool) {
	out := map[string]jsonValue{}
	it := newObjectIter(b)
	for {
		name, esc, v, ok := it.next()
		if !ok {
			break
		}
		n := string(name)
		if esc {
			d, ok := unescape(name)
			if !ok {
				return nil, false
			}
			n = string(d)
		}
		out[n] = v
	}
	return out, it.valid()
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

func TestObjectIter(t *testing.T) {
	t.Parallel()
	ok := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":"b","c":[1,2,{"d":null}],"e":true,"f":false,"g":-0.5e+3}`,
		`{"\u00e9":"\ud83d\ude00"}`, "{\"a\":\"\u00e9\"}\n",
	}
	bad := []string{
		``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a":1}x`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`,
		`{"a":tru}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", `{"a":"\u12"}`, `{'a':1}`, `{"a":1 "b":2}`,
		`{"a":[1,]}`, `{"a":{"b"}}`, `{"a":-}`, `{"a":1e}`,
	}
	for _, s := range ok {
		if _, good := walk([]byte(s)); !good {
			t.Errorf("refused %q", s)
		}
	}
	for _, s := range bad {
		if _, good := walk([]byte(s)); good {
			t.Errorf("accepted %q", s)
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

// FuzzJSONObject holds our reader to encoding/json: whatever it accepts is
// valid JSON with the same members and values; whatever valid UTF-8 object
// of moderate depth encoding/json accepts, it accepts.
func FuzzJSONObject(f *testing.F) {
	for _, s := range []string{
		`{"alg":"ES256","kid":"k"}`, `{"iss":"x","aud":["a"],"iat":1.5e9,"n":null}`, `{"\u0061lg":"none"}`,
		`{"a":{"b":[1,{"c":"\ud83d\ude00"}]}}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, `[1]`, `{"a":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := walk(b)
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
				switch v.kind {
				case kindString:
					s, ok := stringValue(v)
					if ok && sv != s {
						t.Fatalf("member %q: %q vs %q", name, s, sv)
					}
				case kindNumber:
					want, err := strconv.ParseFloat(string(v.raw), 64)
					if n, ok := numberValue(v); ok && (err != nil || n != want) {
						t.Fatalf("member %q: %v vs %v", name, n, want)
					}
				}
			}
			return
		}
		if stdErr == nil && std != nil && utf8.Valid(b) && jsonDepth(b) <= maxJSONDepth {
			t.Fatalf("refused %q that encoding/json accepts", b)
		}
	})
}

func TestNumberValue(t *testing.T) {
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
		got, ok := numberValue(jsonValue{kind: kindNumber, raw: []byte(tt.lit)})
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("%s: %v %v, want %v %v", tt.lit, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRawToDER compares the R||S to DER conversion with encoding/asn1.
func TestRawToDER(t *testing.T) {
	t.Parallel()
	cases := [][]byte{make([]byte, 64)}
	for range 500 {
		sig := make([]byte, 64)
		_, _ = rand.Read(sig)
		switch sig[0] % 4 { // exercise leading zeros and high bits
		case 0:
			sig[0], sig[1] = 0, 0
		case 1:
			sig[32] = 0
		case 2:
			sig[0] |= 0x80
			sig[32] |= 0x80
		}
		cases = append(cases, sig)
	}
	for _, sig := range cases {
		want, err := asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])})
		if err != nil {
			t.Fatal(err)
		}
		var buf [72]byte
		if got := rawToDER(&buf, sig); !bytes.Equal(got, want) {
			t.Fatalf("rawToDER(%x) = %x, want %x", sig, got, want)
		}
	}
}

// TestVerifyWithVectors checks the ES256 path on published vectors: RFC 7515
// A.3, and a signature whose R has a leading zero byte (a correctly padded
// one passes, the 63-byte unpadded form fails).
func TestVerifyWithVectors(t *testing.T) {
	t.Parallel()
	key := func(x, y string) *jose.Key {
		set, err := jose.ParseJWKS([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"`+x+`","y":"`+y+`"}]}`), 0)
		if err != nil {
			t.Fatal(err)
		}
		return set.At(0)
	}
	check := func(k *jose.Key, token string) bool {
		i := strings.LastIndexByte(token, '.')
		sig, err := base64.RawURLEncoding.DecodeString(token[i+1:])
		if err != nil {
			t.Fatal(err)
		}
		d := sha256.Sum256([]byte(token[:i]))
		return verifyWith(k, algES256, &d, sig)
	}
	rfc := key("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
	if !check(rfc, "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q") {
		t.Fatal("RFC 7515 A.3 vector does not verify")
	}
	padded := key("Anf1p2lRrcXgZKpVRRC1xLxPiw_45PbOlygfbxvD8Es", "d0HiZq-aurVVLLtK-xqXPpzpWloZJNwKNve7akBDuvg")
	if !check(padded, "eyJhbGciOiJFUzI1NiJ9.TG9yZW0gSXBzdW0.ALFru4CRZDiAlVKyyHtlLGtXIAWxC3lXIlZuYO8G8a5ePzCwyw6c2FzWBZwrLaoLFZb_TcYs3TcZ8mhONPaavQ") {
		t.Fatal("R with a leading zero does not verify")
	}
	if check(padded, "eyJhbGciOiJFUzI1NiJ9.TG9yZW0gSXBzdW0.sWu7gJFkOICVUrLIe2Usa1cgBbELeVciVm5g7wbxrl4_MLDLDpzYXNYFnCstqgsVlv9NxizdNxnyaE409pq9") {
		t.Fatal("63-byte unpadded signature accepted")
	}
	// Wrong key type for the algorithm never verifies.
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k, _ := jose.NewECKey("", &ec.PublicKey)
	var d [32]byte
	if verifyWith(&k, algRS256, &d, make([]byte, 256)) || verifyWith(&k, algNone, &d, make([]byte, 64)) {
		t.Fatal("verified with the wrong algorithm")
	}
}

func TestConstantTimeEqual(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		eq   bool
	}{{"", "", true}, {"abc", "abc", true}, {"abc", "abd", false}, {"abc", "ab", false}, {"xbc", "abc", false}} {
		if got := constantTimeEqual(tt.a, tt.b); got != tt.eq {
			t.Errorf("constantTimeEqual(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

func TestErrorFormatting(t *testing.T) {
	t.Parallel()
	e := &Error{Reason: ReasonSignature, Err: io.EOF}
	if e.Error() != "pajwt: refused: signature: EOF" || !errors.Is(e, io.EOF) || ReasonOf(e) != ReasonSignature {
		t.Fatalf("%v", e)
	}
	if (&Error{Reason: ReasonExpired}).Error() != "pajwt: refused: expired" {
		t.Fatal("no-cause form")
	}
}

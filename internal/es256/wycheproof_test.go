package es256

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// wycheproofCase is one test of testdata/wycheproof (see its README).
type wycheproofCase struct {
	id     int
	result string // valid, invalid or acceptable
	pub    *ecdsa.PublicKey
	msg    []byte
	der    []byte
}

func loadWycheproof(t *testing.T) []wycheproofCase {
	t.Helper()
	f, err := os.Open("testdata/wycheproof/ecdsa_secp256r1_sha256.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []wycheproofCase
	var pub *ecdsa.PublicKey
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		hexOf := func(s string) []byte {
			if s == "-" {
				return nil
			}
			b, err := hex.DecodeString(s)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			return b
		}
		switch {
		case len(fields) == 2 && fields[0] == "k":
			if pub, err = ecdsa.ParseUncompressedPublicKey(elliptic.P256(), hexOf(fields[1])); err != nil {
				t.Fatalf("line %d: key: %v", line, err)
			}
		case len(fields) == 5 && fields[0] == "t" && pub != nil:
			id, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			cases = append(cases, wycheproofCase{id: id, result: fields[2], pub: pub, msg: hexOf(fields[3]), der: hexOf(fields[4])})
		default:
			t.Fatalf("line %d: not a key or test line", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// strictRaw converts a DER ECDSA-Sig-Value to the 64-byte R||S form when
// it is strict DER (a SEQUENCE of exactly two INTEGERs, short-form lengths
// that match, minimal non-negative integers, nothing trailing) of values
// below 2^256; false otherwise. Every signature with r, s < 2^256 has
// short-form lengths, so a long form is never strict here.
func strictRaw(der []byte) ([]byte, bool) {
	if len(der) < 2 || der[0] != 0x30 || der[1] >= 0x80 || int(der[1]) != len(der)-2 {
		return nil, false
	}
	body := der[2:]
	raw := make([]byte, 64)
	for i := range 2 {
		if len(body) < 2 || body[0] != 0x02 || body[1] == 0 || body[1] >= 0x80 || int(body[1]) > len(body)-2 {
			return nil, false
		}
		v := body[2 : 2+int(body[1])]
		body = body[2+int(body[1]):]
		switch {
		case v[0]&0x80 != 0: // negative
			return nil, false
		case len(v) > 1 && v[0] == 0 && v[1]&0x80 == 0: // not minimal
			return nil, false
		case v[0] == 0:
			v = v[1:]
		}
		if len(v) > 32 {
			return nil, false
		}
		copy(raw[32*i+32-len(v):32*(i+1)], v)
	}
	return raw, len(body) == 0
}

// TestWycheproof runs every ECDSA P-256/SHA-256 vector of Wycheproof
// through the table path, the stock path and a cached key past its build,
// and holds each to the vector's expected result and to
// crypto/ecdsa.VerifyASN1's decision on the DER signature. A vector whose
// DER does not parse strictly into r, s < 2^256 has no R||S form: the path
// never sees it, and the test holds it to be expected invalid and refused by
// VerifyASN1.
func TestWycheproof(t *testing.T) {
	t.Parallel()
	cases := loadWycheproof(t)
	if len(cases) != 471 {
		t.Fatalf("%d vectors, the file has 471", len(cases))
	}
	tables := map[*ecdsa.PublicKey]*Table{}
	keys := map[*ecdsa.PublicKey]*Key{}
	cache := NewCache(Config{BuildAfter: 1})
	var raws, valid, accepted int
	for _, c := range cases {
		digest := sha256.Sum256(c.msg)
		want := c.result == "valid"
		stockDER := ecdsa.VerifyASN1(c.pub, digest[:], c.der)
		if c.result != "acceptable" && stockDER != want {
			t.Errorf("tcId %d: crypto/ecdsa.VerifyASN1 = %v, expected %s", c.id, stockDER, c.result)
		}
		if want {
			valid++
		}
		raw, ok := strictRaw(c.der)
		if !ok {
			if c.result != "invalid" || stockDER {
				t.Errorf("tcId %d: no strict R||S form, yet expected %s (VerifyASN1 %v)", c.id, c.result, stockDER)
			}
			continue
		}
		raws++
		tb := tables[c.pub]
		if tb == nil {
			var err error
			if tb, err = NewTable(c.pub); err != nil {
				t.Fatal(err)
			}
			tables[c.pub] = tb
			keys[c.pub] = cache.NewKey(c.pub)
		}
		got := tb.Verify(&digest, raw)
		if got != stockDER {
			t.Errorf("tcId %d (%s): table %v, crypto/ecdsa %v", c.id, c.result, got, stockDER)
		}
		if s := VerifyStock(c.pub, &digest, raw); s != stockDER {
			t.Errorf("tcId %d (%s): VerifyStock %v, crypto/ecdsa %v", c.id, c.result, s, stockDER)
		}
		if k := keys[c.pub].Verify(&digest, raw); k != stockDER {
			t.Errorf("tcId %d (%s): Key.Verify %v, crypto/ecdsa %v", c.id, c.result, k, stockDER)
		}
		if got {
			accepted++
		}
	}
	// The control: the vectors exercised both answers through the table.
	if raws < 200 || valid < 50 || accepted != valid {
		t.Fatalf("%d vectors in R||S form, %d valid, %d accepted by the table", raws, valid, accepted)
	}
	st := cache.Stats()
	if st.ViaTable == 0 || st.Builds == 0 {
		t.Fatalf("the cached keys never verified through a table: %+v", st)
	}
}

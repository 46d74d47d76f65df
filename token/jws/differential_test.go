package jws_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	jwxjwa "github.com/lestrrat-go/jwx/v3/jwa"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"

	"pactd.dev/pactd/token/jws"
	"pactd.dev/pactd/token/jws/jwstest"
)

// The differential oracle: lestrrat-go/jwx/v3, configured strictly (compact
// serialization only, the exact key, the exact algorithm), must accept
// every token the core accepts. The core's side is what every pactd
// verifier does before its own claim rules: Split, strict base64url of all
// three segments, header and payload JSON objects of unique members, alg
// the expected one, kid, typ, cty, x5t and x5t#S256 strings when present
// (see StringHeader), none of the members
// every pactd path refuses (jwk, jku, x5u, x5c, crit, b64, zip, enc), and
// the signature under the origin's low-S rule.

// oracleKeys are the fixed keys of the differential test and fuzz target.
type oracleKeys struct {
	ec  *ecdsa.PrivateKey
	rsa *rsa.PrivateKey
}

var (
	keysOnce sync.Once
	keys     oracleKeys
)

func testKeys(tb testing.TB) oracleKeys {
	keysOnce.Do(func() {
		ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys = oracleKeys{ec: ec, rsa: rk}
	})
	return keys
}

func enc(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// sign makes a compact JWS of the raw header and payload bytes, ES256 with
// a low-S signature or RS256.
func sign(tb testing.TB, k oracleKeys, alg string, header, payload []byte) string {
	tb.Helper()
	input := enc(header) + "." + enc(payload)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	var err error
	if alg == jws.RS256 {
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.rsa, crypto.SHA256, digest[:])
	} else {
		sig, err = jws.SignES256(k.ec, []byte(input))
	}
	if err != nil {
		tb.Fatal(err)
	}
	return input + "." + enc(sig)
}

// refusedEverywhere are the header members every pactd verifier refuses.
var refusedEverywhere = []string{"jwk", "jku", "x5u", "x5c", "crit", "b64", "zip", "enc"}

// coreAccepts is the core's verdict on tok for alg and origin.
func coreAccepts(k oracleKeys, tok, alg string, o jws.Origin) bool {
	parts, err := jws.Split(tok, 16<<10)
	if err != nil {
		return false
	}
	hdr, ok1 := jws.Decode(parts.Header)
	payload, ok2 := jws.Decode(parts.Payload)
	sig, ok3 := jws.Decode(parts.Signature)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	h, ok := jws.HeaderMembers(hdr)
	if !ok {
		return false
	}
	if _, ok := jws.Members(payload); !ok {
		return false
	}
	if a, _, ok := jws.StringMember(h, "alg"); !ok || a != alg {
		return false
	}
	for _, name := range []string{"kid", "typ", "cty", "x5t", "x5t#S256"} {
		if _, present, ok := jws.StringMember(h, name); present && !ok {
			return false
		}
	}
	for _, name := range refusedEverywhere {
		if _, present := h[name]; present {
			return false
		}
	}
	digest := sha256.Sum256([]byte(parts.SigningInput))
	if alg == jws.RS256 {
		return jws.VerifyRS256(&k.rsa.PublicKey, &digest, sig)
	}
	return jws.VerifyES256(&k.ec.PublicKey, &digest, sig, o)
}

// jwxAccepts is jwx's verdict with the exact key and algorithm.
func jwxAccepts(k oracleKeys, tok, alg string) bool {
	var opt jwxjws.VerifyOption
	if alg == jws.RS256 {
		opt = jwxjws.WithKey(jwxjwa.RS256(), &k.rsa.PublicKey)
	} else {
		opt = jwxjws.WithKey(jwxjwa.ES256(), &k.ec.PublicKey)
	}
	_, err := jwxjws.Verify([]byte(tok), opt, jwxjws.WithCompact())
	return err == nil
}

// diffCase is one token for the differential test.
type diffCase struct {
	name, alg string
	header    string
	payload   string
}

// diffCases are validly signed tokens whose JSON varies the way a
// confused or hostile signer would; mutate then varies their encoding.
var diffCases = []diffCase{
	{"es256-plain", jws.ES256, `{"alg":"ES256"}`, `{"iss":"https://pa.example","sub":"u"}`},
	{"es256-kid-typ", jws.ES256, `{"alg":"ES256","kid":"k1","typ":"JWT"}`, `{"iss":"a","exp":1796032920}`},
	{"rs256", jws.RS256, `{"alg":"RS256","kid":"r1"}`, `{"sub":"u"}`},
	{"dup-alg", jws.ES256, `{"alg":"ES256","alg":"ES256"}`, `{}`},
	{"escaped-dup-alg", jws.ES256, `{"alg":"ES256","\u0061lg":"none"}`, `{}`},
	{"escaped-alg", jws.ES256, `{"\u0061lg":"ES256"}`, `{}`},
	{"dup-claim", jws.ES256, `{"alg":"ES256"}`, `{"sub":"a","sub":"b"}`},
	{"escaped-dup-claim", jws.ES256, `{"alg":"ES256"}`, `{"sub":"a","\u0073ub":"b"}`},
	{"json-whitespace", jws.ES256, "{\n\"alg\" : \"ES256\" }", "\t{ }\r\n"},
	{"header-outer-whitespace", jws.ES256, " {\"alg\":\"ES256\"}\n", `{}`},
	{"crit", jws.ES256, `{"alg":"ES256","crit":["exp"],"exp":1}`, `{}`},
	{"b64-false", jws.ES256, `{"alg":"ES256","b64":false,"crit":["b64"]}`, `{}`},
	{"b64-false-no-crit", jws.ES256, `{"alg":"ES256","b64":false}`, `{}`},
	{"kid-number", jws.ES256, `{"alg":"ES256","kid":7}`, `{}`},
	{"typ-null", jws.ES256, `{"alg":"ES256","typ":null}`, `{}`},
	{"x5t-number", jws.ES256, `{"alg":"ES256","x5t":5}`, `{}`},
	{"cty-object", jws.ES256, `{"alg":"ES256","cty":{}}`, `{}`},
	{"alg-none", jws.ES256, `{"alg":"none"}`, `{}`},
	{"alg-lower", jws.ES256, `{"alg":"es256"}`, `{}`},
	{"alg-array", jws.ES256, `{"alg":["ES256"]}`, `{}`},
	{"header-array", jws.ES256, `["ES256"]`, `{}`},
	{"payload-not-json", jws.ES256, `{"alg":"ES256"}`, `not json`},
	{"payload-trailing", jws.ES256, `{"alg":"ES256"}`, `{}{}`},
	{"header-invalid-utf8", jws.ES256, "{\"alg\":\"ES256\",\"x\":\"\xff\"}", `{}`},
	{"lone-surrogate-name", jws.ES256, `{"alg":"ES256","\ud800":1}`, `{}`},
	{"unknown-members", jws.ES256, `{"alg":"ES256","x5t":"abc","cty":"JWT","foo":{"a":[1,2]}}`, `{"n":null,"t":true}`},
	{"deep", jws.ES256, `{"alg":"ES256"}`, `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`},
	{"es256-as-rs256-header", jws.RS256, `{"alg":"ES256"}`, `{}`},
}

// TestDifferentialWithJWX: for every case and every mutation at a spread of
// positions, jwx accepts whatever the core accepts. Positive controls: the
// unmutated plain tokens pass both; negative controls: the unmutated
// duplicate-member, crit, b64, mistyped-header, none, non-JSON and too-deep
// tokens are refused by the core (jwx accepts most of them: with the key
// and algorithm pinned it does not judge the payload, duplicates or the
// header's alg, which is why the core is the stricter one).
func TestDifferentialWithJWX(t *testing.T) {
	t.Parallel()
	k := testKeys(t)
	toks := map[string]string{}
	for _, c := range diffCases {
		toks[c.name] = sign(t, k, c.alg, []byte(c.header), []byte(c.payload))
	}
	for _, name := range []string{"es256-plain", "es256-kid-typ", "rs256", "escaped-alg", "json-whitespace", "unknown-members"} {
		alg := jws.ES256
		if name == "rs256" {
			alg = jws.RS256
		}
		if !coreAccepts(k, toks[name], alg, jws.ThirdParty) || !jwxAccepts(k, toks[name], alg) {
			t.Fatalf("ok/%s: core %v, jwx %v; want both to accept", name, coreAccepts(k, toks[name], alg, jws.ThirdParty), jwxAccepts(k, toks[name], alg))
		}
	}
	for _, name := range []string{"dup-alg", "escaped-dup-alg", "dup-claim", "escaped-dup-claim", "crit", "b64-false", "kid-number", "typ-null", "x5t-number", "cty-object", "alg-none", "payload-not-json", "deep", "lone-surrogate-name", "header-outer-whitespace"} {
		if coreAccepts(k, toks[name], jws.ES256, jws.ThirdParty) {
			t.Errorf("fail/%s: the core accepts", name)
		}
	}
	// The high-S twin: a third party's passes (jwx too); one of pactd's own
	// is refused.
	twin := jwstest.HighS(toks["es256-plain"])
	if !coreAccepts(k, twin, jws.ES256, jws.ThirdParty) || !jwxAccepts(k, twin, jws.ES256) {
		t.Error("ok/high-s-third-party: refused")
	}
	if coreAccepts(k, twin, jws.ES256, jws.Own) {
		t.Error("fail/high-s-own: accepted")
	}
	n := 0
	for _, c := range diffCases {
		tok := toks[c.name]
		for op := range jwstest.Ops {
			for pos := 0; pos < len(tok); pos += 1 + len(tok)/23 {
				for _, b := range []byte{0, 1, 2, 'A', '.', '=', '+', 0xff} {
					m := jwstest.Mutate(tok, op, pos, b)
					for _, o := range []jws.Origin{jws.ThirdParty, jws.Own} {
						n++
						if coreAccepts(k, m, c.alg, o) && !jwxAccepts(k, m, c.alg) {
							t.Fatalf("%s op %d pos %d byte %#x: the core accepts %q, jwx refuses", c.name, op, pos, b, m)
						}
					}
				}
			}
		}
	}
	t.Logf("%d mutated tokens compared", n)
}

// FuzzDifferential signs a fuzzed header and payload with a fixed key,
// mutates the token (insertions, deletions, duplicated bytes, spans and
// segments, whitespace and CR/LF, padded and standard-alphabet
// re-encodings, non-canonical bits, high-S twins), and fails on any token
// the core accepts and jwx, configured strictly, refuses.
func FuzzDifferential(f *testing.F) {
	for i, c := range diffCases {
		f.Add(c.header, []byte(c.payload), c.alg == jws.RS256, uint8(i), uint16(i*7), byte(i))
	}
	k := testKeys(f)
	f.Fuzz(func(t *testing.T, header string, payload []byte, useRSA bool, op uint8, pos uint16, b byte) {
		if len(header) > 2048 || len(payload) > 4096 {
			return
		}
		alg := jws.ES256
		if useRSA {
			alg = jws.RS256
		}
		tok := jwstest.Mutate(sign(t, k, alg, []byte(header), payload), int(op), int(pos), b)
		for _, o := range []jws.Origin{jws.ThirdParty, jws.Own} {
			if coreAccepts(k, tok, alg, o) && !jwxAccepts(k, tok, alg) {
				t.Fatalf("the core accepts %q (origin %d), jwx refuses", tok, o)
			}
		}
	})
}

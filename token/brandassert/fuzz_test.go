package brandassert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"

	"pactd.dev/pactd/token/jose"
)

// testVerifier is a Verifier on keys with the delegation rules' shape: a
// sub of 1 to 256 bytes of UTF-8 without control characters, and user
// codes compared upper-cased without dashes.
func testVerifier(keys KeySource) Verifier {
	return Verifier{
		Keys: keys,
		ValidSubject: func(u string) bool {
			return u != "" && len(u) <= 256 && utf8.ValidString(u) && !HasControl(u)
		},
		NormalizeUserCode: func(c string) (string, bool) {
			c = strings.ToUpper(strings.ReplaceAll(c, "-", ""))
			return c, len(c) == 8
		},
	}
}

// fixedKeys is a KeySource that always serves one key set.
type fixedKeys struct{ ks *jose.KeySet }

func (f fixedKeys) Keys(context.Context, string) (*jose.KeySet, error)    { return f.ks, nil }
func (f fixedKeys) Refresh(context.Context, string) (*jose.KeySet, error) { return f.ks, nil }

// fuzzSign signs raw header and claims JSON with ES256 (raw R||S).
func fuzzSign(tb testing.TB, key *ecdsa.PrivateKey, header, claims string) string {
	tb.Helper()
	input := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		tb.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// FuzzBrandAssertion: the assertion parser front end is bounded,
// deterministic and only lets through a header it vouches for (alg ES256
// or RS256, no key-carrying or critical member, a string kid, both objects
// of unique members); its refusals are InvalidArgument with a front-end
// reason and never repeat the input; and the whole verification never
// accepts anything but the one validly signed seed.
func FuzzBrandAssertion(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	k, err := jose.NewECKey("k1", &key.PublicKey)
	if err != nil {
		f.Fatal(err)
	}
	ks, err := jose.NewKeySet(k)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const publicURL, issuer, code = "https://provider.example", "https://login.acme.example", "BCDF-GHJK"
	v := testVerifier(fixedKeys{ks})
	b := Brand{ID: "signed", Issuer: issuer, JWKSURI: issuer + "/jwks.json"}
	p := Purpose{Aud: publicURL + "/a2a/signed/oauth/consent", UserCode: code}
	claims := `{"iss":"` + issuer + `","aud":"` + publicURL + `/a2a/signed/oauth/consent","sub":"user-42","jti":"j1","iat":` +
		"1796032800" + `,"exp":1796032920,"user_code":"` + code + `","email":"u@acme.example"}`
	if got := now.Unix(); got != 1796032800 {
		f.Fatalf("fixture clock %d", got)
	}
	valid := fuzzSign(f, key, `{"alg":"ES256","kid":"k1","typ":"JWT"}`, claims)
	if _, err := v.Verify(f.Context(), b, valid, p, now); err != nil {
		f.Fatalf("control: the valid seed is refused: %v", err)
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	parts := strings.Split(valid, ".")
	for _, s := range []string{
		valid,
		parts[0] + "." + parts[1] + ".",
		b64(`{"alg":"none"}`) + "." + parts[1] + ".",
		b64(`{"alg":"HS256","kid":"k1"}`) + "." + parts[1] + "." + parts[2],
		b64(`{"alg":"ES256","kid":"k1","jku":"https://evil.example"}`) + "." + parts[1] + "." + parts[2],
		b64(`{"alg":"ES256","kid":"k1","crit":["exp"]}`) + "." + parts[1] + "." + parts[2],
		b64(`{"alg":"ES256","alg":"ES256","kid":"k1"}`) + "." + parts[1] + "." + parts[2],
		b64(`{"alg":"ES256","kid":"k1"}`) + "." + b64(`{"sub":"a","sub":"b"}`) + "." + parts[2],
		b64(`{"alg":"ES256","kid":"k1"}`) + "." + b64(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`) + "." + parts[2],
		b64(`{"\u0061lg":"ES256","kid":"k1"}`) + "." + parts[1] + "." + parts[2],
		b64("{\"alg\":\"ES256\",\"kid\":\"k1\xff\"}") + "." + parts[1] + "." + parts[2],
		valid + "=", valid + ".x", " " + valid, parts[0] + "\n." + parts[1] + "." + parts[2],
		"", ".", "..", "...", "a.b.c", strings.Repeat("A", MaxBytes+1), "eyJ.eyJ.",
	} {
		f.Add(s)
	}
	frontEnd := map[string]bool{reasonMalformed.String(): true, reasonAlgorithm.String(): true, reasonForbiddenHeader.String(): true}
	f.Fuzz(func(t *testing.T, tok string) {
		jws, r := parse(tok)
		jws2, r2 := parse(tok)
		if (r == nil) != (r2 == nil) || (r != nil && r.Reason != r2.Reason) || jws.signingInput != jws2.signingInput {
			t.Fatalf("not deterministic for %q", tok)
		}
		if r != nil {
			if !frontEnd[r.Reason.String()] || r.Code != connect.CodeInvalidArgument {
				t.Fatalf("front-end refusal %v with code %v", r.Reason, r.Code)
			}
			if len(tok) >= 8 && strings.Contains(r.Msg, tok) {
				t.Fatalf("the refusal repeats the input")
			}
		} else {
			if len(tok) > MaxBytes {
				t.Fatalf("accepted %d bytes", len(tok))
			}
			if jws.alg != jose.AlgES256 && jws.alg != jose.AlgRS256 {
				t.Fatalf("accepted alg %q", jws.alg)
			}
			if tok != jws.signingInput+"."+base64.RawURLEncoding.EncodeToString(jws.sig) {
				t.Fatalf("the parts do not make up the input %q", tok)
			}
			hdrJSON, err := base64.RawURLEncoding.DecodeString(jws.signingInput[:strings.IndexByte(jws.signingInput, '.')])
			var hdr map[string]json.RawMessage
			if err != nil || json.Unmarshal(hdrJSON, &hdr) != nil {
				t.Fatalf("accepted a header that is not a JSON object: %q", hdrJSON)
			}
			for _, name := range []string{"jwk", "jku", "x5u", "x5c", "crit", "b64", "zip", "enc"} {
				if _, ok := hdr[name]; ok {
					t.Fatalf("accepted a header with %s", name)
				}
			}
			if jws.claims == nil {
				t.Fatal("accepted without claims")
			}
		}
		if _, err := v.Verify(t.Context(), b, tok, p, now); err == nil && tok != valid {
			t.Fatalf("accepted a token other than the valid seed: %q", tok)
		}
	})
}

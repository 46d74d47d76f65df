package delegtoken_test

import (
	"errors"
	"strings"
	"testing"

	"pactd/internal/delegtoken"
)

// mutations is how many ways mutate changes a token.
const mutations = 7

// mutate changes tok at position pos (mod its length) the op-th way.
func mutate(tok string, op, pos int, b byte) string {
	i := pos % len(tok)
	switch op {
	case 0: // overwrite a byte (a no-op when it is the same byte)
		if tok[i] == b {
			b ^= 1
		}
		return tok[:i] + string([]byte{b}) + tok[i+1:]
	case 1: // insert a byte
		return tok[:i] + string([]byte{b}) + tok[i:]
	case 2: // delete a byte
		return tok[:i] + tok[i+1:]
	case 3: // duplicate a byte
		return tok[:i+1] + tok[i:]
	case 4: // duplicate a span of up to b bytes
		end := min(len(tok), i+1+int(b)%32)
		return tok[:end] + tok[i:end] + tok[end:]
	case 5: // insert whitespace or a line break
		return tok[:i] + [...]string{"\n", "\r", "\r\n", " ", "\t"}[int(b)%5] + tok[i:]
	default: // the high-S twin of the signature
		return highSTwin(tok)
	}
}

// FuzzVerify feeds arbitrary strings, and mutations of a valid token
// (a byte overwritten, inserted, deleted or duplicated, a span duplicated,
// CR/LF/space inserted, a high-S twin), to Verify. Properties: it never
// panics; a refusal is always an *Error (the keys never fail here); the
// answer is deterministic; only the genuine token verifies, so no mutation
// of it ever does.
func FuzzVerify(f *testing.F) {
	ks := newKeySet(f)
	v := delegtoken.NewVerifier(ks, clock)
	want := delegtoken.Expect{Issuer: brandA + "/oauth", Audience: brandA, ClientID: paIss}
	valid := forgeES256(ks.priv, header(ks.kid, "at+jwt"), mustJSON(claimsFor(brandA)), false)
	if _, err := v.Verify(f.Context(), valid, want); err != nil {
		f.Fatalf("seed token does not verify: %v", err)
	}
	parts := strings.Split(valid, ".")
	for _, seed := range []string{
		valid, "", ".", "..", "...", "a.b.c", valid + ".", parts[0] + "." + parts[1] + ".",
		b64([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + parts[1] + ".",
		b64([]byte(`{"alg":"HS256","kid":"`+ks.kid+`","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2],
		b64([]byte(`{"alg":"ES256","kid":"`+ks.kid+`","typ":"at+jwt","jwk":{}}`)) + "." + parts[1] + "." + parts[2],
		b64([]byte(`{"alg":"ES256","kid":"`+ks.kid+`","typ":"pact-consent+jwt"}`)) + "." + parts[1] + "." + parts[2],
		b64([]byte(`[]`)) + "." + b64([]byte(`{}`)) + "." + parts[2],
		strings.Repeat("A", delegtoken.MaxTokenBytes+1),
	} {
		f.Add(seed, uint16(0), byte('A'))
	}
	f.Add("", uint16(len(parts[0])+5), byte('x'))
	f.Add("", uint16(len(valid)-1), byte('B'))
	f.Fuzz(func(t *testing.T, tok string, pos uint16, b byte) {
		check := func(tok string) {
			c1, err1 := v.Verify(t.Context(), tok, want)
			c2, err2 := v.Verify(t.Context(), tok, want)
			if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) || c1.GrantID != c2.GrantID {
				t.Fatalf("not deterministic: %v / %v", err1, err2)
			}
			if err1 == nil {
				if tok != valid {
					t.Fatalf("a token that is not the genuine one verified: %q", tok)
				}
				return
			}
			var re *delegtoken.Error
			if !errors.As(err1, &re) || re.Reason == "" {
				t.Fatalf("refusal is not an *Error with a reason: %v", err1)
			}
		}
		check(tok)
		for op := range mutations {
			check(mutate(valid, op, int(pos), b))
		}
	})
}

package pajwt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"hash"
	"strconv"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/pajwt"
)

// hmacToken builds an HS* token keyed with secret (alg confusion).
func hmacToken(t testing.TB, alg string, h func() hash.Hash, secret []byte, claims map[string]any) string {
	t.Helper()
	input := b64.EncodeToString([]byte(mustJSON(t, map[string]any{"alg": alg, "typ": "JWT", "kid": "es-1"}))) +
		"." + b64.EncodeToString([]byte(mustJSON(t, claims)))
	m := hmac.New(h, secret)
	m.Write([]byte(input))
	return input + "." + b64.EncodeToString(m.Sum(nil))
}

func segments(tok string) (h, p, s string) {
	parts := strings.Split(tok, ".")
	return parts[0], parts[1], parts[2]
}

// TestVerifyRefusals covers every rule and every PA-JWT case of PACT §6
// items 1-15 with its exact reason, each group with positive controls.
func TestVerifyRefusals(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	other := newESSigner(t, "es-1") // same kid, different key
	es2 := newESSigner(t, "es-2")
	pemKey := func() []byte {
		der, err := x509.MarshalPKIXPublicKey(&s.es.ec.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}()
	jwkJSON := func() []byte {
		k := s.es.key(t)
		b, err := k.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}()

	type tc struct {
		name  string
		setup func(t *testing.T, f *fixture)
		auth  func(t *testing.T, f *fixture) string
		want  pajwt.Reason // ReasonUnspecified means accepted
	}
	tok := func(sg func(sharedSigners) *signer, hmod func(map[string]any), cmod func(map[string]any)) func(*testing.T, *fixture) string {
		return func(t *testing.T, f *fixture) string {
			return bearer(f.token(t, sg(s), hmod, cmod))
		}
	}
	es := func(s sharedSigners) *signer { return s.es }
	rs := func(s sharedSigners) *signer { return s.rs }
	hdr := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	delH := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	rel := func(k string, d int64) func(*testing.T, *fixture) string {
		return func(t *testing.T, f *fixture) string {
			return bearer(f.token(t, s.es, nil, func(m map[string]any) { m[k] = f.now() + d }))
		}
	}
	times := func(iat, exp int64) func(*testing.T, *fixture) string {
		return func(t *testing.T, f *fixture) string {
			return bearer(f.token(t, s.es, nil, func(m map[string]any) { m["iat"], m["exp"] = f.now()+iat, f.now()+exp }))
		}
	}
	raw := func(header, claims string) func(*testing.T, *fixture) string {
		return func(t *testing.T, f *fixture) string {
			c := strings.NewReplacer("NOW", itoa(f.now()), "EXP", itoa(f.now()+120)).Replace(claims)
			return bearer(s.es.signJSON(t, header, c))
		}
	}
	fixed := func(a string) func(*testing.T, *fixture) string {
		return func(*testing.T, *fixture) string { return a }
	}
	validClaims := `{"iss":"` + testIssuer + `","sub":"` + testSubject + `","aud":"` + testAudience + `","iat":NOW,"exp":EXP}`

	tests := []tc{
		// Positive controls.
		{name: "ok/es256", auth: tok(es, nil, nil)},
		{name: "ok/rs256", auth: tok(rs, nil, nil)},
		{name: "ok/bearer-lowercase", auth: func(t *testing.T, f *fixture) string { return "bearer " + f.token(t, s.es, nil, nil) }},
		{name: "ok/bearer-mixed-case-extra-spaces", auth: func(t *testing.T, f *fixture) string { return " BeArEr   " + f.token(t, s.es, nil, nil) + " " }},
		{name: "ok/no-typ", auth: tok(es, delH("typ"), nil)},
		{name: "ok/typ-lowercase-jwt", auth: tok(es, hdr("typ", "jwt"), nil)},
		{name: "ok/typ-application-jwt", auth: tok(es, hdr("typ", "application/jwt"), nil)},
		{name: "ok/x5t-hint-ignored", auth: tok(es, hdr("x5t", "abc"), nil)},
		{name: "ok/no-jti", auth: tok(es, nil, del("jti"))},
		{name: "ok/extra-claims", auth: tok(es, nil, set("scope", []any{"a", map[string]any{"b": nil}}))},
		{name: "ok/escaped-member-names", auth: raw(`{"\u0061lg":"ES256","kid":"es-\u0031"}`, `{"i\u0073s":"`+testIssuer+`","sub":"`+testSubject+`","aud":"`+testAudience+`","iat":NOW,"exp":EXP}`)},
		{name: "ok/fractional-times", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"iss":"`+testIssuer+`","sub":"`+testSubject+`","aud":"`+testAudience+`","iat":NOW.5,"exp":EXP.25}`)},
		{name: "ok/sub-256-bytes", auth: tok(es, nil, set("sub", strings.Repeat("s", 256)))},

		// §6.1 Authorization header shape.
		{name: "fail/no-authorization", auth: fixed(""), want: pajwt.ReasonMalformed},
		{name: "fail/whitespace-only", auth: fixed("   "), want: pajwt.ReasonMalformed},
		{name: "fail/basic-scheme", auth: fixed("Basic dXNlcjpwYXNz"), want: pajwt.ReasonMalformed},
		{name: "fail/bearer-no-token", auth: fixed("Bearer"), want: pajwt.ReasonMalformed},
		{name: "fail/bearer-empty-token", auth: fixed("Bearer "), want: pajwt.ReasonMalformed},
		{name: "fail/bearer-no-space", auth: func(t *testing.T, f *fixture) string { return "Bearer" + f.token(t, s.es, nil, nil) }, want: pajwt.ReasonMalformed},
		{name: "fail/bearer-tab", auth: func(t *testing.T, f *fixture) string { return "Bearer\t" + f.token(t, s.es, nil, nil) }, want: pajwt.ReasonMalformed},
		{name: "fail/two-tokens", auth: func(t *testing.T, f *fixture) string { tk := f.token(t, s.es, nil, nil); return bearer(tk + " " + tk) }, want: pajwt.ReasonMalformed},
		{name: "fail/garbage", auth: fixed("Bearer not-a-jwt"), want: pajwt.ReasonMalformed},
		{name: "fail/space-inside-token", auth: func(t *testing.T, f *fixture) string {
			tk := f.token(t, s.es, nil, nil)
			return bearer(tk[:10] + " " + tk[10:])
		}, want: pajwt.ReasonMalformed},
		{name: "fail/jwe-five-parts", auth: fixed("Bearer eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ.OKOawDo13gRp2ojaHV7LFpZcgV7T6DVZKTyKOMTYUmKoTCVJRgckCL9kiMT03JGeipsEdY3mx_etLbbWSrFr05kLzcSr4qKAq7YN7e9jwQRb23nfa6c9d-StnImGyFDbSv04uVuxIp5Zms1gNxKKK2Da14B8S4rzVRltdYwam_lDp5XnZAYpQdb76FdIKLaVmqgfwX7XWRxv2322i-vDxRfqNzo_tETKzpVLzfiwQyeyPGLBIO56YJ7eObdv0je81860ppamavo35UgoRdbYaBcoh9QcfylQr66oc6vFWXRcZ_ZT2LawVCWTIy3brGPi6UklfCpIMfIjf7iGdXKHzg.48V1_ALb6US04U3b.5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6jiSdiwkIr3ajwQzaBtQD_A.XFBoMYUZodetZdvTiFvSkQ"), want: pajwt.ReasonMalformed},
		{name: "fail/two-parts", auth: func(t *testing.T, f *fixture) string {
			h, p, _ := segments(f.token(t, s.es, nil, nil))
			return bearer(h + "." + p)
		}, want: pajwt.ReasonMalformed},
		{name: "fail/four-parts", auth: func(t *testing.T, f *fixture) string { return bearer(f.token(t, s.es, nil, nil) + ".AAAA") }, want: pajwt.ReasonMalformed},
		{name: "fail/empty-header", auth: func(t *testing.T, f *fixture) string {
			_, p, sg := segments(f.token(t, s.es, nil, nil))
			return bearer("." + p + "." + sg)
		}, want: pajwt.ReasonMalformed},
		{name: "fail/empty-payload", auth: func(t *testing.T, f *fixture) string {
			h, _, sg := segments(f.token(t, s.es, nil, nil))
			return bearer(h + ".." + sg)
		}, want: pajwt.ReasonMalformed},
		{name: "fail/padded-base64", auth: func(t *testing.T, f *fixture) string { return bearer(f.token(t, s.es, nil, nil) + "==") }, want: pajwt.ReasonMalformed},
		{name: "fail/std-base64-alphabet", auth: func(t *testing.T, f *fixture) string {
			tk := f.token(t, s.es, nil, nil)
			return bearer(strings.NewReplacer("-", "+", "_", "/").Replace(tk[:len(tk)-4]) + "+/+/")
		}, want: pajwt.ReasonMalformed},
		{name: "fail/non-canonical-trailing-bits", auth: func(t *testing.T, f *fixture) string {
			h, p, sg := segments(f.token(t, s.es, nil, nil))
			// 86 chars encode 64 bytes; the last char carries 4 unused bits.
			last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", sg[85])
			sg = sg[:85] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last|1])
			return bearer(h + "." + p + "." + sg)
		}, want: pajwt.ReasonMalformed},
		{name: "fail/newline-in-token", auth: func(t *testing.T, f *fixture) string {
			tk := f.token(t, s.es, nil, nil)
			return bearer(tk[:20] + "\n" + tk[20:])
		}, want: pajwt.ReasonMalformed},
		{name: "fail/header-not-json", auth: raw(`{"alg":"ES256",`, validClaims), want: pajwt.ReasonMalformed},
		{name: "fail/header-array", auth: raw(`["ES256"]`, validClaims), want: pajwt.ReasonMalformed},
		{name: "fail/header-trailing-data", auth: raw(`{"alg":"ES256"}x`, validClaims), want: pajwt.ReasonMalformed},
		{name: "fail/header-duplicate-alg", auth: raw(`{"alg":"ES256","alg":"none"}`, validClaims), want: pajwt.ReasonMalformed},
		{name: "fail/header-duplicate-escaped-alg", auth: raw(`{"alg":"ES256","\u0061lg":"ES256"}`, validClaims), want: pajwt.ReasonMalformed},
		{name: "fail/header-invalid-utf8", auth: raw("{\"alg\":\"ES256\",\"x\":\"\xff\"}", validClaims), want: pajwt.ReasonMalformed},
		{name: "fail/kid-not-string", auth: tok(es, hdr("kid", 1), nil), want: pajwt.ReasonMalformed},
		{name: "fail/kid-empty", auth: tok(es, hdr("kid", ""), nil), want: pajwt.ReasonMalformed},
		{name: "fail/typ-not-string", auth: tok(es, hdr("typ", true), nil), want: pajwt.ReasonMalformed},
		{name: "fail/claims-not-json", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"iss":`), want: pajwt.ReasonMalformed},
		{name: "fail/claims-array", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `["`+testIssuer+`"]`), want: pajwt.ReasonMalformed},
		{name: "fail/claims-duplicate-iss", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"iss":"x","iss":"`+testIssuer+`","sub":"s","aud":"`+testAudience+`","iat":NOW,"exp":EXP}`), want: pajwt.ReasonMalformed},
		// Nested members follow the top-level rule (one strict reader,
		// package jws): an extension claim holding an object is fine, one
		// naming a member twice or escaping a lone surrogate is not.
		{name: "ok/nested-extension-claim", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"iss":"`+testIssuer+`","sub":"`+testSubject+`","aud":"`+testAudience+`","iat":NOW,"exp":EXP,"ext":{"a":[1,{"b":"\ud83d\ude00"}],"c":null}}`)},
		{name: "fail/claims-nested-duplicate", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"iss":"`+testIssuer+`","sub":"`+testSubject+`","aud":"`+testAudience+`","iat":NOW,"exp":EXP,"ext":{"a":1,"\u0061":2}}`), want: pajwt.ReasonMalformed},
		{name: "fail/claims-nested-lone-surrogate", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"iss":"`+testIssuer+`","sub":"`+testSubject+`","aud":"`+testAudience+`","iat":NOW,"exp":EXP,"ext":["\udc00"]}`), want: pajwt.ReasonMalformed},
		{name: "fail/claims-duplicate-aud", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"iss":"`+testIssuer+`","sub":"s","aud":"x","aud":"`+testAudience+`","iat":NOW,"exp":EXP}`), want: pajwt.ReasonMalformed},
		{name: "fail/claims-too-deep", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"x":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`,"iss":"`+testIssuer+`"}`), want: pajwt.ReasonMalformed},

		// §6.2 algorithms, checked before any key is used.
		{name: "fail/alg-none-empty-signature", auth: func(t *testing.T, f *fixture) string {
			h := b64.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
			return bearer(h + "." + b64.EncodeToString([]byte(mustJSON(t, f.claims()))) + ".")
		}, want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-none-with-signature", auth: tok(es, hdr("alg", "none"), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-None", auth: tok(es, hdr("alg", "None"), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-hs256-public-key-pem", auth: func(t *testing.T, f *fixture) string {
			return bearer(hmacToken(t, "HS256", sha256.New, pemKey, f.claims()))
		}, want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-hs256-public-jwk", auth: func(t *testing.T, f *fixture) string {
			return bearer(hmacToken(t, "HS256", sha256.New, jwkJSON, f.claims()))
		}, want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-hs384", auth: func(t *testing.T, f *fixture) string {
			return bearer(hmacToken(t, "HS384", sha512.New384, pemKey, f.claims()))
		}, want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-hs512", auth: func(t *testing.T, f *fixture) string {
			return bearer(hmacToken(t, "HS512", sha512.New, pemKey, f.claims()))
		}, want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-ps256", auth: tok(rs, hdr("alg", "PS256"), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-rs512", auth: tok(rs, hdr("alg", "RS512"), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-es384", auth: tok(es, hdr("alg", "ES384"), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-eddsa", auth: tok(es, hdr("alg", "EdDSA"), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-lowercase", auth: tok(es, hdr("alg", "es256"), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-missing", auth: tok(es, delH("alg"), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-not-string", auth: tok(es, hdr("alg", []string{"ES256"}), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-null", auth: tok(es, hdr("alg", nil), nil), want: pajwt.ReasonAlgorithm},
		{name: "fail/alg-none-beats-forbidden-header", auth: tok(es, func(m map[string]any) { m["alg"] = "none"; m["jku"] = "https://evil.example/jwks" }, nil), want: pajwt.ReasonAlgorithm},

		// §6.3 key-carrying and critical headers.
		{name: "fail/header-jwk", auth: tok(es, hdr("jwk", map[string]any{"kty": "EC"}), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/header-jku", auth: tok(es, hdr("jku", "https://evil.example/jwks"), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/header-x5u", auth: tok(es, hdr("x5u", "https://evil.example/cert"), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/header-x5c", auth: tok(es, hdr("x5c", []string{"MIIB"}), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/header-crit", auth: tok(es, hdr("crit", []string{"exp"}), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/header-b64", auth: tok(es, hdr("b64", false), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/header-zip", auth: tok(es, hdr("zip", "DEF"), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/header-enc", auth: tok(es, hdr("enc", "A256GCM"), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/header-escaped-jku", auth: raw(`{"alg":"ES256","kid":"es-1","\u006aku":"https://evil.example"}`, validClaims), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/typ-at+jwt", auth: tok(es, hdr("typ", "at+jwt"), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/typ-receipt", auth: tok(es, hdr("typ", "pact-receipt+jws"), nil), want: pajwt.ReasonForbiddenHeader},
		{name: "fail/typ-consent", auth: tok(es, hdr("typ", "pact-consent+jwt"), nil), want: pajwt.ReasonForbiddenHeader},

		// §6.4-6 keys.
		{name: "fail/unknown-kid", auth: tok(es, hdr("kid", "nope"), nil), want: pajwt.ReasonUnknownKey},
		{name: "fail/kid-of-rsa-key-with-es256", auth: tok(es, hdr("kid", "rs-1"), nil), want: pajwt.ReasonUnknownKey},
		{name: "fail/kid-of-ec-key-with-rs256", auth: tok(rs, hdr("kid", "es-1"), nil), want: pajwt.ReasonUnknownKey},
		{name: "ok/kid-absent-several-keys", auth: tok(rs, delH("kid"), nil)},
		{name: "ok/kid-absent-es256", auth: tok(es, delH("kid"), nil)},
		{name: "fail/kid-absent-no-key-of-type", setup: func(t *testing.T, f *fixture) { f.keys.put(mustKeySet(t, s.rs.key(t)), nil) }, auth: tok(es, delH("kid"), nil), want: pajwt.ReasonUnknownKey},

		// §6.7 signatures.
		{name: "fail/signed-by-other-key-same-kid", auth: func(t *testing.T, f *fixture) string { return bearer(f.token(t, other, nil, nil)) }, want: pajwt.ReasonSignature},
		{name: "fail/signed-by-unpublished-key-kid-absent", auth: func(t *testing.T, f *fixture) string { return bearer(f.token(t, es2, delH("kid"), nil)) }, want: pajwt.ReasonSignature},
		{name: "fail/tampered-payload", auth: func(t *testing.T, f *fixture) string {
			h, _, sg := segments(f.token(t, s.es, nil, nil))
			c := f.claims()
			c["sub"] = "someone-else"
			return bearer(h + "." + b64.EncodeToString([]byte(mustJSON(t, c))) + "." + sg)
		}, want: pajwt.ReasonSignature},
		{name: "fail/tampered-header", auth: func(t *testing.T, f *fixture) string {
			_, p, sg := segments(f.token(t, s.es, nil, nil))
			return bearer(b64.EncodeToString([]byte(`{"alg":"ES256","kid":"es-1","x":1}`)) + "." + p + "." + sg)
		}, want: pajwt.ReasonSignature},
		{name: "fail/tampered-rs256", auth: func(t *testing.T, f *fixture) string {
			h, _, sg := segments(f.token(t, s.rs, nil, nil))
			c := f.claims()
			c["aud"] = "x"
			return bearer(h + "." + b64.EncodeToString([]byte(mustJSON(t, c))) + "." + sg)
		}, want: pajwt.ReasonSignature},
		{name: "fail/truncated-signature", auth: func(t *testing.T, f *fixture) string { tk := f.token(t, s.es, nil, nil); return bearer(tk[:len(tk)-2]) }, want: pajwt.ReasonSignature},
		{name: "fail/empty-signature-es256", auth: func(t *testing.T, f *fixture) string {
			h, p, _ := segments(f.token(t, s.es, nil, nil))
			return bearer(h + "." + p + ".")
		}, want: pajwt.ReasonSignature},
		{name: "fail/der-signature", auth: func(t *testing.T, f *fixture) string {
			h, p, _ := segments(f.token(t, s.es, nil, nil))
			d := sha256.Sum256([]byte(h + "." + p))
			der, err := ecdsa.SignASN1(rand.Reader, s.es.ec, d[:])
			if err != nil {
				t.Fatal(err)
			}
			return bearer(h + "." + p + "." + b64.EncodeToString(der))
		}, want: pajwt.ReasonSignature},
		{name: "fail/zero-signature", auth: func(t *testing.T, f *fixture) string {
			h, p, _ := segments(f.token(t, s.es, nil, nil))
			return bearer(h + "." + p + "." + b64.EncodeToString(make([]byte, 64)))
		}, want: pajwt.ReasonSignature},
		{name: "fail/swapped-r-s", auth: func(t *testing.T, f *fixture) string {
			h, p, sg := segments(f.token(t, s.es, nil, nil))
			raw, _ := b64.DecodeString(sg)
			return bearer(h + "." + p + "." + b64.EncodeToString(append(raw[32:], raw[:32]...)))
		}, want: pajwt.ReasonSignature},
		{name: "fail/rs256-signature-on-es256-token", auth: func(t *testing.T, f *fixture) string {
			h, p, _ := segments(f.token(t, s.es, nil, nil))
			return bearer(h + "." + p + "." + b64.EncodeToString(s.rs.signInput(t, h+"."+p)))
		}, want: pajwt.ReasonSignature},

		// §6.8 issuer.
		{name: "fail/iss-missing", auth: tok(es, nil, del("iss")), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-number", auth: tok(es, nil, set("iss", 42)), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-array", auth: tok(es, nil, set("iss", []string{testIssuer})), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-empty", auth: tok(es, nil, set("iss", "")), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-unknown", auth: tok(es, nil, set("iss", "https://other.example.com")), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-case-differs", auth: tok(es, nil, set("iss", "https://PA.example.com")), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-trailing-slash", auth: tok(es, nil, set("iss", testIssuer+"/")), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-nul", auth: tok(es, nil, set("iss", testIssuer+"\u0000")), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-newline", auth: tok(es, nil, set("iss", testIssuer+"\n")), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/iss-too-long", auth: tok(es, nil, set("iss", testIssuer+"/"+strings.Repeat("a", pajwt.MaxIssuerBytes))), want: pajwt.ReasonUnknownIssuer},
		{name: "fail/agent-disabled", setup: func(t *testing.T, f *fixture) { f.book.update(testIssuer, func(a *pajwt.Agent) { a.Enabled = false }) }, auth: tok(es, nil, nil), want: pajwt.ReasonAgentDisabled},
		{name: "fail/lookup-returns-other-issuer", setup: func(t *testing.T, f *fixture) {
			f.book.update("https://pa.example.com/disabled-pa", func(a *pajwt.Agent) { *a = testAgent() })
		}, auth: tok(es, nil, set("iss", "https://pa.example.com/disabled-pa")), want: pajwt.ReasonUnknownIssuer},

		// §6.9 audience.
		{name: "fail/aud-missing", auth: tok(es, nil, del("aud")), want: pajwt.ReasonAudience},
		{name: "fail/aud-other", auth: tok(es, nil, set("aud", "https://other-provider.example/a2a")), want: pajwt.ReasonAudience},
		{name: "fail/aud-card-url", auth: tok(es, nil, set("aud", "https://provider.example.com/a2a/brand-1/.well-known/agent-card.json")), want: pajwt.ReasonAudience},
		{name: "fail/aud-interface-url", auth: tok(es, nil, set("aud", "https://provider.example.com/a2a/brand-1")), want: pajwt.ReasonAudience},
		{name: "fail/aud-array-with-right-value", auth: tok(es, nil, set("aud", []string{testAudience})), want: pajwt.ReasonAudience},
		{name: "fail/aud-array-two-values", auth: tok(es, nil, set("aud", []string{testAudience, "x"})), want: pajwt.ReasonAudience},
		{name: "fail/aud-empty", auth: tok(es, nil, set("aud", "")), want: pajwt.ReasonAudience},
		{name: "fail/aud-null", auth: tok(es, nil, set("aud", nil)), want: pajwt.ReasonAudience},
		{name: "fail/aud-trailing-slash", auth: tok(es, nil, set("aud", testAudience+"/")), want: pajwt.ReasonAudience},
		{name: "fail/agent-audience-empty", setup: func(t *testing.T, f *fixture) { f.book.update(testIssuer, func(a *pajwt.Agent) { a.Audience = "" }) }, auth: tok(es, nil, set("aud", "")), want: pajwt.ReasonAudience},

		// §6.10 subject.
		{name: "fail/sub-missing", auth: tok(es, nil, del("sub")), want: pajwt.ReasonSubject},
		{name: "fail/sub-empty", auth: tok(es, nil, set("sub", "")), want: pajwt.ReasonSubject},
		{name: "fail/sub-nul", auth: tok(es, nil, set("sub", "user\u0000")), want: pajwt.ReasonSubject},
		{name: "fail/sub-number", auth: tok(es, nil, set("sub", 12345)), want: pajwt.ReasonSubject},
		{name: "fail/sub-257-bytes", auth: tok(es, nil, set("sub", strings.Repeat("s", 257))), want: pajwt.ReasonSubject},

		// §6.11 iat.
		{name: "ok/iat-now-plus-29", auth: times(29, 120)},
		{name: "ok/iat-now-plus-30", auth: times(30, 120)},
		{name: "fail/iat-now-plus-31", auth: times(31, 120), want: pajwt.ReasonNotYetValid},
		{name: "fail/iat-missing", auth: tok(es, nil, del("iat")), want: pajwt.ReasonNotYetValid},
		{name: "fail/iat-string", auth: tok(es, nil, set("iat", "1780000000")), want: pajwt.ReasonNotYetValid},
		{name: "fail/iat-zero", auth: tok(es, nil, set("iat", 0)), want: pajwt.ReasonNotYetValid},
		{name: "fail/iat-negative", auth: tok(es, nil, set("iat", -5)), want: pajwt.ReasonNotYetValid},
		{name: "fail/iat-huge", auth: raw(`{"alg":"ES256","kid":"es-1"}`, `{"iss":"`+testIssuer+`","sub":"s","aud":"`+testAudience+`","iat":1e300,"exp":EXP}`), want: pajwt.ReasonNotYetValid},

		// §6.12 exp and lifetime.
		{name: "ok/exp-now-minus-29", auth: times(-200, -29)},
		{name: "ok/exp-now-minus-30", auth: times(-200, -30)},
		{name: "fail/exp-now-minus-31", auth: times(-200, -31), want: pajwt.ReasonExpired},
		{name: "fail/exp-missing", auth: tok(es, nil, del("exp")), want: pajwt.ReasonExpired},
		{name: "fail/exp-string", auth: tok(es, nil, set("exp", "soon")), want: pajwt.ReasonExpired},
		{name: "fail/exp-zero", auth: tok(es, nil, set("exp", 0)), want: pajwt.ReasonExpired},
		{name: "fail/exp-equals-iat", auth: times(0, 0), want: pajwt.ReasonLifetime},
		{name: "fail/exp-before-iat", auth: times(10, 5), want: pajwt.ReasonLifetime},
		{name: "ok/lifetime-300", auth: times(-100, 200)},
		{name: "fail/lifetime-301", auth: times(-100, 201), want: pajwt.ReasonLifetime},
		{name: "fail/lifetime-one-day", auth: times(0, 86400), want: pajwt.ReasonLifetime},

		// §6.13 nbf.
		{name: "ok/nbf-now-plus-29", auth: rel("nbf", 29)},
		{name: "ok/nbf-past", auth: rel("nbf", -60)},
		{name: "fail/nbf-now-plus-31", auth: rel("nbf", 31), want: pajwt.ReasonNotYetValid},
		{name: "fail/nbf-string", auth: tok(es, nil, set("nbf", "now")), want: pajwt.ReasonClaims},

		// jti is optional but typed.
		{name: "fail/jti-number", auth: tok(es, nil, set("jti", 7)), want: pajwt.ReasonClaims},

		// §6.14 JWKS failures give a refusal, not an infrastructure error.
		{name: "fail/jwks-unavailable", setup: func(t *testing.T, f *fixture) { f.keys.put(nil, jose.ErrUnavailable) }, auth: tok(es, nil, nil), want: pajwt.ReasonJWKSUnavailable},
		{name: "fail/jwks-bad-document", setup: func(t *testing.T, f *fixture) { f.keys.put(nil, jose.ErrSymmetricKey) }, auth: tok(es, nil, nil), want: pajwt.ReasonJWKSUnavailable},
		{name: "fail/agent-without-jwks-uri", setup: func(t *testing.T, f *fixture) { f.book.update(testIssuer, func(a *pajwt.Agent) { a.JWKSURI = "" }) }, auth: tok(es, nil, nil), want: pajwt.ReasonJWKSUnavailable},

		// §6.15 oversized tokens: the bound is checked before decoding.
		{name: "fail/token-8193-bytes", auth: fixed("Bearer " + strings.Repeat("A", 8193)), want: pajwt.ReasonTooLarge},
		{name: "fail/authorization-1MiB", auth: fixed(strings.Repeat("B", 1<<20)), want: pajwt.ReasonTooLarge},
		{name: "fail/token-8192-bytes-garbage", auth: fixed("Bearer " + strings.Repeat("A", 8192)), want: pajwt.ReasonMalformed},

		// The order of the checks after the signature, pinned.
		{name: "order/alg-before-header-members", auth: tok(es, func(m map[string]any) { m["alg"] = "HS256"; m["jwk"] = map[string]any{} }, nil), want: pajwt.ReasonAlgorithm},
		{name: "order/forbidden-header-before-issuer", auth: tok(es, hdr("jku", "x"), set("iss", "unknown")), want: pajwt.ReasonForbiddenHeader},
		{name: "order/issuer-before-signature", auth: func(t *testing.T, f *fixture) string { return bearer(f.token(t, other, nil, set("iss", "unknown"))) }, want: pajwt.ReasonUnknownIssuer},
		{name: "order/disabled-before-key", setup: func(t *testing.T, f *fixture) { f.book.update(testIssuer, func(a *pajwt.Agent) { a.Enabled = false }) }, auth: tok(es, hdr("kid", "nope"), nil), want: pajwt.ReasonAgentDisabled},
		{name: "order/signature-before-claims", auth: func(t *testing.T, f *fixture) string {
			return bearer(f.token(t, other, nil, func(m map[string]any) { m["aud"] = []string{"x"}; m["exp"] = 1 }))
		}, want: pajwt.ReasonSignature},
		{name: "order/audience-before-subject", auth: tok(es, nil, func(m map[string]any) { m["aud"] = "x"; delete(m, "sub") }), want: pajwt.ReasonAudience},
		{name: "order/subject-before-iat", auth: tok(es, nil, func(m map[string]any) { delete(m, "sub"); m["iat"] = 1e11 }), want: pajwt.ReasonSubject},
		{name: "order/iat-before-exp", auth: times(100, -100), want: pajwt.ReasonNotYetValid},
		{name: "order/exp-before-nbf", auth: tok(es, nil, func(m map[string]any) { m["exp"] = 1; m["nbf"] = "x" }), want: pajwt.ReasonExpired},
		{name: "order/nbf-before-lifetime", auth: func(t *testing.T, f *fixture) string {
			return bearer(f.token(t, s.es, nil, func(m map[string]any) { m["exp"] = f.now() + 1000; m["nbf"] = f.now() + 100 }))
		}, want: pajwt.ReasonNotYetValid},
		{name: "order/lifetime-before-jti", auth: tok(es, nil, func(m map[string]any) { m["exp"] = m["iat"].(int64) + 301; m["jti"] = 1 }), want: pajwt.ReasonLifetime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, s, nil)
			if tt.setup != nil {
				tt.setup(t, f)
			}
			auth := tt.auth(t, f)
			res, err := f.verify(t, auth)
			if tt.want == pajwt.ReasonUnspecified {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if res.Agent.ID != "agent-1" || res.Subject == "" || res.ExpiresAt.IsZero() || res.IssuedAt.IsZero() || res.Cached {
					t.Fatalf("bad result %+v", res)
				}
				return
			}
			wantReason(t, err, tt.want)
			if res != (pajwt.Result{}) {
				t.Fatalf("refusal returned a non-zero result %+v", res)
			}
			if strings.Contains(err.Error(), strings.TrimPrefix(auth, "Bearer ")) && len(auth) > 20 {
				t.Fatal("error message contains the token")
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestVerifyResult pins the fields of an accepted token.
func TestVerifyResult(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	f := newFixture(t, s, nil)
	now := f.now()
	tok := f.token(t, s.es, nil, func(m map[string]any) { m["iat"], m["exp"], m["jti"] = now-10, now+110, "abc" })
	res, err := f.verify(t, bearer(tok))
	if err != nil {
		t.Fatal(err)
	}
	want := pajwt.Result{
		Agent:     testAgent(),
		Subject:   testSubject,
		IssuedAt:  time.Unix(now-10, 0),
		ExpiresAt: time.Unix(now+110, 0),
		JTI:       "abc",
		KeyID:     "es-1",
	}
	if !res.IssuedAt.Equal(want.IssuedAt) || !res.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("times %v %v", res.IssuedAt, res.ExpiresAt)
	}
	res.IssuedAt, res.ExpiresAt = want.IssuedAt, want.ExpiresAt
	if res != want {
		t.Fatalf("result = %+v\nwant %+v", res, want)
	}
}

// TestUnknownKidRefetchesOnce: an unknown kid triggers exactly one Refresh,
// and a key that appears through it is used.
func TestUnknownKidRefetchesOnce(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	rotated := newESSigner(t, "es-2")

	t.Run("fail/still-unknown", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, s, nil)
		_, err := f.verify(t, bearer(f.token(t, rotated, nil, nil)))
		wantReason(t, err, pajwt.ReasonUnknownKey)
		if got := f.source.refreshCalls.Load(); got != 1 {
			t.Fatalf("Refresh calls = %d, want 1", got)
		}
	})
	t.Run("ok/appears-after-refresh", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, s, nil)
		newSet := mustKeySet(t, s.es.key(t), rotated.key(t))
		f.source.refresh = func(ctx context.Context, uri string) (*jose.KeySet, error) { return newSet, nil }
		res, err := f.verify(t, bearer(f.token(t, rotated, nil, nil)))
		if err != nil || res.KeyID != "es-2" {
			t.Fatalf("err = %v, kid %q", err, res.KeyID)
		}
		if got := f.source.refreshCalls.Load(); got != 1 {
			t.Fatalf("Refresh calls = %d, want 1", got)
		}
	})
	t.Run("fail/refresh-fails", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, s, nil)
		f.source.refresh = func(ctx context.Context, uri string) (*jose.KeySet, error) { return nil, jose.ErrTimeout }
		_, err := f.verify(t, bearer(f.token(t, rotated, nil, nil)))
		wantReason(t, err, pajwt.ReasonJWKSUnavailable)
		if !errors.Is(err, jose.ErrTimeout) {
			t.Fatalf("cause lost: %v", err)
		}
	})
	t.Run("ok/known-kid-no-refresh", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, s, nil)
		if _, err := f.verify(t, bearer(f.token(t, s.es, nil, nil))); err != nil {
			t.Fatal(err)
		}
		if got := f.source.refreshCalls.Load(); got != 0 {
			t.Fatalf("Refresh calls = %d, want 0", got)
		}
	})
}

// TestKidlessKeysAreBounded: without kid, at most MaxKidlessKeys keys of the
// right type are tried.
func TestKidlessKeysAreBounded(t *testing.T) {
	t.Parallel()
	signers := make([]*signer, 9)
	keys := make([]jose.Key, 0, 10)
	for i := range signers {
		signers[i] = newESSigner(t, "")
		keys = append(keys, signers[i].key(t))
	}
	s := newSigners(t)
	rsKey := s.rs.key(t)
	keys = append([]jose.Key{rsKey}, keys...) // an RSA key first: not counted
	set := mustKeySet(t, keys...)
	f := newFixture(t, s, nil)
	f.keys.put(set, nil)
	for i, sg := range signers {
		_, err := f.verify(t, bearer(f.token(t, sg, delH2, nil)))
		if i < pajwt.DefaultMaxKidlessKeys {
			if err != nil {
				t.Fatalf("key %d: %v", i, err)
			}
			continue
		}
		wantReason(t, err, pajwt.ReasonSignature)
	}
}

func delH2(m map[string]any) { delete(m, "kid") }

// TestLookupFaultIsNotARefusal: an infrastructure error of the agent lookup
// comes back as a plain error.
func TestLookupFaultIsNotARefusal(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	f := newFixture(t, s, nil)
	boom := errors.New("database down")
	_, err := f.v.Verify(t.Context(), bearer(f.token(t, s.es, nil, nil)), func(context.Context, string) (pajwt.Agent, error) {
		return pajwt.Agent{}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	var e *pajwt.Error
	if errors.As(err, &e) || pajwt.ReasonOf(err) != pajwt.ReasonUnspecified {
		t.Fatalf("infrastructure fault reported as refusal %v", err)
	}
	// Wrapped ErrUnknownAgent is still a refusal.
	_, err = f.v.Verify(t.Context(), bearer(f.token(t, s.es, nil, nil)), func(context.Context, string) (pajwt.Agent, error) {
		return pajwt.Agent{}, errors.Join(errors.New("not found"), pajwt.ErrUnknownAgent)
	})
	wantReason(t, err, pajwt.ReasonUnknownIssuer)
	// A canceled caller gets its context error, not a refusal.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f.source.keys = func(ctx context.Context, uri string) (*jose.KeySet, error) { return nil, ctx.Err() }
	_, err = f.v.Verify(ctx, bearer(f.token(t, s.es, nil, nil)), f.book.lookup)
	if !errors.Is(err, context.Canceled) || pajwt.ReasonOf(err) != pajwt.ReasonUnspecified {
		t.Fatalf("canceled: %v", err)
	}
	if _, err := f.v.Verify(t.Context(), "x", nil); err == nil || pajwt.ReasonOf(err) != pajwt.ReasonUnspecified {
		t.Fatalf("nil lookup: %v", err)
	}
}

// TestTokenSizeBound: a valid token of exactly MaxTokenBytes passes; one byte
// more is TooLarge.
func TestTokenSizeBound(t *testing.T) {
	t.Parallel()
	s := newSigners(t)
	f := newFixture(t, s, func(c *pajwt.Config) { c.MaxTokenBytes = 2048 })
	var exact string
	for pad := 1000; pad < 1600 && exact == ""; pad++ {
		tk := f.token(t, s.es, nil, set1("pad", strings.Repeat("p", pad)))
		if len(tk) == 2048 {
			exact = tk
		}
	}
	if exact == "" {
		t.Fatal("could not build a token of exactly 2048 bytes")
	}
	if _, err := f.verify(t, bearer(exact)); err != nil {
		t.Fatalf("token of exactly the bound refused: %v", err)
	}
	_, err := f.verify(t, bearer(exact+"A"))
	wantReason(t, err, pajwt.ReasonTooLarge)
}

func set1(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }

// TestRFC7515ES256Vector verifies the RFC 7515 A.3 example signature with the
// RFC's key: an independent check of the raw R||S handling. The example's
// claims lack aud, so acceptance of the signature shows as ReasonAudience.
func TestRFC7515ES256Vector(t *testing.T) {
	t.Parallel()
	const token = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
	set, err := jose.ParseJWKS([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := &fakeKeys{keys: func(context.Context, string) (*jose.KeySet, error) { return set, nil }}
	v, err := pajwt.New(pajwt.Config{Keys: keys, Now: func() time.Time { return time.Unix(1300819380, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	book := newAgentBook(pajwt.Agent{ID: "joe", Issuer: "joe", JWKSURI: testJWKSURI, Audience: testAudience, Enabled: true})
	_, err = v.Verify(t.Context(), bearer(token), book.lookup)
	wantReason(t, err, pajwt.ReasonAudience)
	// Control: the same token with one signature byte changed fails the signature.
	bad := token[:len(token)-10] + "A" + token[len(token)-9:]
	if bad == token {
		t.Fatal("mutation did nothing")
	}
	_, err = v.Verify(t.Context(), bearer(bad), book.lookup)
	wantReason(t, err, pajwt.ReasonSignature)
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	keys := &fakeKeys{}
	tests := []struct {
		name string
		cfg  pajwt.Config
		ok   bool
	}{
		{name: "ok/defaults", cfg: pajwt.Config{Keys: keys}, ok: true},
		{name: "ok/tighter", cfg: pajwt.Config{Keys: keys, Skew: 5 * time.Second, MaxLifetime: time.Minute, CacheSize: -1}, ok: true},
		{name: "fail/no-keys", cfg: pajwt.Config{}},
		{name: "fail/skew-31s", cfg: pajwt.Config{Keys: keys, Skew: 31 * time.Second}},
		{name: "fail/lifetime-301s", cfg: pajwt.Config{Keys: keys, MaxLifetime: 301 * time.Second}},
		{name: "fail/negative-skew", cfg: pajwt.Config{Keys: keys, Skew: -time.Second}},
		{name: "fail/huge-token-bound", cfg: pajwt.Config{Keys: keys, MaxTokenBytes: 1 << 20}},
		{name: "fail/cache-over-max", cfg: pajwt.Config{Keys: keys, CacheSize: pajwt.MaxCacheSize + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := pajwt.New(tt.cfg)
			if (err == nil) != tt.ok || (v != nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestReasonStrings(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for r := pajwt.ReasonUnspecified; r <= pajwt.ReasonClaims; r++ {
		s := r.String()
		if s == "" || strings.HasPrefix(s, "reason(") || seen[s] {
			t.Fatalf("reason %d has bad or duplicate label %q", int(r), s)
		}
		seen[s] = true
	}
	if got := pajwt.Reason(99).String(); got != "reason(99)" {
		t.Fatalf("unknown reason label %q", got)
	}
	if len(seen) != 16 {
		t.Fatalf("%d reasons, want 16 (unspecified + 15)", len(seen))
	}
}

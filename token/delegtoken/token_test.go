package delegtoken_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/token/delegtoken"
)

func TestMintProducesTheSpecShape(t *testing.T) {
	ks := newKeySet(t)
	s := delegtoken.NewSigner(ks, clock)
	tok, err := s.Mint(t.Context(), delegtoken.Claims{
		Issuer: brandA + "/oauth", Audience: brandA, Subject: "user-42", ClientID: paIss,
		GrantID: "a2agrant_01ABC", Scopes: []string{"orders:read", "orders:write"},
	})
	if err != nil {
		t.Fatalf("Mint: %v", err)
	}
	parts := strings.Split(tok, ".")
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	pb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if string(hb) != `{"alg":"ES256","kid":"`+ks.KID+`","typ":"at+jwt"}` {
		t.Fatalf("header = %s", hb)
	}
	// RFC 9068 §2.2 requires iss, exp, aud, sub, client_id, iat and jti;
	// jti is unique per token, so it is read back and checked for form.
	var got struct {
		Jti *string `json:"jti"`
	}
	if err := json.Unmarshal(pb, &got); err != nil || got.Jti == nil {
		t.Fatalf("claims %s: no jti (%v)", pb, err)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(*got.Jti); err != nil || len(raw) != 16 {
		t.Fatalf("jti %q is not 128 bits of base64url (%v)", *got.Jti, err)
	}
	want := `{"iss":"` + brandA + `/oauth","sub":"user-42","aud":"` + brandA + `","client_id":"` + paIss +
		`","scope":"orders:read orders:write","grant_id":"a2agrant_01ABC","jti":"` + *got.Jti + `","iat":` + strconv.FormatInt(now.Unix(), 10) +
		`,"exp":` + strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + `}`
	if string(pb) != want {
		t.Fatalf("claims = %s\nwant    %s", pb, want)
	}
	// The same claims minted again get another jti, and Verify returns it.
	seen := map[string]bool{*got.Jti: true}
	for range 50 {
		again, err := s.Mint(t.Context(), delegtoken.Claims{
			Issuer: brandA + "/oauth", Audience: brandA, Subject: "user-42", ClientID: paIss,
			GrantID: "a2agrant_01ABC", Scopes: []string{"orders:read", "orders:write"},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := delegtoken.NewVerifier(ks, clock).Verify(t.Context(), again, delegtoken.Expect{Audience: brandA})
		if err != nil || c.ID == "" || seen[c.ID] {
			t.Fatalf("token %d: jti %q (seen before: %v), %v", len(seen), c.ID, seen[c.ID], err)
		}
		seen[c.ID] = true
	}

	// With authorization_details (§5.7) they are carried and returned.
	rar := json.RawMessage(`[{"type":"https://skyline.example/authorization/flight-rebook/v1","actions":["rebook"]}]`)
	tok, err = s.Mint(t.Context(), delegtoken.Claims{
		Issuer: brandA + "/oauth", Audience: brandA, Subject: "u", ClientID: paIss, GrantID: "g",
		Scopes: []string{"flights:rebook"}, AuthorizationDetails: rar, ExpiresAt: now.Add(10 * time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := delegtoken.NewVerifier(ks, clock).Verify(t.Context(), tok, delegtoken.Expect{Audience: brandA})
	if err != nil || string(c.AuthorizationDetails) != string(rar) || !c.ExpiresAt.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("Verify = %+v, %v", c, err)
	}
}

func TestMintRefusesClaimsItWouldNotAccept(t *testing.T) {
	s := delegtoken.NewSigner(newKeySet(t), clock)
	good := func() delegtoken.Claims {
		return delegtoken.Claims{Issuer: brandA + "/oauth", Audience: brandA, Subject: "u", ClientID: paIss, GrantID: "g", Scopes: []string{"a"}}
	}
	cases := map[string]struct {
		mut   func(*delegtoken.Claims)
		field string
	}{
		"iss-not-aud-oauth": {func(c *delegtoken.Claims) { c.Issuer = brandB + "/oauth" }, "iss"},
		"aud-not-url":       {func(c *delegtoken.Claims) { c.Audience, c.Issuer = "acme", "acme/oauth" }, "aud"},
		"client-not-url":    {func(c *delegtoken.Claims) { c.ClientID = "pa" }, "client_id"},
		"no-sub":            {func(c *delegtoken.Claims) { c.Subject = "" }, "sub"},
		"no-grant":          {func(c *delegtoken.Claims) { c.GrantID = "" }, "grant_id"},
		"no-scope":          {func(c *delegtoken.Claims) { c.Scopes = nil }, "scope"},
		"bad-scope":         {func(c *delegtoken.Claims) { c.Scopes = []string{"a b"} }, "scope[0]"},
		"quote-scope":       {func(c *delegtoken.Claims) { c.Scopes = []string{`a"`} }, "scope[0]"},
		"too-long":          {func(c *delegtoken.Claims) { c.ExpiresAt = now.Add(time.Hour + time.Second) }, "exp"},
		"exp-before-iat":    {func(c *delegtoken.Claims) { c.ExpiresAt = now.Add(-time.Second) }, "exp"},
		"rar-not-array":     {func(c *delegtoken.Claims) { c.AuthorizationDetails = json.RawMessage(`{}`) }, "authorization_details"},
		"rar-empty":         {func(c *delegtoken.Claims) { c.AuthorizationDetails = json.RawMessage(`[]`) }, "authorization_details"},
		"jti-control":       {func(c *delegtoken.Claims) { c.ID = "a\nb" }, "jti"},
	}
	for name, tc := range cases {
		c := good()
		tc.mut(&c)
		_, err := s.Mint(t.Context(), c)
		var fe *delegtoken.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("fail/%s: err = %v, want a FieldError on %s", name, err, tc.field)
		}
	}
	if _, err := s.Mint(t.Context(), good()); err != nil {
		t.Fatalf("ok/good: %v", err)
	}
}

func TestVerifyRefusals(t *testing.T) {
	ks := newKeySet(t)
	v := delegtoken.NewVerifier(ks, clock)
	want := delegtoken.Expect{Issuer: brandA + "/oauth", Audience: brandA, ClientID: paIss}
	mk := func(mut func(h, c map[string]any)) string {
		h, c := header(ks.KID, "at+jwt"), claimsFor(brandA)
		if mut != nil {
			mut(h, c)
		}
		return forgeES256(ks.Key, h, mustJSON(c), false)
	}
	valid := mk(nil)
	stranger := newECKey(t)
	strangerKID, _ := provkeys.Thumbprint(&stranger.PublicKey)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pubBytes, _ := ks.Key.PublicKey.Bytes()
	flipLast := func(tok string) string {
		b := []byte(tok)
		i := len(b) - 2 // not the last char, whose low bits may be padding
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	parts := strings.Split(valid, ".")
	otherPayload := b64(mustJSON(func() map[string]any { c := claimsFor(brandA); c["sub"] = "admin"; return c }()))

	cases := []struct {
		name  string
		tok   string
		want  delegtoken.Expect
		error delegtoken.Reason // "" = must verify
	}{
		{name: "ok/valid", tok: valid, want: want},
		{name: "ok/no-client-check", tok: mk(func(_, c map[string]any) { c["client_id"] = otherPA }), want: delegtoken.Expect{Issuer: want.Issuer, Audience: brandA}},
		{name: "ok/introspection-no-expectations", tok: valid},
		{name: "ok/exp-one-second-ahead", tok: mk(func(_, c map[string]any) { c["exp"] = now.Unix() + 1 }), want: want},
		{name: "ok/iat-30s-ahead", tok: mk(func(_, c map[string]any) { c["iat"] = now.Unix() + 30; c["exp"] = now.Unix() + 600 }), want: want},
		{name: "ok/unknown-claims-ignored", tok: mk(func(_, c map[string]any) { c["x-extra"] = 1 }), want: want},

		{name: "fail/oversized", tok: mk(func(_, c map[string]any) { c["pad"] = strings.Repeat("p", delegtoken.MaxTokenBytes) }), want: want, error: delegtoken.ReasonOversized},
		{name: "fail/two-segments", tok: parts[0] + "." + parts[1], want: want, error: delegtoken.ReasonMalformed},
		{name: "fail/five-segments-jwe", tok: valid + ".x.y", want: want, error: delegtoken.ReasonMalformed},
		{name: "fail/empty", tok: "", want: want, error: delegtoken.ReasonMalformed},
		{name: "fail/header-not-json", tok: b64([]byte("not json")) + "." + parts[1] + "." + parts[2], want: want, error: delegtoken.ReasonMalformed},
		{name: "fail/header-padded-base64", tok: parts[0] + "=." + parts[1] + "." + parts[2], want: want, error: delegtoken.ReasonMalformed},
		{name: "fail/header-escaped-duplicate-alg", tok: b64([]byte(`{"alg":"ES256","\u0061lg":"none","kid":"`+ks.KID+`","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2], want: want, error: delegtoken.ReasonMalformed},
		{name: "fail/header-null", tok: b64([]byte(`null`)) + "." + parts[1] + "." + parts[2], want: want, error: delegtoken.ReasonMalformed},
		{name: "fail/header-trailing-data", tok: b64([]byte(`{"alg":"ES256","kid":"`+ks.KID+`","typ":"at+jwt"} {}`)) + "." + parts[1] + "." + parts[2], want: want, error: delegtoken.ReasonMalformed},
		{name: "fail/header-duplicate-alg", tok: b64([]byte(`{"alg":"none","alg":"ES256","kid":"`+ks.KID+`","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2], want: want, error: delegtoken.ReasonMalformed},

		{name: "fail/tampered-signature", tok: flipLast(valid), want: want, error: delegtoken.ReasonSignature},
		{name: "fail/tampered-payload", tok: parts[0] + "." + otherPayload + "." + parts[2], want: want, error: delegtoken.ReasonSignature},
		{name: "fail/signed-by-another-key-same-kid", tok: forgeES256(stranger, header(ks.KID, "at+jwt"), mustJSON(claimsFor(brandA)), false), want: want, error: delegtoken.ReasonSignature},
		{name: "fail/signed-by-another-key-own-kid", tok: forgeES256(stranger, header(strangerKID, "at+jwt"), mustJSON(claimsFor(brandA)), false), want: want, error: delegtoken.ReasonUnknownKey},
		{name: "fail/high-s-twin", tok: forgeES256(ks.Key, header(ks.KID, "at+jwt"), mustJSON(claimsFor(brandA)), true), want: want, error: delegtoken.ReasonSignature},
		{name: "fail/der-signature", tok: forgeDER(ks.Key, header(ks.KID, "at+jwt"), mustJSON(claimsFor(brandA))), want: want, error: delegtoken.ReasonSignature},
		{name: "fail/truncated-signature", tok: valid[:len(valid)-4], want: want, error: delegtoken.ReasonSignature},

		{name: "fail/alg-RS256", tok: forgeRS256(rsaKey, map[string]any{"alg": "RS256", "kid": ks.KID, "typ": "at+jwt"}, mustJSON(claimsFor(brandA))), want: want, error: delegtoken.ReasonAlgorithm},
		{name: "fail/alg-HS256-keyed-with-public-key", tok: forgeHS256(pubBytes, map[string]any{"alg": "HS256", "kid": ks.KID, "typ": "at+jwt"}, mustJSON(claimsFor(brandA))), want: want, error: delegtoken.ReasonAlgorithm},
		{name: "fail/alg-none", tok: b64(mustJSON(map[string]any{"alg": "none", "kid": ks.KID, "typ": "at+jwt"})) + "." + parts[1] + ".", want: want, error: delegtoken.ReasonAlgorithm},
		{name: "fail/alg-missing", tok: mk(func(h, _ map[string]any) { delete(h, "alg") }), want: want, error: delegtoken.ReasonAlgorithm},
		{name: "fail/alg-es256-lowercase", tok: mk(func(h, _ map[string]any) { h["alg"] = "es256" }), want: want, error: delegtoken.ReasonAlgorithm},

		{name: "fail/typ-missing", tok: mk(func(h, _ map[string]any) { delete(h, "typ") }), want: want, error: delegtoken.ReasonType},
		{name: "fail/typ-JWT", tok: mk(func(h, _ map[string]any) { h["typ"] = "JWT" }), want: want, error: delegtoken.ReasonType},
		{name: "fail/typ-consent-session", tok: mk(func(h, _ map[string]any) { h["typ"] = "pact-consent+jwt" }), want: want, error: delegtoken.ReasonType},
		{name: "fail/typ-receipt", tok: mk(func(h, _ map[string]any) { h["typ"] = "pact-receipt+jws" }), want: want, error: delegtoken.ReasonType},
		{name: "fail/typ-application-prefix", tok: mk(func(h, _ map[string]any) { h["typ"] = "application/at+jwt" }), want: want, error: delegtoken.ReasonType},

		{name: "fail/header-jwk", tok: mk(func(h, _ map[string]any) { h["jwk"] = map[string]any{"kty": "EC"} }), want: want, error: delegtoken.ReasonHeader},
		{name: "fail/header-jku", tok: mk(func(h, _ map[string]any) { h["jku"] = "https://evil.example/jwks" }), want: want, error: delegtoken.ReasonHeader},
		{name: "fail/header-x5u", tok: mk(func(h, _ map[string]any) { h["x5u"] = "https://evil.example/c" }), want: want, error: delegtoken.ReasonHeader},
		{name: "fail/header-x5c", tok: mk(func(h, _ map[string]any) { h["x5c"] = []string{"MII"} }), want: want, error: delegtoken.ReasonHeader},
		{name: "fail/header-crit", tok: mk(func(h, _ map[string]any) { h["crit"] = []string{"exp"} }), want: want, error: delegtoken.ReasonHeader},
		{name: "fail/header-b64-false", tok: mk(func(h, _ map[string]any) { h["b64"] = false }), want: want, error: delegtoken.ReasonHeader},
		{name: "fail/kid-missing", tok: mk(func(h, _ map[string]any) { delete(h, "kid") }), want: want, error: delegtoken.ReasonUnknownKey},
		{name: "fail/kid-not-string", tok: mk(func(h, _ map[string]any) { h["kid"] = 7 }), want: want, error: delegtoken.ReasonUnknownKey},

		{name: "fail/aud-other-brand", tok: mk(func(_, c map[string]any) { c["aud"], c["iss"] = brandB, brandB+"/oauth" }), want: want, error: delegtoken.ReasonAudience},
		{name: "fail/aud-array-with-right-value", tok: mk(func(_, c map[string]any) { c["aud"] = []string{brandA} }), want: want, error: delegtoken.ReasonAudience},
		{name: "fail/aud-missing", tok: mk(func(_, c map[string]any) { delete(c, "aud") }), want: want, error: delegtoken.ReasonAudience},
		{name: "fail/iss-wrong", tok: mk(func(_, c map[string]any) { c["iss"] = "https://provider.example/oauth" }), want: want, error: delegtoken.ReasonIssuer},
		{name: "fail/iss-trailing-slash", tok: mk(func(_, c map[string]any) { c["iss"] = brandA + "/oauth/" }), want: want, error: delegtoken.ReasonIssuer},
		{name: "fail/iss-missing", tok: mk(func(_, c map[string]any) { delete(c, "iss") }), want: want, error: delegtoken.ReasonIssuer},
		{name: "fail/iss-not-aud-oauth-even-without-expectations", tok: mk(func(_, c map[string]any) { c["iss"] = brandB + "/oauth" }), error: delegtoken.ReasonIssuer},

		{name: "fail/expired-now", tok: mk(func(_, c map[string]any) { c["exp"] = now.Unix() }), want: want, error: delegtoken.ReasonExpired},
		{name: "fail/expired-long-ago", tok: mk(func(_, c map[string]any) {
			c["iat"] = now.Add(-2 * time.Hour).Unix()
			c["exp"] = now.Add(-time.Hour).Unix()
		}), want: want, error: delegtoken.ReasonExpired},
		{name: "fail/exp-missing", tok: mk(func(_, c map[string]any) { delete(c, "exp") }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/exp-string", tok: mk(func(_, c map[string]any) { c["exp"] = "9999999999" }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/exp-fraction", tok: mk(func(_, c map[string]any) { c["exp"] = float64(now.Unix()) + 100.5 }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/iat-missing", tok: mk(func(_, c map[string]any) { delete(c, "iat") }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/iat-31s-ahead", tok: mk(func(_, c map[string]any) { c["iat"] = now.Unix() + 31; c["exp"] = now.Unix() + 600 }), want: want, error: delegtoken.ReasonIssuedAt},
		{name: "fail/lifetime-over-1h", tok: mk(func(_, c map[string]any) { c["iat"] = now.Unix() - 10; c["exp"] = now.Unix() + 3600 }), want: want, error: delegtoken.ReasonLifetime},

		{name: "fail/client-id-other-pa", tok: mk(func(_, c map[string]any) { c["client_id"] = otherPA }), want: want, error: delegtoken.ReasonClientID},
		{name: "fail/client-id-missing", tok: mk(func(_, c map[string]any) { delete(c, "client_id") }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/grant-missing", tok: mk(func(_, c map[string]any) { delete(c, "grant_id") }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/sub-empty", tok: mk(func(_, c map[string]any) { c["sub"] = "" }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/sub-number", tok: mk(func(_, c map[string]any) { c["sub"] = 42 }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/scope-missing", tok: mk(func(_, c map[string]any) { delete(c, "scope") }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/scope-double-space", tok: mk(func(_, c map[string]any) { c["scope"] = "a  b" }), want: want, error: delegtoken.ReasonClaims},
		{name: "ok/jti-present", tok: mk(func(_, c map[string]any) { c["jti"] = "abc_DEF-123" }), want: want},
		{name: "ok/jti-absent-minted-before-jti", tok: mk(func(_, c map[string]any) { delete(c, "jti") }), want: want},
		{name: "fail/jti-empty", tok: mk(func(_, c map[string]any) { c["jti"] = "" }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/jti-number", tok: mk(func(_, c map[string]any) { c["jti"] = 7 }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/jti-with-space", tok: mk(func(_, c map[string]any) { c["jti"] = "a b" }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/jti-too-long", tok: mk(func(_, c map[string]any) { c["jti"] = strings.Repeat("j", 257) }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/rar-object", tok: mk(func(_, c map[string]any) { c["authorization_details"] = map[string]any{} }), want: want, error: delegtoken.ReasonClaims},
		{name: "fail/payload-duplicate-aud", tok: forgeES256(ks.Key, header(ks.KID, "at+jwt"), []byte(strings.Replace(string(mustJSON(claimsFor(brandA))), `{`, `{"aud":"`+brandB+`",`, 1)), false), want: want, error: delegtoken.ReasonMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := v.Verify(t.Context(), tc.tok, tc.want)
			if tc.error == "" {
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				if c.GrantID == "" || c.Subject == "" || len(c.Scopes) == 0 {
					t.Fatalf("claims = %+v", c)
				}
				return
			}
			wantReason(t, err, tc.error)
			if !reflect.DeepEqual(c, delegtoken.Claims{}) {
				t.Fatalf("a refusal returned claims %+v", c)
			}
		})
	}
}

func TestVerifyReturnsClaimsAndSeparatesInfrastructureFaults(t *testing.T) {
	ks := newKeySet(t)
	tok := forgeES256(ks.Key, header(ks.KID, "at+jwt"), mustJSON(claimsFor(brandA)), false)
	c, err := delegtoken.NewVerifier(ks, clock).Verify(t.Context(), tok, delegtoken.Expect{Audience: brandA})
	want := delegtoken.Claims{
		Issuer: brandA + "/oauth", Audience: brandA, Subject: "user-42", ClientID: paIss, GrantID: "a2agrant_01ABC",
		Scopes: []string{"orders:read", "orders:write"}, IssuedAt: now.Add(-time.Minute), ExpiresAt: now.Add(59 * time.Minute),
	}
	if err != nil || !reflect.DeepEqual(c, want) {
		t.Fatalf("Verify = %+v, %v\nwant %+v", c, err, want)
	}
	// The store being down is not a refusal: callers must answer
	// Unavailable, not "invalid token".
	ks.err = errors.New("store down")
	_, err = delegtoken.NewVerifier(ks, clock).Verify(t.Context(), tok, delegtoken.Expect{})
	var re *delegtoken.Error
	if err == nil || errors.As(err, &re) {
		t.Fatalf("err = %v, want a non-refusal error", err)
	}
}

// TestSameKeyOtherKindsNeverPass signs a consent session and a receipt with
// the very key that signs delegation tokens (a real key ring), each with
// claims that would otherwise make a valid delegation token.
func TestSameKeyOtherKindsNeverPass(t *testing.T) {
	st := dbtest.Open(t, "", t.TempDir())
	ring, err := provkeys.Open(t.Context(), provkeys.Config{Store: st, KEK: make([]byte, 32), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	v := delegtoken.NewVerifier(ring, clock)
	payload := mustJSON(claimsFor(brandA))
	want := delegtoken.Expect{Issuer: brandA + "/oauth", Audience: brandA, ClientID: paIss}
	for _, typ := range []string{"pact-consent+jwt", "pact-receipt+jws", "JWT"} {
		tok, err := ring.Sign(t.Context(), typ, payload)
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Verify(t.Context(), tok, want)
		wantReason(t, err, delegtoken.ReasonType)
	}
	// Positive control: the same key and payload with typ at+jwt verify.
	tok, err := ring.Sign(t.Context(), "at+jwt", payload)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(t.Context(), tok, want); err != nil {
		t.Fatalf("ok/at+jwt: %v", err)
	}
	// And a delegation token is not a receipt.
	_, err = v.VerifyReceipt(t.Context(), tok, payload)
	wantReason(t, err, delegtoken.ReasonType)
}

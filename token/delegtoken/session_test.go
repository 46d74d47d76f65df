package delegtoken_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/token/delegtoken"
)

const decisionA = brandA + "/oauth/consent/decision"

// session is a valid consent session of Brand A for user-42 and one code.
func session() delegtoken.SessionClaims {
	return delegtoken.SessionClaims{
		Issuer: brandA + "/oauth", Audience: decisionA, Subject: "user-42", UserCode: "BCDFGHJK", Email: "u@acme.example",
		JTI: "cs-1", IssuedAt: now.Add(-time.Minute), ExpiresAt: now.Add(9 * time.Minute),
	}
}

var wantA = delegtoken.SessionExpect{Issuer: brandA + "/oauth", Audience: decisionA}

// TestConsentSessionRoundTripAndShape: the header is exactly alg ES256,
// the kid and typ pact-consent+jwt, and Verify returns what was signed.
func TestConsentSessionRoundTripAndShape(t *testing.T) {
	ks := newKeySet(t)
	s := delegtoken.NewSigner(ks, clock)
	tok, err := s.SignConsentSession(t.Context(), session())
	if err != nil {
		t.Fatal(err)
	}
	var hdr map[string]any
	if err := json.Unmarshal(mustDecode(strings.Split(tok, ".")[0]), &hdr); err != nil || len(hdr) != 3 ||
		hdr["alg"] != "ES256" || hdr["typ"] != "pact-consent+jwt" || hdr["kid"] != ks.KID {
		t.Fatalf("header %v", hdr)
	}
	got, err := delegtoken.NewVerifier(ks, clock).VerifyConsentSession(t.Context(), tok, wantA)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	want := session()
	if got != want {
		t.Fatalf("claims %+v, want %+v", got, want)
	}
}

// TestConsentSessionRefusals: every broken rule with its reason; the same
// key signs everything, so only the rule under test differs. The positive
// control is the round trip above and the first case here.
func TestConsentSessionRefusals(t *testing.T) {
	ks := newKeySet(t)
	signer := delegtoken.NewSigner(ks, clock)
	v := delegtoken.NewVerifier(ks, clock)
	wire := func(changes map[string]any) []byte {
		m := map[string]any{"iss": brandA + "/oauth", "sub": "user-42", "aud": decisionA, "user_code": "BCDFGHJK", "jti": "cs-1",
			"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix()}
		for k, val := range changes {
			if val == nil {
				delete(m, k)
			} else {
				m[k] = val
			}
		}
		return mustJSON(m)
	}
	other := newECKey(t)
	receipt, _, err := signer.SignReceipt(t.Context(), delegtoken.ReceiptClaims{GrantID: "g", User: "user-42", PA: paIss, Brand: brandA, TS: now})
	if err != nil {
		t.Fatal(err)
	}
	access, err := signer.Mint(t.Context(), delegtoken.Claims{Issuer: brandA + "/oauth", Audience: brandA, Subject: "user-42", ClientID: paIss,
		GrantID: "g", Scopes: []string{"orders:read"}, IssuedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		tok  string
		want delegtoken.Reason
	}{
		{"receipt-same-key", receipt, delegtoken.ReasonType},
		{"delegation-token-same-key", access, delegtoken.ReasonType},
		{"typ-JWT", forgeES256(ks.Key, header(ks.KID, "JWT"), wire(nil), false), delegtoken.ReasonType},
		{"forged-other-key-same-kid", forgeES256(other, header(ks.KID, delegtoken.SessionType), wire(nil), false), delegtoken.ReasonSignature},
		{"forged-unknown-kid", forgeES256(other, header("attacker", delegtoken.SessionType), wire(nil), false), delegtoken.ReasonUnknownKey},
		{"alg-HS256", forgeHS256([]byte("secret"), map[string]any{"alg": "HS256", "kid": ks.KID, "typ": delegtoken.SessionType}, wire(nil)), delegtoken.ReasonAlgorithm},
		{"jwk-header", forgeES256(ks.Key, map[string]any{"alg": "ES256", "kid": ks.KID, "typ": delegtoken.SessionType, "jwk": map[string]any{}}, wire(nil), false), delegtoken.ReasonHeader},
		{"other-brand-aud", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"aud": brandB + "/oauth/consent/decision"}), false), delegtoken.ReasonAudience},
		{"aud-array", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"aud": []string{decisionA}}), false), delegtoken.ReasonAudience},
		{"other-iss", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"iss": brandB + "/oauth"}), false), delegtoken.ReasonIssuer},
		{"expired", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"iat": now.Add(-10 * time.Minute).Unix(), "exp": now.Unix()}), false), delegtoken.ReasonExpired},
		{"iat-future", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"iat": now.Add(31 * time.Second).Unix()}), false), delegtoken.ReasonIssuedAt},
		{"lifetime-601s", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"iat": now.Add(-time.Second).Unix(), "exp": now.Add(600 * time.Second).Unix()}), false), delegtoken.ReasonLifetime},
		{"no-user-code", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"user_code": nil}), false), delegtoken.ReasonClaims},
		{"no-sub", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"sub": ""}), false), delegtoken.ReasonClaims},
		{"no-jti", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"jti": nil}), false), delegtoken.ReasonClaims},
		{"email-number", forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(map[string]any{"email": 7}), false), delegtoken.ReasonClaims},
	}
	// Positive control: the same hand-made wire form with nothing broken.
	if _, err := v.VerifyConsentSession(t.Context(), forgeES256(ks.Key, header(ks.KID, delegtoken.SessionType), wire(nil), false), wantA); err != nil {
		t.Fatalf("ok/hand-made: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.VerifyConsentSession(t.Context(), c.tok, wantA)
			wantReason(t, err, c.want)
		})
	}
}

// TestConsentSessionIsNoOtherKind: a real session is refused as a
// delegation token and as a receipt (typ), with the same key.
func TestConsentSessionIsNoOtherKind(t *testing.T) {
	ks := newKeySet(t)
	tok, err := delegtoken.NewSigner(ks, clock).SignConsentSession(t.Context(), session())
	if err != nil {
		t.Fatal(err)
	}
	v := delegtoken.NewVerifier(ks, clock)
	_, err = v.Verify(t.Context(), tok, delegtoken.Expect{})
	wantReason(t, err, delegtoken.ReasonType)
	_, err = v.VerifyReceipt(t.Context(), tok, mustDecode(strings.Split(tok, ".")[1]))
	wantReason(t, err, delegtoken.ReasonType)
}

// TestSignConsentSessionRefusesBadClaims: what Verify would refuse is not
// signed.
func TestSignConsentSessionRefusesBadClaims(t *testing.T) {
	s := delegtoken.NewSigner(newKeySet(t), clock)
	for name, change := range map[string]func(*delegtoken.SessionClaims){
		"aud-not-url":   func(c *delegtoken.SessionClaims) { c.Audience = "decision" },
		"no-user-code":  func(c *delegtoken.SessionClaims) { c.UserCode = "" },
		"lifetime-601s": func(c *delegtoken.SessionClaims) { c.ExpiresAt = c.IssuedAt.Add(601 * time.Second) },
	} {
		c := session()
		change(&c)
		if _, err := s.SignConsentSession(t.Context(), c); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
}

// FuzzVerifyConsentSession feeds arbitrary strings, and one-byte mutations
// of a genuine session, to VerifyConsentSession. Properties: no panic; a
// refusal is always an *Error with a reason; only the genuine session
// verifies.
func FuzzVerifyConsentSession(f *testing.F) {
	ks := newKeySet(f)
	v := delegtoken.NewVerifier(ks, clock)
	valid, err := delegtoken.NewSigner(ks, clock).SignConsentSession(f.Context(), session())
	if err != nil {
		f.Fatal(err)
	}
	parts := strings.Split(valid, ".")
	for _, seed := range []string{
		valid, "", "..", "a.b.c", parts[0] + "." + parts[1] + ".",
		b64([]byte(`{"alg":"ES256","kid":"`+ks.KID+`","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2],
		strings.Repeat("A", delegtoken.MaxSessionBytes+1),
	} {
		f.Add(seed, uint16(0), byte('A'))
	}
	f.Add("", uint16(len(valid)-1), byte('B'))
	f.Fuzz(func(t *testing.T, tok string, pos uint16, b byte) {
		check := func(tok string) {
			_, err := v.VerifyConsentSession(t.Context(), tok, wantA)
			if err == nil {
				if tok != valid {
					t.Fatalf("a session that is not the genuine one verified: %q", tok)
				}
				return
			}
			var re *delegtoken.Error
			if !errors.As(err, &re) || re.Reason == "" {
				t.Fatalf("refusal is not an *Error with a reason: %v", err)
			}
		}
		check(tok)
		mutated := []byte(valid)
		mutated[int(pos)%len(mutated)] = b
		check(string(mutated))
	})
}

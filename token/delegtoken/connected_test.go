package delegtoken_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/token/delegtoken"
)

const connectedA = brandA + "/oauth/connected"

// connected is a valid connected session of Brand A for user-42.
func connected() delegtoken.SessionClaims {
	return delegtoken.SessionClaims{
		Issuer: brandA + "/oauth", Audience: connectedA, Subject: "user-42", JTI: "cn-1",
		IssuedAt: now.Add(-time.Minute), ExpiresAt: now.Add(9 * time.Minute),
	}
}

var wantConnectedA = delegtoken.SessionExpect{Issuer: brandA + "/oauth", Audience: connectedA}

// TestConnectedSessionRoundTripAndShape: typ pact-connected+jwt, no
// user_code member, and VerifyConnectedSession returns what was signed.
func TestConnectedSessionRoundTripAndShape(t *testing.T) {
	ks := newKeySet(t)
	tok, err := delegtoken.NewSigner(ks, clock).SignConnectedSession(t.Context(), connected())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	var hdr, claims map[string]any
	if err := json.Unmarshal(mustDecode(parts[0]), &hdr); err != nil || hdr["typ"] != "pact-connected+jwt" || hdr["alg"] != "ES256" {
		t.Fatalf("header %v", hdr)
	}
	if err := json.Unmarshal(mustDecode(parts[1]), &claims); err != nil {
		t.Fatal(err)
	}
	if _, ok := claims["user_code"]; ok {
		t.Fatalf("a connected session carries user_code: %v", claims)
	}
	got, err := delegtoken.NewVerifier(ks, clock).VerifyConnectedSession(t.Context(), tok, wantConnectedA)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if got != connected() {
		t.Fatalf("claims %+v, want %+v", got, connected())
	}
}

// TestConnectedAndConsentSessionsDoNotCross: a consent session is refused
// as a connected one and the other way round (typ, same key); a connected
// session is no delegation token; a hand-made connected session with a
// user_code is refused (claims); one expired is refused.
func TestConnectedAndConsentSessionsDoNotCross(t *testing.T) {
	ks := newKeySet(t)
	s, v := delegtoken.NewSigner(ks, clock), delegtoken.NewVerifier(ks, clock)
	consentTok, err := s.SignConsentSession(t.Context(), session())
	if err != nil {
		t.Fatal(err)
	}
	connTok, err := s.SignConnectedSession(t.Context(), connected())
	if err != nil {
		t.Fatal(err)
	}
	// Positive controls.
	if _, err := v.VerifyConsentSession(t.Context(), consentTok, wantA); err != nil {
		t.Fatalf("consent control: %v", err)
	}
	if _, err := v.VerifyConnectedSession(t.Context(), connTok, wantConnectedA); err != nil {
		t.Fatalf("connected control: %v", err)
	}
	_, err = v.VerifyConnectedSession(t.Context(), consentTok, wantConnectedA)
	wantReason(t, err, delegtoken.ReasonType)
	_, err = v.VerifyConsentSession(t.Context(), connTok, wantA)
	wantReason(t, err, delegtoken.ReasonType)
	_, err = v.Verify(t.Context(), connTok, delegtoken.Expect{})
	wantReason(t, err, delegtoken.ReasonType)
	wire := func(changes map[string]any) []byte {
		m := map[string]any{"iss": brandA + "/oauth", "sub": "user-42", "aud": connectedA, "jti": "cn-1",
			"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix()}
		for k, val := range changes {
			m[k] = val
		}
		return mustJSON(m)
	}
	if _, err := v.VerifyConnectedSession(t.Context(), forgeES256(ks.Key, header(ks.KID, delegtoken.ConnectedSessionType), wire(nil), false), wantConnectedA); err != nil {
		t.Fatalf("hand-made control: %v", err)
	}
	_, err = v.VerifyConnectedSession(t.Context(), forgeES256(ks.Key, header(ks.KID, delegtoken.ConnectedSessionType), wire(map[string]any{"user_code": "BCDFGHJK"}), false), wantConnectedA)
	wantReason(t, err, delegtoken.ReasonClaims)
	_, err = v.VerifyConnectedSession(t.Context(), forgeES256(ks.Key, header(ks.KID, delegtoken.ConnectedSessionType), wire(map[string]any{"aud": decisionA}), false), wantConnectedA)
	wantReason(t, err, delegtoken.ReasonAudience)
	_, err = v.VerifyConnectedSession(t.Context(), forgeES256(ks.Key, header(ks.KID, delegtoken.ConnectedSessionType),
		wire(map[string]any{"iat": now.Add(-10 * time.Minute).Unix(), "exp": now.Unix()}), false), wantConnectedA)
	wantReason(t, err, delegtoken.ReasonExpired)
	// Signing refuses a connected session with a user code.
	c := connected()
	c.UserCode = "BCDFGHJK"
	if _, err := s.SignConnectedSession(t.Context(), c); err == nil {
		t.Fatal("a connected session with a user code was signed")
	}
}

// FuzzVerifyConnectedSession feeds arbitrary strings, and one-byte
// mutations of a genuine connected session, to VerifyConnectedSession.
// Properties: no panic; a refusal is an *Error with a reason; only the
// genuine session verifies; a genuine consent session never does.
func FuzzVerifyConnectedSession(f *testing.F) {
	ks := newKeySet(f)
	v := delegtoken.NewVerifier(ks, clock)
	s := delegtoken.NewSigner(ks, clock)
	valid, err := s.SignConnectedSession(f.Context(), connected())
	if err != nil {
		f.Fatal(err)
	}
	consentTok, err := s.SignConsentSession(f.Context(), session())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{valid, consentTok, "", "..", "a.b.c", strings.Repeat("A", delegtoken.MaxSessionBytes+1)} {
		f.Add(seed, uint16(0), byte('A'))
	}
	f.Fuzz(func(t *testing.T, tok string, pos uint16, b byte) {
		check := func(tok string) {
			_, err := v.VerifyConnectedSession(t.Context(), tok, wantConnectedA)
			if err == nil {
				if tok != valid {
					t.Fatalf("a connected session that is not the genuine one verified: %q", tok)
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

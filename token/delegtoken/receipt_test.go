package delegtoken_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/token/delegtoken"
)

func TestReceipts(t *testing.T) {
	ks := newKeySet(t)
	s := delegtoken.NewSigner(ks, clock)
	v := delegtoken.NewVerifier(ks, clock)
	ctx := t.Context()

	// Nil slices are encoded as [], never null; ts defaults to now.
	jws, claims, err := s.SignReceipt(ctx, delegtoken.ReceiptClaims{GrantID: "a2agrant_1", User: "user-42", PA: paIss, Brand: brandA})
	if err != nil {
		t.Fatalf("SignReceipt: %v", err)
	}
	want := `{"grantId":"a2agrant_1","user":"user-42","pa":"` + paIss + `","brand":"` + brandA + `","scopesUsed":[],"actions":[],"ts":"2026-12-01T09:00:00Z"}`
	if string(claims) != want {
		t.Fatalf("claims = %s\nwant   %s", claims, want)
	}
	parts := strings.Split(jws, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if string(payload) != want || string(hdr) != `{"alg":"ES256","kid":"`+ks.KID+`","typ":"pact-receipt+jws"}` {
		t.Fatalf("JWS header %s payload %s", hdr, payload)
	}
	got, err := v.VerifyReceipt(ctx, jws, claims)
	if err != nil || got.GrantID != "a2agrant_1" || got.ScopesUsed == nil || got.Actions == nil || !got.TS.Equal(now) {
		t.Fatalf("VerifyReceipt = %+v, %v", got, err)
	}

	full := delegtoken.ReceiptClaims{
		GrantID: "a2agrant_1", User: "user-42", PA: paIss, Brand: brandA,
		ScopesUsed: []string{"orders:read"},
		Actions:    []delegtoken.ReceiptAction{{Tool: "lookup_order", ArgsHash: "n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg"}, {Tool: "no_args"}},
		TS:         time.Date(2026, 12, 1, 10, 0, 0, 999, time.FixedZone("X", 3600)),
	}
	jws, claims, err = s.SignReceipt(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(claims), `"actions":[{"tool":"lookup_order","argsHash":"n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg"},{"tool":"no_args"}],"ts":"2026-12-01T09:00:00Z"`) {
		t.Fatalf("claims = %s", claims)
	}
	// Key order does not matter (canonical JSON), values do.
	reordered := `{"ts":"2026-12-01T09:00:00Z","scopesUsed":["orders:read"],"pa":"` + paIss + `","brand":"` + brandA +
		`","user":"user-42","grantId":"a2agrant_1","actions":[{"argsHash":"n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg","tool":"lookup_order"},{"tool":"no_args"}]}`
	if _, err := v.VerifyReceipt(ctx, jws, []byte(reordered)); err != nil {
		t.Fatalf("ok/reordered claims: %v", err)
	}
	for name, other := range map[string]string{
		"other-pa":    strings.Replace(string(claims), paIss, otherPA, 1),
		"other-brand": strings.Replace(string(claims), brandA, brandB, 1),
		"other-scope": strings.Replace(string(claims), "orders:read", "orders:write", 1),
		"null-scopes": strings.Replace(string(claims), `["orders:read"]`, "null", 1),
		"not-json":    "{",
	} {
		_, err := v.VerifyReceipt(ctx, jws, []byte(other))
		var re *delegtoken.Error
		if !errors.As(err, &re) || re.Reason != delegtoken.ReasonReceiptMismatch {
			t.Errorf("fail/%s: err = %v, want receipt_mismatch", name, err)
		}
	}
	// Signed by a key the Provider does not publish.
	forged := forgeES256(newECKey(t), header(ks.KID, "pact-receipt+jws"), claims, false)
	_, err = v.VerifyReceipt(ctx, forged, claims)
	wantReason(t, err, delegtoken.ReasonSignature)
	// A null array in a genuinely signed payload is refused.
	nullArr := []byte(strings.Replace(string(claims), `["orders:read"]`, "null", 1))
	_, err = v.VerifyReceipt(ctx, forgeES256(ks.Key, header(ks.KID, "pact-receipt+jws"), nullArr, false), nullArr)
	wantReason(t, err, delegtoken.ReasonClaims)
	// A receipt is never a delegation token.
	_, err = v.Verify(ctx, jws, delegtoken.Expect{})
	wantReason(t, err, delegtoken.ReasonType)

	for name, mut := range map[string]func(*delegtoken.ReceiptClaims){
		"grantId":             func(c *delegtoken.ReceiptClaims) { c.GrantID = "" },
		"user":                func(c *delegtoken.ReceiptClaims) { c.User = "" },
		"pa":                  func(c *delegtoken.ReceiptClaims) { c.PA = "pa.example" },
		"brand":               func(c *delegtoken.ReceiptClaims) { c.Brand = "ftp://x" },
		"scopesUsed[0]":       func(c *delegtoken.ReceiptClaims) { c.ScopesUsed = []string{"a b"} },
		"actions[1].tool":     func(c *delegtoken.ReceiptClaims) { c.Actions[1].Tool = "" },
		"actions[0].argsHash": func(c *delegtoken.ReceiptClaims) { c.Actions[0].ArgsHash = "a+b/=" },
		"ts":                  func(c *delegtoken.ReceiptClaims) { c.TS = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC) },
	} {
		c := full
		c.Actions = append([]delegtoken.ReceiptAction(nil), full.Actions...)
		mut(&c)
		_, _, err := s.SignReceipt(ctx, c)
		var fe *delegtoken.FieldError
		if !errors.As(err, &fe) || fe.Field != name {
			t.Errorf("fail/%s: err = %v", name, err)
		}
	}
}

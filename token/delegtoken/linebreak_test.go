package delegtoken_test

import (
	"strings"
	"testing"

	"pactd.dev/pactd/token/delegtoken"
)

// TestLineBreakAnywhereIsRefused inserts CR, LF and CRLF at every position
// of a genuine delegation token, receipt and consent session (encoding/
// base64 skips them even in strict mode, so a decoder that relied on it
// would accept a line break in the signature segment). Expected reasons follow the check
// order: a break in the header segment makes it not strict base64url
// (malformed); one in the payload or signature segment changes the signing
// input or the signature, which is checked before the payload is decoded
// (signature). The untouched tokens are the positive controls.
func TestLineBreakAnywhereIsRefused(t *testing.T) {
	ks := newKeySet(t)
	s := delegtoken.NewSigner(ks, clock)
	v := delegtoken.NewVerifier(ks, clock)
	ctx := t.Context()

	tok, err := s.Mint(ctx, delegtoken.Claims{
		Issuer: brandA + "/oauth", Audience: brandA, Subject: "user-42", ClientID: paIss,
		GrantID: "a2agrant_01ABC", Scopes: []string{"orders:read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	receipt, claims, err := s.SignReceipt(ctx, delegtoken.ReceiptClaims{GrantID: "a2agrant_1", User: "user-42", PA: paIss, Brand: brandA})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.SignConsentSession(ctx, session())
	if err != nil {
		t.Fatal(err)
	}
	wantTok := delegtoken.Expect{Issuer: brandA + "/oauth", Audience: brandA, ClientID: paIss}
	kinds := []struct {
		name   string
		tok    string
		verify func(string) error
	}{
		{"delegation-token", tok, func(x string) error { _, err := v.Verify(ctx, x, wantTok); return err }},
		{"receipt", receipt, func(x string) error { _, err := v.VerifyReceipt(ctx, x, claims); return err }},
		{"consent-session", sess, func(x string) error { _, err := v.VerifyConsentSession(ctx, x, wantA); return err }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			if err := k.verify(k.tok); err != nil {
				t.Fatalf("ok/control: the genuine %s is refused: %v", k.name, err)
			}
			headerEnd := strings.IndexByte(k.tok, '.')
			for i := 0; i <= len(k.tok); i++ {
				want := delegtoken.ReasonSignature
				if i <= headerEnd {
					want = delegtoken.ReasonMalformed
				}
				for _, br := range []string{"\n", "\r", "\r\n"} {
					bad := k.tok[:i] + br + k.tok[i:]
					err := k.verify(bad)
					if err == nil {
						t.Fatalf("fail/%q-at-%d: verified", br, i)
					}
					wantReason(t, err, want)
				}
			}
		})
	}
}

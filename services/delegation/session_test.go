package delegation_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/token/delegtoken"
)

// Consent sessions (spec §2.5: the Provider-signed "consent session" JWT
// the consent page carries, typ pact-consent+jwt, aud the decision URL,
// claims sub, user_code, email, 600 s) and §6 items 33-35.

const signedDecision = publicURL + "/a2a/signed/oauth/consent/decision"

// begin opens the consent page at "signed" with a fresh valid assertion
// for code.
func (e *env) begin(login *brandLogin, code string) (*pactv1.BeginConsentResponse, error) {
	return e.rpc.BeginConsent(e.t.Context(), &pactv1.BeginConsentRequest{BrandId: "signed", BrandAssertion: login.es256(e.t, login.claims(e.clk.Now(), code))})
}

// mustBegin is begin that must succeed.
func (e *env) mustBegin(login *brandLogin, code string) *pactv1.BeginConsentResponse {
	e.t.Helper()
	res, err := e.begin(login, code)
	if err != nil {
		e.t.Fatalf("BeginConsent: %v", err)
	}
	return res
}

// status is the stored state of a device code at brand.
func (e *env) status(brand, deviceCode string) db.DeviceStatus {
	e.t.Helper()
	d, err := e.store.GetDeviceAuthorizationByDeviceCode(e.t.Context(), brand, deviceHash(deviceCode))
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Status
}

// grants counts the Brand user's grants at brand.
func (e *env) grants(brand, user string) int {
	e.t.Helper()
	gs, err := e.store.ListGrants(e.t.Context(), brand, user, "", 100)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(gs)
}

// TestBeginConsent: the answer is the consent page's content and a session
// of the documented shape; the assertion is used up by it.
func TestBeginConsent(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		code, dc := e.pendingCode()
		res := e.mustBegin(login, code)
		c := res.GetConsent()
		if c.GetAgentDisplayName() != "Pocket Assistant" || c.GetAgentOrigin() != paIssuer || c.GetBrandDisplayName() != "Signed" ||
			c.GetUserCode() != code || len(c.GetScopes()) != 1 || c.GetScopes()[0].GetId() != "orders:read" ||
			c.GetScopes()[0].GetDescription() != "See your orders" || !c.GetExpiresAt().AsTime().Equal(start.Add(600*time.Second)) {
			t.Fatalf("consent %v", c)
		}
		if res.GetBrandUser() != "user-42" || res.GetEmail() != "user@acme.example" || res.GetDecisionUrl() != signedDecision ||
			res.GetClientId() != paIssuer {
			t.Fatalf("begin %v", res)
		}
		parts := strings.Split(res.GetConsentSession(), ".")
		if len(parts) != 3 {
			t.Fatalf("session %q", res.GetConsentSession())
		}
		var hdr map[string]any
		var claims map[string]any
		hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
		cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
		if json.Unmarshal(hb, &hdr) != nil || json.Unmarshal(cb, &claims) != nil {
			t.Fatalf("session segments %s %s", hb, cb)
		}
		if hdr["typ"] != "pact-consent+jwt" || hdr["alg"] != "ES256" || hdr["kid"] != "test-key" {
			t.Fatalf("session header %v", hdr)
		}
		// 600 s, and never past the authorization's expiry (here both).
		if claims["iss"] != publicURL+"/a2a/signed/oauth" || claims["aud"] != signedDecision || claims["sub"] != "user-42" ||
			claims["user_code"] != code ||
			claims["email"] != "user@acme.example" || claims["jti"] == "" ||
			claims["iat"] != float64(start.Unix()) || claims["exp"] != float64(start.Unix()+600) ||
			!res.GetSessionExpiresAt().AsTime().Equal(start.Add(600*time.Second)) {
			t.Fatalf("session claims %v", claims)
		}
		// Later in the authorization's life the session ends with it.
		e.clk.Advance(100 * time.Second)
		code2, _ := e.pendingCode()
		e.clk.Advance(200 * time.Second)
		res2 := e.mustBegin(login, code2)
		if !res2.GetSessionExpiresAt().AsTime().Equal(start.Add(700 * time.Second)) {
			t.Fatalf("session of a code with 300 s left expires %v, want the code's expiry", res2.GetSessionExpiresAt().AsTime())
		}
		if e.status("signed", dc) != db.DevicePending {
			t.Fatal("BeginConsent decided the authorization")
		}
	})
}

// TestBeginConsentRefusals: the assertion rules and reasons of
// ApproveConsent hold; a replayed assertion is REPLAYED; an authorization
// that is not pending is NOT_PENDING and does not use the assertion up; a
// trusted-frontend Brand is refused. Nothing is decided by any of them.
func TestBeginConsentRefusals(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		ctx := t.Context()
		now := e.clk.Now()
		code, dc := e.pendingCode()
		begin := func(tok string) error {
			_, err := e.rpc.BeginConsent(ctx, &pactv1.BeginConsentRequest{BrandId: "signed", BrandAssertion: tok})
			return err
		}
		fp := connect.CodeFailedPrecondition
		wantRefusal(t, begin(login.es256(t, with(login.claims(now, code), map[string]any{"iat": now.Unix() - 200, "exp": now.Unix() - 31}))), fp, rExpired)
		wantRefusal(t, begin(login.es256(t, with(login.claims(now, code), map[string]any{"aud": publicURL + "/a2a/signed2/oauth/consent"}))), fp, rAudience)
		wantRefusal(t, begin(signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec"}, login.claims(now, code), login.other)), fp, rSignature)
		wantRefusal(t, begin(login.es256(t, with(login.claims(now, code), map[string]any{"user_code": nil}))), fp, rUserCodeMissing)
		wantRefusal(t, begin("not.a-jwt"), connect.CodeInvalidArgument, rMalformed)
		if _, err := e.rpc.BeginConsent(ctx, &pactv1.BeginConsentRequest{BrandId: "signed", BrandAssertion: login.es256(t, login.claims(now, "BBBB-BBBB"))}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("unknown code: %v, want NotFound", err)
		}
		// A trusted-frontend Brand has no use for it.
		_, err := e.rpc.BeginConsent(ctx, &pactv1.BeginConsentRequest{BrandId: "acme", BrandAssertion: login.es256(t, login.claims(now, code))})
		if connect.CodeOf(err) != fp || rpcerr.Reason(err) != "ERROR_REASON_FAILED_PRECONDITION" || !strings.Contains(err.Error(), "TRUSTED_FRONTEND") {
			t.Fatalf("trusted-frontend Brand: %v", err)
		}
		if _, err := e.rpc.BeginConsent(ctx, &pactv1.BeginConsentRequest{BrandId: "signed"}); connect.CodeOf(err) != connect.CodeInvalidArgument ||
			rpcerr.FieldViolations(err)[0] != "brand_assertion" {
			t.Fatalf("no assertion: %v", err)
		}
		if e.status("signed", dc) != db.DevicePending {
			t.Fatal("a refusal changed the authorization")
		}
		// Positive control, then the same assertion again: REPLAYED.
		tok := login.es256(t, login.claims(now, code))
		if err := begin(tok); err != nil {
			t.Fatalf("positive control: %v", err)
		}
		wantRefusal(t, begin(tok), fp, rReplayed)
		// NOT_PENDING: a denied code; its assertion stays unused, so its jti
		// still opens another pending code.
		deniedCode, _ := e.pendingCode()
		s := e.mustBegin(login, deniedCode)
		if _, err := e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", ConsentSession: s.GetConsentSession()}); err != nil {
			t.Fatal(err)
		}
		c := with(login.claims(now, deniedCode), map[string]any{"jti": "jti-kept"})
		wantRefusal(t, begin(login.es256(t, c)), fp, rNotPending)
		other, _ := e.pendingCode()
		if err := begin(login.es256(t, with(c, map[string]any{"user_code": other}))); err != nil {
			t.Fatalf("jti of a NOT_PENDING assertion was used up: %v", err)
		}
	})
}

const (
	sMalformed = "CONSENT_SESSION_REFUSAL_MALFORMED"
	sType      = "CONSENT_SESSION_REFUSAL_TYPE"
	sSignature = "CONSENT_SESSION_REFUSAL_SIGNATURE"
	sAudience  = "CONSENT_SESSION_REFUSAL_AUDIENCE"
	sExpired   = "CONSENT_SESSION_REFUSAL_EXPIRED"
	sUserCode  = "CONSENT_SESSION_REFUSAL_USER_CODE_MISMATCH"
	sPending   = "CONSENT_SESSION_REFUSAL_NOT_PENDING"
)

// TestConsentSessionDecisions: approve and deny with a session; deciding
// twice and approving after deny are refused by the pending-only update
// and change nothing.
func TestConsentSessionDecisions(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		ctx := t.Context()
		fp := connect.CodeFailedPrecondition
		approve := func(session string, scopes ...string) (*pactv1.ApproveConsentResponse, error) {
			return e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", ConsentSession: session, Scopes: scopes})
		}
		deny := func(session string) error {
			_, err := e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", ConsentSession: session})
			return err
		}

		// Approve: the grant is the session's User's, and the PA redeems it.
		code, dc := e.pendingCode()
		s := e.mustBegin(login, code).GetConsentSession()
		ap, err := approve(s, "orders:read", "not:requested")
		e.wantGrant(ap, err, "user-42", "orders:read")
		if ap.GetClientId() != paIssuer {
			t.Fatalf("client_id %q", ap.GetClientId())
		}
		// Deciding twice, either way: NOT_PENDING, nothing changes.
		_, err = approve(s, "orders:read")
		wantRefusal(t, err, fp, sPending)
		wantRefusal(t, deny(s), fp, sPending)
		if e.status("signed", dc) != db.DeviceApproved || e.grants("signed", "user-42") != 1 {
			t.Fatal("a second decision changed something")
		}
		r := e.post("signed", "token", paAuth, deviceGrant(dc, paIssuer))
		if r.status != 200 || r.json(t)["scope"] != "orders:read" {
			t.Fatalf("redeem: %d %s", r.status, r.body)
		}

		// Deny, then approve after deny: NOT_PENDING, no grant.
		code2, dc2 := e.pendingCode()
		s2 := e.mustBegin(login, code2).GetConsentSession()
		if err := deny(s2); err != nil {
			t.Fatalf("deny: %v", err)
		}
		_, err = approve(s2, "orders:read")
		wantRefusal(t, err, fp, sPending)
		if e.status("signed", dc2) != db.DeviceDenied || e.grants("signed", "user-42") != 1 {
			t.Fatal("approve after deny changed something")
		}
		wantOAuthError(t, e.post("signed", "token", paAuth, deviceGrant(dc2, paIssuer)), 400, "access_denied")

		// Nothing checked is a deny.
		code3, dc3 := e.pendingCode()
		ap, err = approve(e.mustBegin(login, code3).GetConsentSession())
		if err != nil || ap.GetGrantId() != "" || e.status("signed", dc3) != db.DeviceDenied {
			t.Fatalf("approve of nothing: %v %v", ap, err)
		}
	})
}

// TestConsentSessionRefusals: forged, expired, another Brand's, another
// user code's, another kind of Provider token signed by the same key, and
// malformed sessions are refused with their reasons and change nothing;
// the positive control on the same code then approves.
func TestConsentSessionRefusals(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		ctx := t.Context()
		now := e.clk.Now()
		fp, ia := connect.CodeFailedPrecondition, connect.CodeInvalidArgument
		code, dc := e.pendingCode()
		good := e.mustBegin(login, code).GetConsentSession()
		otherCode, _ := e.pendingCode()

		// Another Brand's session: a pending code at signed2.
		d2 := e.startDevice("signed2", paAuth, paIssuer, "orders:read")
		code2 := d2["user_code"].(string)
		a2 := signJWS(t, map[string]any{"alg": "ES256", "kid": "k-two"}, map[string]any{
			"iss": signed2Login, "aud": publicURL + "/a2a/signed2/oauth/consent", "sub": "user-42", "jti": login.jti(),
			"iat": now.Unix(), "exp": now.Unix() + 120, "user_code": code2}, login.ec2)
		b2, err := e.rpc.BeginConsent(ctx, &pactv1.BeginConsentRequest{BrandId: "signed2", BrandAssertion: a2})
		if err != nil {
			t.Fatalf("BeginConsent at signed2: %v", err)
		}
		// The same Provider key signs delegation tokens and receipts.
		signer := delegtoken.NewSigner(e.keys, e.clk.Now)
		access, err := signer.Mint(ctx, delegtoken.Claims{Issuer: publicURL + "/a2a/signed/oauth", Audience: publicURL + "/a2a/signed",
			Subject: "user-42", ClientID: paIssuer, GrantID: "a2agrant_x", Scopes: []string{"orders:read"}})
		if err != nil {
			t.Fatal(err)
		}
		receipt, _, err := signer.SignReceipt(ctx, delegtoken.ReceiptClaims{GrantID: "a2agrant_x", User: "user-42", PA: paIssuer, Brand: publicURL + "/a2a/signed"})
		if err != nil {
			t.Fatal(err)
		}
		// A forgery: the good session's claims signed by another key under
		// the Provider's kid.
		parts := strings.Split(good, ".")
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		forged := signJWS(t, map[string]any{"alg": "ES256", "kid": "test-key", "typ": "pact-consent+jwt"}, string(payload), login.other)

		cases := []struct {
			name, session, userCode string
			code                    connect.Code
			reason                  string
		}{
			{"forged", forged, "", fp, sSignature},
			{"other-brand", b2.GetConsentSession(), "", fp, sAudience},
			{"other-user-code", good, otherCode, fp, sUserCode},
			{"delegation-token", access, "", fp, sType},
			{"receipt", receipt, "", fp, sType},
			{"malformed", "abc", "", ia, sMalformed},
			{"oversized", strings.Repeat("a", 9<<10), "", ia, sMalformed},
		}
		for _, c := range cases {
			_, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", UserCode: c.userCode, ConsentSession: c.session, Scopes: []string{"orders:read"}})
			wantRefusal(t, err, c.code, c.reason)
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", UserCode: c.userCode, ConsentSession: c.session})
			wantRefusal(t, err, c.code, c.reason)
		}
		// Field rules: a session with an assertion or a brand_user; a session
		// at a trusted-frontend Brand.
		for name, req := range map[string]*pactv1.ApproveConsentRequest{
			"brand_assertion": {BrandId: "signed", ConsentSession: good, BrandAssertion: login.es256(t, login.claims(now, code))},
			"brand_user":      {BrandId: "signed", ConsentSession: good, BrandUser: "mallory"},
			"consent_session": {BrandId: "acme", ConsentSession: good},
		} {
			_, err := e.rpc.ApproveConsent(ctx, req)
			if connect.CodeOf(err) != ia || len(rpcerr.FieldViolations(err)) == 0 || rpcerr.FieldViolations(err)[0] != name {
				t.Fatalf("%s: %v (fields %v)", name, err, rpcerr.FieldViolations(err))
			}
		}
		if e.status("signed", dc) != db.DevicePending || e.grants("signed", "user-42") != 0 {
			t.Fatal("a refused session changed something")
		}
		// Positive control: the good session, with its own user code named.
		ap, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", UserCode: code, ConsentSession: good, Scopes: []string{"orders:read"}})
		e.wantGrant(ap, err, "user-42", "orders:read")

		// Expired: 600 s later the session (and here the code) is over.
		code3, dc3 := e.pendingCode()
		s3 := e.mustBegin(login, code3).GetConsentSession()
		e.clk.Advance(600 * time.Second)
		_, err = e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", ConsentSession: s3, Scopes: []string{"orders:read"}})
		wantRefusal(t, err, fp, sExpired)
		if e.status("signed", dc3) != db.DevicePending {
			t.Fatal("an expired session decided")
		}
	})
}

// TestConsentSessionConcurrentDecisions: of concurrent decisions with one
// session exactly one wins; the others are NOT_PENDING.
func TestConsentSessionConcurrentDecisions(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		code, _ := e.pendingCode()
		s := e.mustBegin(login, code).GetConsentSession()
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					_, errs[i] = e.rpc.ApproveConsent(t.Context(), &pactv1.ApproveConsentRequest{BrandId: "signed", ConsentSession: s, Scopes: []string{"orders:read"}})
				} else {
					_, errs[i] = e.rpc.DenyConsent(t.Context(), &pactv1.DenyConsentRequest{BrandId: "signed", ConsentSession: s})
				}
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if rpcerr.Reason(err) != sPending {
				t.Fatalf("loser: %v, want %s", err, sPending)
			}
		}
		if ok != 1 || e.grants("signed", "user-42") > 1 {
			t.Fatalf("%d decisions won, want exactly 1", ok)
		}
	})
}

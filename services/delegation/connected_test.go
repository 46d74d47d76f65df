package delegation_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
)

const (
	signedConnected     = publicURL + "/a2a/signed/oauth/connected"
	rUserCodeUnexpected = "BRAND_ASSERTION_REFUSAL_USER_CODE_UNEXPECTED"
	connectedSessionTyp = "pact-connected+jwt"
)

// connectedClaims are a valid assertion for the connected page of
// "signed": aud the connected URL, no user_code.
func connectedClaims(l *brandLogin, now time.Time, sub string) map[string]any {
	return with(l.claims(now, ""), map[string]any{"aud": signedConnected, "user_code": nil, "sub": sub})
}

// grantSigned makes a live grant at "signed" for sub through consent.
func (e *env) grantSigned(login *brandLogin, sub string) {
	e.t.Helper()
	code, _ := e.pendingCode()
	tok := login.es256(e.t, with(login.claims(e.clk.Now(), code), map[string]any{"sub": sub}))
	if _, err := e.approveSigned(e.t.Context(), code, tok, "orders:read"); err != nil {
		e.t.Fatalf("approve: %v", err)
	}
}

// TestBeginConnectedAndRevoke: the positive path. A connected assertion
// opens the page with the User's grants (and only the User's) and a
// connected session (typ pact-connected+jwt, aud the connected URL, 600 s);
// the session reopens the page; RevokeConnected revokes the PA's live
// grants of that User only, and a second call revokes nothing.
func TestBeginConnectedAndRevoke(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		ctx := t.Context()
		e.grantSigned(login, "user-42")
		e.grantSigned(login, "user-7")
		res, err := e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed",
			BrandAssertion: login.es256(t, connectedClaims(login, e.clk.Now(), "user-42"))})
		if err != nil {
			t.Fatalf("BeginConnected: %v", err)
		}
		if res.GetBrandUser() != "user-42" || len(res.GetGrants()) != 1 || res.GetGrants()[0].GetBrandUser() != "user-42" ||
			res.GetGrants()[0].GetRevokeTime() != nil || res.GetConnectedUrl() != signedConnected || res.GetTruncated() ||
			!res.GetSessionExpiresAt().AsTime().Equal(e.clk.Now().Add(600*time.Second).Truncate(time.Second)) {
			t.Fatalf("begin connected %v", res)
		}
		parts := strings.Split(res.GetConnectedSession(), ".")
		hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
		cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var hdr, claims map[string]any
		if json.Unmarshal(hb, &hdr) != nil || json.Unmarshal(cb, &claims) != nil || hdr["typ"] != connectedSessionTyp ||
			claims["aud"] != signedConnected || claims["sub"] != "user-42" || claims["iss"] != publicURL+"/a2a/signed/oauth" {
			t.Fatalf("connected session %s %s", hb, cb)
		}
		if _, ok := claims["user_code"]; ok {
			t.Fatalf("connected session names a user code: %s", cb)
		}
		again, err := e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed", ConnectedSession: res.GetConnectedSession()})
		if err != nil || again.GetBrandUser() != "user-42" || len(again.GetGrants()) != 1 || again.GetConnectedSession() != res.GetConnectedSession() {
			t.Fatalf("reopen with the session: %v %v", again, err)
		}
		agent := res.GetGrants()[0].GetAgentId()
		rv, err := e.rpc.RevokeConnected(ctx, &pactv1.RevokeConnectedRequest{BrandId: "signed", ConnectedSession: res.GetConnectedSession(), AgentId: agent})
		if err != nil || len(rv.GetRevokedGrantIds()) != 1 || rv.GetRevokedGrantIds()[0] != res.GetGrants()[0].GetGrantId() ||
			len(rv.GetGrants()) != 1 || rv.GetGrants()[0].GetRevokeTime() == nil {
			t.Fatalf("revoke connected: %v %v", rv, err)
		}
		rv, err = e.rpc.RevokeConnected(ctx, &pactv1.RevokeConnectedRequest{BrandId: "signed", ConnectedSession: res.GetConnectedSession(), AgentId: agent})
		if err != nil || len(rv.GetRevokedGrantIds()) != 0 {
			t.Fatalf("second revoke: %v %v", rv, err)
		}
		other, err := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "signed", BrandUser: "user-7"})
		if err != nil || len(other.GetGrants()) != 1 || other.GetGrants()[0].GetRevokeTime() != nil {
			t.Fatalf("another User's grant was touched: %v %v", other, err)
		}
	})
}

// TestBeginConnectedRefusals: consent and connected assertions and
// sessions do not cross; a replayed, expired or other-Brand one is refused
// with its reason; a trusted-frontend Brand and malformed calls are
// refused. The positive control is the first call.
func TestBeginConnectedRefusals(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		ctx := t.Context()
		now := e.clk.Now()
		e.grantSigned(login, "user-42")
		begin := func(claims map[string]any) (*pactv1.BeginConnectedResponse, error) {
			return e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed", BrandAssertion: login.es256(t, claims)})
		}
		fp := connect.CodeFailedPrecondition
		tok := login.es256(t, connectedClaims(login, now, "user-42"))
		res, err := e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed", BrandAssertion: tok})
		if err != nil {
			t.Fatalf("positive control: %v", err)
		}
		// The same jti again: REPLAYED.
		_, err = e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed", BrandAssertion: tok})
		wantRefusal(t, err, fp, rReplayed)
		// A consent assertion (aud the consent URL, a user_code) does not
		// open the connected page.
		code, dc := e.pendingCode()
		_, err = begin(login.claims(now, code))
		wantRefusal(t, err, fp, rAudience)
		// The connected URL as aud but a user_code: made for consent.
		_, err = begin(with(connectedClaims(login, now, "user-42"), map[string]any{"user_code": code}))
		wantRefusal(t, err, fp, rUserCodeUnexpected)
		// Expired, and another Brand's connected URL.
		_, err = begin(with(connectedClaims(login, now, "user-42"), map[string]any{"iat": now.Unix() - 200, "exp": now.Unix() - 31}))
		wantRefusal(t, err, fp, rExpired)
		_, err = begin(with(connectedClaims(login, now, "user-42"), map[string]any{"aud": publicURL + "/a2a/signed2/oauth/connected"}))
		wantRefusal(t, err, fp, rAudience)
		// A connected assertion does not open (or decide) consent.
		_, err = e.rpc.BeginConsent(ctx, &pactv1.BeginConsentRequest{BrandId: "signed",
			BrandAssertion: login.es256(t, with(connectedClaims(login, now, "user-42"), map[string]any{"user_code": code}))})
		wantRefusal(t, err, fp, rAudience)
		_, err = e.approveSigned(ctx, code, login.es256(t, with(connectedClaims(login, now, "user-42"), map[string]any{"user_code": code})), "orders:read")
		wantRefusal(t, err, fp, rAudience)
		// Sessions do not cross either: a consent session is not a
		// connected one, and a connected session decides nothing.
		cs := e.mustBegin(login, code)
		_, err = e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed", ConnectedSession: cs.GetConsentSession()})
		wantRefusal(t, err, fp, sType)
		_, err = e.rpc.RevokeConnected(ctx, &pactv1.RevokeConnectedRequest{BrandId: "signed", ConnectedSession: cs.GetConsentSession(), AgentId: "a"})
		wantRefusal(t, err, fp, sType)
		_, err = e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", ConsentSession: res.GetConnectedSession(), Scopes: []string{"orders:read"}})
		wantRefusal(t, err, fp, sType)
		if e.status("signed", dc) != db.DevicePending {
			t.Fatal("a refusal decided the authorization")
		}
		// The session of another Brand: its aud.
		_, err = e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed2", ConnectedSession: res.GetConnectedSession()})
		wantRefusal(t, err, fp, sAudience)
		// Malformed calls and a trusted-frontend Brand.
		_, err = e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed"})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || rpcerr.FieldViolations(err)[0] != "brand_assertion" {
			t.Fatalf("neither field: %v", err)
		}
		_, err = e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "signed", BrandAssertion: "x", ConnectedSession: "y"})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || rpcerr.FieldViolations(err)[0] != "connected_session" {
			t.Fatalf("both fields: %v", err)
		}
		_, err = e.rpc.RevokeConnected(ctx, &pactv1.RevokeConnectedRequest{BrandId: "signed", ConnectedSession: res.GetConnectedSession()})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || rpcerr.FieldViolations(err)[0] != "agent_id" {
			t.Fatalf("no agent_id: %v", err)
		}
		_, err = e.rpc.BeginConnected(ctx, &pactv1.BeginConnectedRequest{BrandId: "acme", BrandAssertion: tok})
		if connect.CodeOf(err) != fp || rpcerr.Reason(err) != "ERROR_REASON_FAILED_PRECONDITION" || !strings.Contains(err.Error(), "TRUSTED_FRONTEND") {
			t.Fatalf("trusted-frontend Brand: %v", err)
		}
		// The session expires after 600 s: nothing is revoked with it.
		agent := res.GetGrants()[0].GetAgentId()
		e.clk.Advance(601 * time.Second)
		_, err = e.rpc.RevokeConnected(ctx, &pactv1.RevokeConnectedRequest{BrandId: "signed", ConnectedSession: res.GetConnectedSession(), AgentId: agent})
		wantRefusal(t, err, fp, sExpired)
		list, err := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "signed", BrandUser: "user-42"})
		if err != nil || len(list.GetGrants()) != 1 || list.GetGrants()[0].GetRevokeTime() != nil {
			t.Fatalf("a refused revoke changed the grant: %v %v", list, err)
		}
	})
}

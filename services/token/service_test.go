package token_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/services/token"
	"pactd.dev/pactd/token/delegtoken"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const publicURL = "https://provider.example"

// grants is a hand-written GrantChecker: live grants by id.
type grants struct {
	mu      sync.Mutex
	live    map[string][4]string // grant → brand, client, user
	details map[string]string    // grant → authorization_details
}

func (g *grants) GrantLiveAt(_ context.Context, grantID, brandID, clientID, brandUser string, _ time.Time) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	want, ok := g.live[grantID]
	return ok && want == [4]string{brandID, clientID, brandUser}, nil
}

func (g *grants) LiveGrantDetails(ctx context.Context, grantID, brandID, clientID, brandUser string, now time.Time) (string, bool, error) {
	live, err := g.GrantLiveAt(ctx, grantID, brandID, clientID, brandUser, now)
	if !live || err != nil {
		return "", false, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.details[grantID], true, nil
}

func (g *grants) revoke(id string) { g.mu.Lock(); delete(g.live, id); g.mu.Unlock() }

// env is a TokenService on a real store behind a real HTTP/2 server.
type env struct {
	clock  *testclock.Clock
	store  db.Store
	ring   *provkeys.Ring
	minter *delegtoken.Signer
	grants *grants
	url    string
	srv    *httptest.Server
}

// start builds the service; withGrants false leaves Deps.Grants nil, as the
// server wires it until the delegation store exists.
func start(t *testing.T, dbURL string, opts ...func(*token.Deps)) *env {
	t.Helper()
	ctx := t.Context()
	s := dbtest.Open(t, dbURL, t.TempDir())
	c := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	ring, err := provkeys.Open(ctx, provkeys.Config{Store: s, KEK: bytes.Repeat([]byte{9}, 32), Now: c.Now})
	if err != nil {
		t.Fatalf("provkeys.Open: %v", err)
	}
	e := &env{clock: c, store: s, ring: ring, minter: delegtoken.NewSigner(ring, c.Now), grants: &grants{live: map[string][4]string{}}}
	deps := token.Deps{Brands: s, Grants: e.grants, Keys: ring, Verifier: delegtoken.NewVerifier(ring, c.Now), Signer: delegtoken.NewSigner(ring, c.Now),
		Audit: s, PublicURL: publicURL, Now: c.Now}
	for _, o := range opts {
		o(&deps)
	}
	mux := http2Mux(token.New(deps))
	e.srv = httptest.NewUnstartedServer(mux)
	e.srv.EnableHTTP2 = true
	e.srv.StartTLS()
	t.Cleanup(e.srv.Close)
	e.url = e.srv.URL
	for _, b := range []db.Brand{
		{ID: "acme", DisplayName: "Acme", Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See orders"}, {ID: "orders:write", Description: "Change orders"}}}},
		{ID: "globex", DisplayName: "Globex", Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See orders"}}}},
		{ID: "plain", DisplayName: "No delegation"},
	} {
		b.CreateTime, b.UpdateTime = c.Now(), c.Now()
		if _, err := s.CreateBrand(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) client(opts ...connect.ClientOption) pactv1connect.TokenServiceClient {
	return pactv1connect.NewTokenServiceClient(e.srv.Client(), e.url, opts...)
}

// protocols are the wire protocols every RPC must answer on.
var protocols = map[string][]connect.ClientOption{
	"connect": nil,
	"grpc":    {connect.WithGRPC()},
	"grpcweb": {connect.WithGRPCWeb()},
}

// jwks parses the GetJwks document the way a PA or Brand does, with no
// help from provkeys: EC P-256 keys by kid, in document order.
func jwks(t *testing.T, c pactv1connect.TokenServiceClient) (map[string]*ecdsa.PublicKey, []string) {
	t.Helper()
	resp, err := c.GetJwks(t.Context(), &pactv1.GetJwksRequest{})
	if err != nil {
		t.Fatalf("GetJwks: %v", err)
	}
	if resp.GetCacheControl() != "public, max-age=300" {
		t.Fatalf("JWKS Cache-Control = %q", resp.GetCacheControl())
	}
	var doc struct {
		Keys []struct {
			Kty, Crv, X, Y, Kid, Alg, Use string
			D                             *string `json:"d"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(resp.GetJwksJson()), &doc); err != nil {
		t.Fatalf("JWKS JSON: %v", err)
	}
	keys := map[string]*ecdsa.PublicKey{}
	var order []string
	for _, k := range doc.Keys {
		if k.Kty != "EC" || k.Crv != "P-256" || k.Alg != "ES256" || k.Use != "sig" || k.D != nil || k.Kid == "" {
			t.Fatalf("JWK %+v is not a public ES256 signing key", k)
		}
		x, _ := base64.RawURLEncoding.DecodeString(k.X)
		y, _ := base64.RawURLEncoding.DecodeString(k.Y)
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			t.Fatalf("JWK %s: %v", k.Kid, err)
		}
		keys[k.Kid] = pub
		order = append(order, k.Kid)
	}
	return keys, order
}

// verifyReceipt checks a receipt as a PA does (§5.6) against the published
// JWKS and returns the JWS kid and payload.
func verifyReceipt(t *testing.T, keys map[string]*ecdsa.PublicKey, jws, claimsJSON string) (string, map[string]any) {
	t.Helper()
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		t.Fatalf("receipt JWS has %d parts", len(parts))
	}
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]string
	if err := json.Unmarshal(hb, &h); err != nil || h["alg"] != "ES256" || h["typ"] != "pact-receipt+jws" {
		t.Fatalf("receipt header = %s", hb)
	}
	pub := keys[h["kid"]]
	if pub == nil {
		t.Fatalf("receipt kid %s is not in the JWKS", h["kid"])
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("receipt signature does not verify with the published key")
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var a, b map[string]any
	if json.Unmarshal(payload, &a) != nil || json.Unmarshal([]byte(claimsJSON), &b) != nil {
		t.Fatal("receipt payload or claims are not JSON objects")
	}
	ca, _ := json.Marshal(a) // maps marshal with sorted keys: canonical
	cb, _ := json.Marshal(b)
	if !bytes.Equal(ca, cb) {
		t.Fatalf("canonical payload %s != claims %s", ca, cb)
	}
	return h["kid"], a
}

func TestReceiptVerifiesAgainstPublishedJWKS(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := start(t, dbURL)
		e.grants.live["a2agrant_01"] = [4]string{"acme", "https://pa.example", "user-42"}
		e.grants.live["g"] = [4]string{"acme", "https://pa.example", "u"}
		for name, opts := range protocols {
			c := e.client(opts...)
			keys, order := jwks(t, c)
			if len(order) != 1 {
				t.Fatalf("%s: JWKS has %d keys, want 1", name, len(order))
			}
			resp, err := c.SignReceipt(t.Context(), &pactv1.SignReceiptRequest{
				BrandId: "acme", GrantId: "a2agrant_01", PaIssuer: "https://pa.example", BrandUser: "user-42",
				ScopesUsed: []string{"orders:read"}, Actions: []*pactv1.ReceiptAction{
					{Tool: "lookup_order", ArgsJson: `{"b":1.0,"a":"é","c":[1e2,{"z":null,"y":true}]}`}, {Tool: "no_args"}},
				Ts: timestamppb.New(time.Date(2026, 12, 1, 8, 59, 0, 0, time.UTC)),
			})
			if err != nil {
				t.Fatalf("%s: SignReceipt: %v", name, err)
			}
			_, claims := verifyReceipt(t, keys, resp.GetJws(), resp.GetClaimsJson())
			// argsHash is base64url(SHA-256) of the RFC 8785 form of the
			// arguments, which RFC 8785 §3.2 makes this exact text.
			sum := sha256.Sum256([]byte(`{"a":"é","b":1,"c":[100,{"y":true,"z":null}]}`))
			argsHash := base64.RawURLEncoding.EncodeToString(sum[:])
			want := `{"grantId":"a2agrant_01","user":"user-42","pa":"https://pa.example","brand":"https://provider.example/a2a/acme",` +
				`"scopesUsed":["orders:read"],"actions":[{"tool":"lookup_order","argsHash":"` + argsHash + `"},{"tool":"no_args"}],"ts":"2026-12-01T08:59:00Z"}`
			if resp.GetClaimsJson() != want || claims["brand"] != publicURL+"/a2a/acme" {
				t.Fatalf("%s: claims = %s\nwant %s", name, resp.GetClaimsJson(), want)
			}
			var receipt struct {
				JWS    string          `json:"jws"`
				Claims json.RawMessage `json:"claims"`
			}
			if err := json.Unmarshal([]byte(resp.GetReceiptJson()), &receipt); err != nil || receipt.JWS != resp.GetJws() || string(receipt.Claims) != want {
				t.Fatalf("%s: receipt_json = %s", name, resp.GetReceiptJson())
			}
			// The receipt is on the audit trail, found by its JWS's hash.
			events, err := e.store.ListAuditEvents(t.Context(), db.AuditFilter{GrantID: "a2agrant_01"}, 0, 100)
			if err != nil || len(events) == 0 {
				t.Fatalf("%s: audit events = %v, %v", name, events, err)
			}
			sum = sha256.Sum256([]byte(resp.GetJws()))
			ev := events[len(events)-1]
			if ev.Kind != db.AuditReceiptSigned || ev.Detail != base64.RawURLEncoding.EncodeToString(sum[:]) || ev.BrandID != "acme" ||
				ev.BrandUser != "user-42" || ev.ClientID != "https://pa.example" || fmt.Sprint(ev.Scopes) != "[orders:read]" ||
				fmt.Sprint(ev.Actions) != "[{lookup_order "+argsHash+"} {no_args }]" || !ev.Time.Equal(e.clock.Now()) {
				t.Fatalf("%s: receipt event = %+v", name, ev)
			}
		}
		// No scopes or actions: arrays, never null; ts defaults to now.
		resp, err := e.client().SignReceipt(t.Context(), &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: "g", PaIssuer: "https://pa.example", BrandUser: "u"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(resp.GetClaimsJson(), `"scopesUsed":[],"actions":[],"ts":"2026-12-01T09:00:00Z"`) {
			t.Fatalf("claims = %s", resp.GetClaimsJson())
		}
		keys, _ := jwks(t, e.client())
		verifyReceipt(t, keys, resp.GetJws(), resp.GetClaimsJson())
	})
}

func TestSignReceiptRefusals(t *testing.T) {
	e := start(t, "")
	e.grants.live["g1"] = [4]string{"acme", "https://pa.example", "user-42"}
	c := e.client()
	good := func() *pactv1.SignReceiptRequest {
		return &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: "g1", PaIssuer: "https://pa.example", BrandUser: "user-42"}
	}
	cases := []struct {
		name   string
		mut    func(r *pactv1.SignReceiptRequest)
		code   connect.Code
		fields []string
	}{
		{"fail/missing-all", func(r *pactv1.SignReceiptRequest) { *r = pactv1.SignReceiptRequest{} }, connect.CodeInvalidArgument, []string{"brand_id", "grant_id", "pa_issuer", "brand_user"}},
		{"fail/pa-not-url", func(r *pactv1.SignReceiptRequest) { r.PaIssuer = "pa.example" }, connect.CodeInvalidArgument, []string{"pa_issuer"}},
		{"fail/unknown-brand", func(r *pactv1.SignReceiptRequest) { r.BrandId = "nope" }, connect.CodeNotFound, nil},
		{"fail/grant-of-another-brand", func(r *pactv1.SignReceiptRequest) { r.BrandId = "globex" }, connect.CodeFailedPrecondition, nil},
		{"fail/grant-of-another-pa", func(r *pactv1.SignReceiptRequest) { r.PaIssuer = "https://evil.example" }, connect.CodeFailedPrecondition, nil},
		{"fail/grant-of-another-user", func(r *pactv1.SignReceiptRequest) { r.BrandUser = "user-7" }, connect.CodeFailedPrecondition, nil},
		{"fail/bad-scope", func(r *pactv1.SignReceiptRequest) { r.ScopesUsed = []string{"a b"} }, connect.CodeInvalidArgument, []string{"scopes_used[0]"}},
		{"fail/empty-tool", func(r *pactv1.SignReceiptRequest) { r.Actions = []*pactv1.ReceiptAction{{Tool: "x"}, {}} }, connect.CodeInvalidArgument, []string{"actions[1].tool"}},
		{"fail/args-hash-from-caller", func(r *pactv1.SignReceiptRequest) {
			r.Actions = []*pactv1.ReceiptAction{{Tool: "x", ArgsHash: "abc_-"}}
		}, connect.CodeInvalidArgument, []string{"actions[0].args_hash"}},
		{"fail/args-not-json", func(r *pactv1.SignReceiptRequest) { r.Actions = []*pactv1.ReceiptAction{{Tool: "x", ArgsJson: `{`}} }, connect.CodeInvalidArgument, []string{"actions[0].args_json"}},
		{"fail/args-duplicate-member", func(r *pactv1.SignReceiptRequest) {
			r.Actions = []*pactv1.ReceiptAction{{Tool: "x"}, {Tool: "y", ArgsJson: `{"a":1,"\u0061":2}`}}
		}, connect.CodeInvalidArgument, []string{"actions[1].args_json"}},
		{"fail/args-lone-surrogate", func(r *pactv1.SignReceiptRequest) {
			r.Actions = []*pactv1.ReceiptAction{{Tool: "x", ArgsJson: `["\ud800"]`}}
		}, connect.CodeInvalidArgument, []string{"actions[0].args_json"}},
		{"fail/args-number-overflow", func(r *pactv1.SignReceiptRequest) {
			r.Actions = []*pactv1.ReceiptAction{{Tool: "x", ArgsJson: `{"n":1e400}`}}
		}, connect.CodeInvalidArgument, []string{"actions[0].args_json"}},
		{"fail/args-too-long", func(r *pactv1.SignReceiptRequest) {
			r.Actions = []*pactv1.ReceiptAction{{Tool: "x", ArgsJson: `"` + strings.Repeat("a", token.MaxArgsJSONBytes) + `"`}}
		}, connect.CodeInvalidArgument, []string{"actions[0].args_json"}},
		{"fail/bad-ts", func(r *pactv1.SignReceiptRequest) { r.Ts = &timestamppb.Timestamp{Nanos: -1} }, connect.CodeInvalidArgument, []string{"ts"}},
	}
	for _, tc := range cases {
		r := good()
		tc.mut(r)
		_, err := c.SignReceipt(t.Context(), r)
		if connect.CodeOf(err) != tc.code {
			t.Fatalf("%s: err = %v, want %v", tc.name, err, tc.code)
		}
		if tc.fields != nil && !slices.Equal(rpcerr.FieldViolations(err), tc.fields) {
			t.Fatalf("%s: violations = %v, want %v", tc.name, rpcerr.FieldViolations(err), tc.fields)
		}
	}
	// The PA issuer's shape is checked before the grant is looked up.
	r := good()
	r.PaIssuer = "pa.example"
	if _, err := c.SignReceipt(t.Context(), r); connect.CodeOf(err) != connect.CodeInvalidArgument ||
		!slices.Equal(rpcerr.FieldViolations(err), []string{"pa_issuer"}) {
		t.Fatalf("fail/pa-not-url: err = %v", err)
	}
	// A refused receipt leaves no audit event.
	if n := countAudit(t, e.store); n != 0 {
		t.Fatalf("refusals recorded %d audit events", n)
	}
	// Positive control.
	if _, err := c.SignReceipt(t.Context(), good()); err != nil {
		t.Fatalf("ok/good: %v", err)
	}
	if n := countAudit(t, e.store); n != 1 {
		t.Fatalf("a signed receipt recorded %d audit events, want 1", n)
	}
	// A revoked grant gets no receipt.
	e.grants.revoke("g1")
	if _, err := c.SignReceipt(t.Context(), good()); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("fail/revoked: err = %v", err)
	}
	if n := countAudit(t, e.store); n != 1 {
		t.Fatalf("after a refused receipt: %d audit events, want 1", n)
	}
}

func countAudit(t *testing.T, s db.Store) int {
	t.Helper()
	events, err := s.ListAuditEvents(t.Context(), db.AuditFilter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(events)
}

func TestAuthorizationServerMetadata(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := start(t, dbURL)
		for name, opts := range protocols {
			c := e.client(opts...)
			resp, err := c.GetAuthorizationServerMetadata(t.Context(), &pactv1.GetAuthorizationServerMetadataRequest{BrandId: "acme"})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			const want = `{"issuer":"https://provider.example/a2a/acme/oauth",` +
				`"device_authorization_endpoint":"https://provider.example/a2a/acme/oauth/device_authorization",` +
				`"token_endpoint":"https://provider.example/a2a/acme/oauth/token",` +
				`"jwks_uri":"https://provider.example/a2a/acme/oauth/jwks.json",` +
				`"revocation_endpoint":"https://provider.example/a2a/acme/oauth/revoke",` +
				`"scopes_supported":["orders:read","orders:write"],` +
				`"response_types_supported":[],` +
				`"grant_types_supported":["urn:ietf:params:oauth:grant-type:device_code","refresh_token"],` +
				`"token_endpoint_auth_methods_supported":["private_key_jwt"],` +
				`"token_endpoint_auth_signing_alg_values_supported":["ES256","RS256"],` +
				`"revocation_endpoint_auth_methods_supported":["private_key_jwt"],` +
				`"revocation_endpoint_auth_signing_alg_values_supported":["ES256","RS256"]}`
			if resp.GetMetadataJson() != want || resp.GetCacheControl() != "public, max-age=300" {
				t.Fatalf("%s: metadata = %s (%s)\nwant %s", name, resp.GetMetadataJson(), resp.GetCacheControl(), want)
			}
			for id, code := range map[string]connect.Code{
				"plain": connect.CodeFailedPrecondition, "nope": connect.CodeNotFound, "../acme": connect.CodeNotFound, "": connect.CodeInvalidArgument,
			} {
				_, err := c.GetAuthorizationServerMetadata(t.Context(), &pactv1.GetAuthorizationServerMetadataRequest{BrandId: id})
				if connect.CodeOf(err) != code {
					t.Fatalf("%s: metadata(%q) err = %v, want %v", name, id, err, code)
				}
			}
		}
	})
}

func mintFor(t *testing.T, e *env, brand, client, user, grant string) string {
	t.Helper()
	aud := publicURL + "/a2a/" + brand
	tok, err := e.minter.Mint(t.Context(), delegtoken.Claims{
		Issuer: aud + "/oauth", Audience: aud, Subject: user, ClientID: client, GrantID: grant,
		Scopes: []string{"orders:read", "orders:write"},
	})
	if err != nil {
		t.Fatalf("Mint: %v", err)
	}
	return tok
}

func TestIntrospectToken(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := start(t, dbURL)
		const pa = "https://pa.example"
		e.grants.live["g1"] = [4]string{"acme", pa, "user-42"}
		e.grants.live["g-globex"] = [4]string{"globex", pa, "user-42"}
		e.grants.live["g-plain"] = [4]string{"plain", pa, "user-42"}
		valid := mintFor(t, e, "acme", pa, "user-42", "g1")
		ctx := t.Context()
		var minted struct{ Jti string }
		if err := json.Unmarshal(payloadOf(valid), &minted); err != nil || minted.Jti == "" {
			t.Fatalf("the minted token has no jti: %s (%v)", payloadOf(valid), err)
		}

		for name, opts := range protocols {
			resp, err := e.client(opts...).IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: valid, BrandId: "acme", ClientId: pa})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			now := e.clock.Now()
			want := &pactv1.IntrospectTokenResponse{
				Active: true, Scope: "orders:read orders:write", ClientId: pa, Sub: "user-42",
				Aud: publicURL + "/a2a/acme", Iss: publicURL + "/a2a/acme/oauth",
				Exp: timestamppb.New(now.Add(time.Hour)), Iat: timestamppb.New(now), GrantId: "g1", TokenType: "Bearer",
				Jti: minted.Jti,
			}
			if !proto.Equal(resp, want) {
				t.Fatalf("%s: introspection = %v\nwant %v", name, resp, want)
			}
		}
		c := e.client()

		// Refusals: each is active=false and nothing else.
		other, err := provkeys.Open(ctx, provkeys.Config{Store: openOther(t), KEK: bytes.Repeat([]byte{1}, 32), Now: e.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		otherKeyToken, _ := delegtoken.NewSigner(other, e.clock.Now).Mint(ctx, delegtoken.Claims{
			Issuer: publicURL + "/a2a/acme/oauth", Audience: publicURL + "/a2a/acme", Subject: "user-42", ClientID: pa, GrantID: "g1", Scopes: []string{"orders:read"},
		})
		consent, _ := e.ring.Sign(ctx, "pact-consent+jwt", payloadOf(valid))
		receiptTyp, _ := e.ring.Sign(ctx, "pact-receipt+jws", payloadOf(valid))
		jwtTyp, _ := e.ring.Sign(ctx, "JWT", payloadOf(valid))
		parts := strings.Split(valid, ".")
		tampered := parts[0] + "." + parts[1] + "." + flip(parts[2])
		noneAlg := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + parts[1] + "."
		rs256 := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"x","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2]
		hs256 := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2]
		cases := []struct {
			name string
			req  *pactv1.IntrospectTokenRequest
		}{
			{"fail/tampered-signature", &pactv1.IntrospectTokenRequest{Token: tampered}},
			{"fail/signed-by-another-key", &pactv1.IntrospectTokenRequest{Token: otherKeyToken}},
			{"fail/alg-none", &pactv1.IntrospectTokenRequest{Token: noneAlg}},
			{"fail/alg-RS256", &pactv1.IntrospectTokenRequest{Token: rs256}},
			{"fail/alg-HS256", &pactv1.IntrospectTokenRequest{Token: hs256}},
			{"fail/typ-consent-session-same-key", &pactv1.IntrospectTokenRequest{Token: consent}},
			{"fail/typ-receipt-same-key", &pactv1.IntrospectTokenRequest{Token: receiptTyp}},
			{"fail/typ-JWT-same-key", &pactv1.IntrospectTokenRequest{Token: jwtTyp}},
			{"fail/other-brand-aud", &pactv1.IntrospectTokenRequest{Token: valid, BrandId: "globex"}},
			{"fail/client-id-mismatch", &pactv1.IntrospectTokenRequest{Token: valid, ClientId: "https://evil-pa.example"}},
			{"fail/oversized", &pactv1.IntrospectTokenRequest{Token: valid + strings.Repeat("A", delegtoken.MaxTokenBytes)}},
			{"fail/garbage", &pactv1.IntrospectTokenRequest{Token: "not a token"}},
			{"fail/brand-without-delegation", &pactv1.IntrospectTokenRequest{Token: mintFor(t, e, "plain", pa, "user-42", "g-plain")}},
			{"fail/brand-unknown", &pactv1.IntrospectTokenRequest{Token: mintFor(t, e, "gone", pa, "user-42", "g1")}},
			{"fail/foreign-provider", &pactv1.IntrospectTokenRequest{Token: mintForAud(t, e, "https://other-provider.example/a2a/acme", pa, "g1")}},
			{"fail/grant-unknown", &pactv1.IntrospectTokenRequest{Token: mintFor(t, e, "acme", pa, "user-42", "g-none")}},
			{"fail/grant-of-another-user", &pactv1.IntrospectTokenRequest{Token: mintFor(t, e, "acme", pa, "user-7", "g1")}},
			{"fail/grant-of-another-brand", &pactv1.IntrospectTokenRequest{Token: mintFor(t, e, "acme", pa, "user-42", "g-globex")}},
		}
		for _, tc := range cases {
			resp, err := c.IntrospectToken(ctx, tc.req)
			if err != nil || !proto.Equal(resp, &pactv1.IntrospectTokenResponse{}) {
				t.Fatalf("%s: = %v, %v; want exactly {active:false}", tc.name, resp, err)
			}
		}
		// Positive control after the refusals; then the grant is revoked.
		if resp, err := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: valid}); err != nil || !resp.GetActive() {
			t.Fatalf("ok/valid-no-expectations = %v, %v", resp, err)
		}
		e.grants.revoke("g1")
		if resp, err := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: valid}); err != nil || resp.GetActive() {
			t.Fatalf("fail/revoked-grant = %v, %v", resp, err)
		}
		e.grants.live["g1"] = [4]string{"acme", pa, "user-42"}
		// Expired: exp is the first instant it is invalid (no skew).
		e.clock.Advance(time.Hour - time.Second)
		if resp, _ := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: valid}); !resp.GetActive() {
			t.Fatal("ok/one-second-before-exp is inactive")
		}
		e.clock.Advance(time.Second)
		if resp, err := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: valid}); err != nil || !proto.Equal(resp, &pactv1.IntrospectTokenResponse{}) {
			t.Fatalf("fail/expired = %v, %v", resp, err)
		}

		// Malformed calls are RPC errors, not answers.
		if _, err := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Fatalf("empty token: err = %v", err)
		}
		if _, err := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: valid, BrandId: "nope"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("unknown brand_id: err = %v", err)
		}
	})
}

func mintForAud(t *testing.T, e *env, aud, client, grant string) string {
	t.Helper()
	tok, err := e.minter.Mint(t.Context(), delegtoken.Claims{Issuer: aud + "/oauth", Audience: aud, Subject: "user-42", ClientID: client, GrantID: grant, Scopes: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func openOther(t *testing.T) db.Store {
	t.Helper()
	s := dbtest.Open(t, "", t.TempDir())
	return s
}

func payloadOf(tok string) []byte {
	p, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	return p
}

func flip(s string) string {
	b := []byte(s)
	if b[3] == 'A' {
		b[3] = 'B'
	} else {
		b[3] = 'A'
	}
	return string(b)
}

func TestRotationThroughTheWire(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := start(t, dbURL)
		const pa = "https://pa.example"
		e.grants.live["g1"] = [4]string{"acme", pa, "user-42"}
		c := e.client()
		ctx := t.Context()
		sign := func() (string, string) {
			resp, err := c.SignReceipt(ctx, &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: "g1", PaIssuer: pa, BrandUser: "user-42"})
			if err != nil {
				t.Fatalf("SignReceipt: %v", err)
			}
			return resp.GetJws(), resp.GetClaimsJson()
		}
		_, order := jwks(t, c)
		oldKID := order[0]
		oldJWS, oldClaims := sign()
		oldToken := mintFor(t, e, "acme", pa, "user-42", "g1")

		rot, err := c.RotateSigningKey(ctx, &pactv1.RotateSigningKeyRequest{})
		if err != nil {
			t.Fatalf("RotateSigningKey: %v", err)
		}
		if rot.GetKid() == oldKID || !rot.GetActivateTime().AsTime().Equal(e.clock.Now().Add(provkeys.DefaultPublishDelay)) {
			t.Fatalf("RotateSigningKey = %v", rot)
		}
		// The next key is published before it signs.
		keys, order := jwks(t, c)
		if !slices.Equal(order, []string{oldKID, rot.GetKid()}) {
			t.Fatalf("JWKS after rotation = %v, want [%s %s]", order, oldKID, rot.GetKid())
		}
		j, cl := sign()
		if kid, _ := verifyReceipt(t, keys, j, cl); kid != oldKID {
			t.Fatalf("receipt before activation signed by %s, want %s", kid, oldKID)
		}
		// After activation new signatures use it; the old key's still verify.
		e.clock.Advance(provkeys.DefaultPublishDelay)
		keys, order = jwks(t, c)
		if !slices.Equal(order, []string{rot.GetKid(), oldKID}) {
			t.Fatalf("JWKS after activation = %v", order)
		}
		j, cl = sign()
		if kid, _ := verifyReceipt(t, keys, j, cl); kid != rot.GetKid() {
			t.Fatalf("receipt after activation signed by %s, want %s", kid, rot.GetKid())
		}
		if !strings.Contains(string(payloadOf(mintFor(t, e, "acme", pa, "user-42", "g1"))), `"iss"`) {
			t.Fatal("mint after activation failed")
		}
		verifyReceipt(t, keys, oldJWS, oldClaims)
		e.clock.Advance(time.Hour - provkeys.DefaultPublishDelay - time.Second) // oldToken: 1 s left
		if resp, err := c.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: oldToken}); err != nil || !resp.GetActive() {
			t.Fatalf("token of the retired key = %v, %v; want active until it expires", resp, err)
		}
		// The old key leaves the JWKS only once every token it signed expired.
		e.clock.Advance(provkeys.DefaultRetireGrace - time.Hour + provkeys.DefaultPublishDelay + time.Second)
		if _, order := jwks(t, c); !slices.Equal(order, []string{rot.GetKid()}) {
			t.Fatalf("JWKS after the old key expired = %v, want [%s]", order, rot.GetKid())
		}
	})
}

// http2Mux mounts the service like the server does (without caller auth).
func http2Mux(svc pactv1connect.TokenServiceHandler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewTokenServiceHandler(svc))
	return mux
}

// failingAudit is an audit store that cannot write.
type failingAudit struct{}

func (failingAudit) RecordAuditEvent(context.Context, db.AuditEvent) (db.AuditEvent, error) {
	return db.AuditEvent{}, errors.New("disk full")
}

// A receipt whose audit event cannot be stored is not handed out: the
// call is Unavailable (retryable) and carries no JWS.
func TestSignReceiptNeedsItsAuditEvent(t *testing.T) {
	e := start(t, "", func(d *token.Deps) { d.Audit = failingAudit{} })
	e.grants.live["g1"] = [4]string{"acme", "https://pa.example", "user-42"}
	resp, err := e.client().SignReceipt(t.Context(), &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: "g1", PaIssuer: "https://pa.example", BrandUser: "user-42"})
	if connect.CodeOf(err) != connect.CodeUnavailable || resp.GetJws() != "" {
		t.Fatalf("SignReceipt with a failing audit store = %v, %v; want Unavailable and no receipt", resp, err)
	}
	// Positive control: the same call with the store's recorder.
	ok := start(t, "")
	ok.grants.live["g1"] = [4]string{"acme", "https://pa.example", "user-42"}
	if r, err := ok.client().SignReceipt(t.Context(), &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: "g1", PaIssuer: "https://pa.example", BrandUser: "user-42"}); err != nil || r.GetJws() == "" {
		t.Fatalf("ok/recorded: %v, %v", r, err)
	}
}

// TestSignReceiptArgsRefusalReasons: each refused args_json names why, in
// RFC 7493's terms (invalid UTF-8 cannot arrive: a proto string is UTF-8),
// and a caller's own args_hash is refused as such; the
// positive control signs arguments whose members repeat at different depths.
func TestSignReceiptArgsRefusalReasons(t *testing.T) {
	e := start(t, "")
	e.grants.live["g1"] = [4]string{"acme", "https://pa.example", "user-42"}
	c := e.client()
	for _, tc := range []struct{ args, hash, reason string }{
		{`{`, "", "actions[0].args_json: is not I-JSON (RFC 7493): jcs: not JSON"},
		{`{"a":1,"\u0061":2}`, "", "jcs: duplicate member name"},
		{`["\ud800"]`, "", "jcs: lone surrogate escape"},
		{`{"n":1e400}`, "", "jcs: number outside the IEEE 754 double range"},
		{`"` + strings.Repeat("a", token.MaxArgsJSONBytes) + `"`, "", "actions[0].args_json: is longer than 65536 bytes"},
		{"", "abc_-", "actions[0].args_hash: is computed by pactd: send the arguments as args_json"},
	} {
		_, err := c.SignReceipt(t.Context(), &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: "g1", PaIssuer: "https://pa.example",
			BrandUser: "user-42", Actions: []*pactv1.ReceiptAction{{Tool: "x", ArgsJson: tc.args, ArgsHash: tc.hash}}})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("args %.40q hash %q: err = %v; want InvalidArgument naming %q", tc.args, tc.hash, err, tc.reason)
		}
	}
	if _, err := c.SignReceipt(t.Context(), &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: "g1", PaIssuer: "https://pa.example",
		BrandUser: "user-42", Actions: []*pactv1.ReceiptAction{{Tool: "x", ArgsJson: `{"a":{"a":1},"b":[{"a":2}]}`}}}); err != nil {
		t.Fatalf("ok/nested-same-names: %v", err)
	}
}

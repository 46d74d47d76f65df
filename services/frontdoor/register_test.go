package frontdoor_test

import (
	"strings"
	"testing"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/services/frontdoor"
)

// TestRegistration: POST /api/platforms answers what SelfRegisterAgent
// decided (201, 200, 409, 400, 401 with the platforms realm, 404 while
// closed), each with its reason; a request without one bearer token, with
// a body past 8 KiB or not JSON is refused before the service is asked,
// and another method is 405.
func TestRegistration(t *testing.T) {
	e := newEnv(t)
	const body = `{"name":"my-pa","jwksUri":"https://pa.example/jwks.json"}`
	post := func(body string, headers ...string) response {
		return e.do(t, "POST", "/api/platforms", body, headers...)
	}
	want := func(name string, r response, status int, wantBody string) {
		t.Helper()
		if r.status != status || r.body != wantBody || (wantBody != "" && (r.header.Get("Content-Type") != "application/json" ||
			r.header.Get("Cache-Control") != "no-store")) {
			t.Errorf("%s: %d %v %q; want %d %q", name, r.status, r.header, r.body, status, wantBody)
		}
	}
	// Positive control: 201 with the platform; the service got the token,
	// the body and the endpoint (the Provider's public URL).
	e.reg.set(&pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CREATED, Name: "my-pa",
		Agent: &pactv1.Agent{Id: "agt_9", Issuer: "https://pa.example", JwksUri: "https://pa.example/jwks.json", Enabled: true}})
	want("ok/created", post(body, "Authorization: Bearer tok"), 201,
		`{"platform":{"enabled":true,"id":"agt_9","issuer":"https://pa.example","jwksUri":"https://pa.example/jwks.json","name":"my-pa"}}`+"\n")
	if g := e.reg.request(); g.GetToken() != "tok" || g.GetName() != "my-pa" || g.GetJwksUri() != "https://pa.example/jwks.json" ||
		g.GetEndpointUrl() != "https://provider.example/api/platforms" {
		t.Fatalf("SelfRegisterAgent got %v", g)
	}
	e.reg.set(&pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_EXISTS, Name: "my-pa",
		Agent: &pactv1.Agent{Id: "agt_9", Issuer: "https://pa.example", JwksUri: "https://pa.example/jwks.json", Enabled: true}})
	want("ok/exists", post(body, "Authorization: Bearer tok"), 200,
		`{"platform":{"enabled":true,"id":"agt_9","issuer":"https://pa.example","jwksUri":"https://pa.example/jwks.json","name":"my-pa"}}`+"\n")
	// A refused token: 401 with the realm and the reason.
	e.reg.set(&pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_TOKEN, Reason: "jti_replayed"})
	r := post(body, "Authorization: Bearer tok")
	want("fail/replayed", r, 401, `{"error":"jti_replayed"}`+"\n")
	if r.header.Get("WWW-Authenticate") != `Bearer realm="platforms"` {
		t.Errorf("replayed: WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
	}
	e.reg.set(&pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CONFLICT, Reason: "name_taken"})
	want("fail/conflict", post(body, "Authorization: Bearer tok"), 409, `{"error":"name_taken"}`+"\n")
	e.reg.set(&pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_REQUEST, Reason: "jwks_uri_invalid"})
	want("fail/invalid-request", post(body, "Authorization: Bearer tok"), 400, `{"error":"jwks_uri_invalid"}`+"\n")
	e.reg.set(&pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CLOSED, Reason: "self_registration_off"})
	want("fail/closed", post(body, "Authorization: Bearer tok"), 404, "")

	// Refused before the service: no token, two tokens, another scheme,
	// an oversized body, a body that is not JSON; another method.
	e.reg.set(nil)
	for _, c := range []struct {
		name    string
		r       response
		status  int
		body    string
		realmed bool
	}{
		{"fail/no-token", post(body), 401, `{"error":"token_missing"}` + "\n", true},
		{"fail/two-tokens", post(body, "Authorization: Bearer a", "Authorization: Bearer b"), 401, `{"error":"token_missing"}` + "\n", true},
		{"fail/basic", post(body, "Authorization: Basic dG9rOg=="), 401, `{"error":"token_missing"}` + "\n", true},
		{"fail/oversized", post(`{"name":"`+strings.Repeat("a", frontdoor.MaxRegistrationBody)+`"}`, "Authorization: Bearer tok"), 413,
			`{"error":"body_too_large"}` + "\n", false},
		{"fail/not-json", post("nope", "Authorization: Bearer tok"), 400, `{"error":"body_invalid"}` + "\n", false},
	} {
		want(c.name, c.r, c.status, c.body)
		if got := c.r.header.Get("WWW-Authenticate"); (got == `Bearer realm="platforms"`) != c.realmed {
			t.Errorf("%s: WWW-Authenticate %q", c.name, got)
		}
	}
	r = e.do(t, "GET", "/api/platforms", "")
	wantBare(t, "GET", r, 405)
	if r.header.Get("Allow") != "POST" {
		t.Errorf("GET: Allow %q", r.header.Get("Allow"))
	}
	if g := e.reg.request(); g != nil {
		t.Fatalf("the service was asked about a request the front door refuses: %v", g)
	}
}

package pacta2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

type fakeAgents struct {
	pactv1connect.UnimplementedAgentServiceHandler
	got *pactv1.SelfRegisterAgentRequest
	res *pactv1.SelfRegisterAgentResponse
}

func (f *fakeAgents) SelfRegisterAgent(_ context.Context, req *pactv1.SelfRegisterAgentRequest) (*pactv1.SelfRegisterAgentResponse, error) {
	f.got = req
	return f.res, nil
}

func TestRegistrationHandler(t *testing.T) {
	fake := &fakeAgents{}
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewAgentServiceHandler(fake))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	const ep = "https://frontend.example/api/platforms"
	h := pacta2a.RegistrationHandler(pactv1connect.NewAgentServiceClient(srv.Client(), srv.URL, connect.WithGRPC()), ep)
	post := func(auth, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/api/platforms", strings.NewReader(body))
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const body = `{"name":"my-pa","jwksUri":"https://pa.example/jwks.json"}`
	// Positive control: 201 with the platform; pactd got the token, body and endpoint.
	fake.res = &pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CREATED, Name: "my-pa",
		Agent: &pactv1.Agent{Id: "agt_1", Issuer: "https://pa.example", JwksUri: "https://pa.example/jwks.json", Enabled: true}}
	w := post("Bearer tok", body)
	var out struct{ Platform map[string]any }
	if err := json.Unmarshal(w.Body.Bytes(), &out); w.Code != http.StatusCreated || err != nil || out.Platform["id"] != "agt_1" || out.Platform["name"] != "my-pa" || out.Platform["enabled"] != true {
		t.Fatalf("created: %d %s", w.Code, w.Body)
	}
	if g := fake.got; g.GetToken() != "tok" || g.GetName() != "my-pa" || g.GetJwksUri() != "https://pa.example/jwks.json" || g.GetEndpointUrl() != ep {
		t.Fatalf("pactd got %v", g)
	}
	// A refused token: 401 with the realm and the reason.
	fake.res = &pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_TOKEN, Reason: "jti_replayed"}
	if w := post("Bearer tok", body); w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != `Bearer realm="platforms"` || !strings.Contains(w.Body.String(), "jti_replayed") {
		t.Fatalf("replayed: %d %v %s", w.Code, w.Header(), w.Body)
	}
	fake.res = &pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CONFLICT, Reason: "name_taken"}
	if w := post("Bearer tok", body); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "name_taken") {
		t.Fatalf("conflict: %d %s", w.Code, w.Body)
	}
	fake.res = &pactv1.SelfRegisterAgentResponse{Result: pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CLOSED, Reason: "self_registration_off"}
	if w := post("Bearer tok", body); w.Code != http.StatusNotFound {
		t.Fatalf("closed: %d", w.Code)
	}
	// Refused before pactd: no token, an oversized body, a body that is not JSON.
	fake.got = nil
	if w := post("", body); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "token_missing") {
		t.Fatalf("no token: %d %s", w.Code, w.Body)
	}
	if w := post("Bearer tok", `{"name":"`+strings.Repeat("a", pacta2a.MaxRegistrationBody)+`"}`); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized: %d", w.Code)
	}
	if w := post("Bearer tok", "nope"); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "body_invalid") {
		t.Fatalf("not JSON: %d %s", w.Code, w.Body)
	}
	if fake.got != nil {
		t.Fatalf("pactd was asked about a request the frontend refuses: %v", fake.got)
	}
}

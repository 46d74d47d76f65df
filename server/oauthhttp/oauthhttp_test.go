package oauthhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/server/oauthhttp"
)

// fakeDelegation answers IssueDelegation with a fixed error and records
// the Authorization value it was given.
type fakeDelegation struct {
	pactv1connect.UnimplementedDelegationServiceHandler
	err  error
	auth []string
}

func (f *fakeDelegation) IssueDelegation(_ context.Context, req *pactv1.IssueDelegationRequest) (*pactv1.IssueDelegationResponse, error) {
	f.auth = append(f.auth, req.GetAuthorization())
	if f.err != nil {
		return nil, f.err
	}
	return &pactv1.IssueDelegationResponse{BodyJson: `{"token_type":"Bearer"}`}, nil
}

func serve(t *testing.T, d oauthhttp.Delegation, tok oauthhttp.Token) *httptest.Server {
	mux := http.NewServeMux()
	oauthhttp.New(d, tok, nil).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, method, url string, header http.Header, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func form() http.Header {
	return http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Authorization": {"Bearer x"}}
}

// Services that are not built yet answer 501, never a fake document.
func TestUnimplementedServicesAre501(t *testing.T) {
	srv := serve(t, pactv1connect.UnimplementedDelegationServiceHandler{}, pactv1connect.UnimplementedTokenServiceHandler{})
	for _, c := range []struct{ method, path string }{
		{"GET", "/a2a/acme/oauth/.well-known/oauth-authorization-server"},
		{"GET", "/a2a/acme/oauth/jwks.json"},
		{"POST", "/a2a/acme/oauth/token"},
		{"POST", "/a2a/acme/oauth/device_authorization"},
		{"POST", "/a2a/acme/oauth/revoke"},
	} {
		status, _, body := call(t, c.method, srv.URL+c.path, form(), "grant_type=x")
		if status != http.StatusNotImplemented || body != "" {
			t.Errorf("%s %s = %d %q, want a bare 501", c.method, c.path, status, body)
		}
	}
	// Unknown paths under /oauth stay unmatched.
	if status, _, _ := call(t, "GET", srv.URL+"/a2a/acme/oauth/authorize", nil, ""); status != http.StatusNotFound {
		t.Errorf("GET /oauth/authorize = %d, want 404", status)
	}
}

// RPC errors map to HTTP without leaking their messages.
func TestRPCErrorMapping(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"invalid-argument", connect.NewError(connect.CodeInvalidArgument, errors.New("secret detail")), 400, "invalid_request"},
		{"not-found", connect.NewError(connect.CodeNotFound, errors.New("secret detail")), 404, ""},
		{"no-delegation", connect.NewError(connect.CodeFailedPrecondition, errors.New("secret detail")), 404, ""},
		{"unavailable", connect.NewError(connect.CodeUnavailable, errors.New("secret detail")), 503, "server_error"},
		{"exhausted", connect.NewError(connect.CodeResourceExhausted, errors.New("secret detail")), 429, "server_error"},
		{"internal", errors.New("secret detail"), 500, "server_error"},
		{"ok/positive-control", nil, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := serve(t, &fakeDelegation{err: c.err}, pactv1connect.UnimplementedTokenServiceHandler{})
			status, h, body := call(t, "POST", srv.URL+"/a2a/acme/oauth/token", form(), "grant_type=x")
			if status != c.status || strings.Contains(body, "secret") || h.Get("Cache-Control") != "no-store" || h.Get("Pragma") != "no-cache" {
				t.Fatalf("got %d %v %q, want %d", status, h, body, c.status)
			}
			if c.code != "" && !strings.Contains(body, `"error":"`+c.code+`"`) {
				t.Fatalf("body %q lacks error %s", body, c.code)
			}
		})
	}
}

// A repeated Authorization header reaches the service as absent.
func TestRepeatedAuthorizationIsAbsent(t *testing.T) {
	d := &fakeDelegation{}
	srv := serve(t, d, pactv1connect.UnimplementedTokenServiceHandler{})
	h := form()
	h.Add("Authorization", "Bearer y")
	call(t, "POST", srv.URL+"/a2a/acme/oauth/token", h, "grant_type=x")
	call(t, "POST", srv.URL+"/a2a/acme/oauth/token", form(), "grant_type=x")
	if len(d.auth) != 2 || d.auth[0] != "" || d.auth[1] != "Bearer x" {
		t.Fatalf("authorization values seen = %q", d.auth)
	}
}

package oauthwire_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pactd.dev/pactd/internal/oauthwire"
)

// The error JSON is wire bytes a frontend sends as they are.
func TestErrorBytes(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"with-description", oauthwire.Refusal(oauthwire.ErrInvalidGrant, "the code <is> used").GetBodyJson(),
			`{"error":"invalid_grant","error_description":"the code \u003cis\u003e used"}`},
		{"no-description", oauthwire.Error(500, oauthwire.ErrServerError, "").GetBodyJson(), `{"error":"server_error"}`},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: body %s, want %s", c.name, c.got, c.want)
		}
	}
	if e := oauthwire.Refusal(oauthwire.ErrInvalidClient, "x"); e.GetHttpStatus() != 401 || e.GetWwwAuthenticate() != `Bearer realm="a2a"` {
		t.Errorf("invalid_client: %d %q, want 401 with the challenge", e.GetHttpStatus(), e.GetWwwAuthenticate())
	}
	if e := oauthwire.Refusal(oauthwire.ErrInvalidScope, "x"); e.GetHttpStatus() != 400 || e.GetWwwAuthenticate() != "" {
		t.Errorf("invalid_scope: %d %q, want 400 without a challenge", e.GetHttpStatus(), e.GetWwwAuthenticate())
	}
}

func TestReadFormRefusesARepeatedParameter(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("a=1&a=2"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	if _, ok := oauthwire.ReadForm(w, r); ok {
		t.Fatal("a repeated parameter was accepted")
	}
	if w.Code != 400 || w.Body.String() != `{"error":"invalid_request","error_description":"a parameter is repeated"}` ||
		w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("got %d %q %v", w.Code, w.Body.String(), w.Header())
	}
}

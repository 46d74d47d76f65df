package e2e_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/frontends/pacta2a"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/services/frontdoor"
)

// selfRegistering are the frontends that mount POST /api/platforms (with
// their public URL set, as e2e does): the Go, TypeScript and Python frontends.
var selfRegistering = []string{"go", "ts", "py"}

// TestSelfRegistration: a PA registers itself through the frontend's
// POST /api/platforms (reference section 4.3) with an ES256 registration
// JWT signed by its own key and checked against its own JWKS, then its PA
// JWTs are accepted; a replayed JWT and a cross-origin JWKS URI are refused
// with their reasons and store nothing.
func TestSelfRegistration(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		if name := frontendFor(t).name; !slices.Contains(selfRegistering, name) {
			t.Skipf("the %s frontend does not mount POST /api/platforms", name)
		}
		w := newWorld(t, dbURL)
		endpoint := w.feURL + pacta2a.RegistrationPath
		self := newPA(t) // a PA of its own, on its own origin
		iss := self.jwks.URL
		jwksURI := iss + "/jwks.json"
		regJWT := func(p *pa, iss string) string {
			now := time.Now().Unix()
			jti := make([]byte, 16)
			_, _ = rand.Read(jti)
			return p.sign(t, "ES256", p.kid, map[string]any{"iss": iss, "sub": iss, "aud": endpoint, "iat": now, "exp": now + 120, "jti": hex.EncodeToString(jti)})
		}
		register := func(tok, name, jwks string) response {
			b, _ := json.Marshal(map[string]string{"name": name, "jwksUri": jwks})
			return w.do(t, "POST", pacta2a.RegistrationPath, string(b), "Authorization: Bearer "+tok, "Content-Type: application/json")
		}
		agents := func() []string {
			res, err := w.agents.ListAgents(t.Context(), &pactv1.ListAgentsRequest{})
			if err != nil {
				t.Fatalf("ListAgents: %v", err)
			}
			var out []string
			for _, a := range res.GetAgents() {
				out = append(out, fmt.Sprintf("%s %s %s %s %v", a.GetId(), a.GetIssuer(), a.GetJwksUri(), a.GetDisplayName(), a.GetEnabled()))
			}
			return out
		}
		paJWT := func() string {
			now := time.Now().Unix()
			return self.sign(t, "ES256", self.kid, map[string]any{"iss": iss, "sub": "user-1", "aud": w.audience, "iat": now, "exp": now + 120})
		}
		tasks := func() int { return w.do(t, "GET", "/a2a/acme/tasks", "", "Authorization: Bearer "+paJWT()).status }

		// Before registering, the PA's JWTs are refused (the control for the positive one below).
		if s := tasks(); s != 401 {
			t.Fatalf("an unregistered PA's JWT: %d, want 401", s)
		}
		before := agents()

		// Positive control: 201 with the platform as pactd stored it.
		first := regJWT(self, iss)
		r := register(first, "e2e-self-pa", jwksURI)
		var got struct {
			Platform struct {
				ID, Name, Issuer, JWKSURI string
				Enabled                   bool
			}
		}
		if err := json.Unmarshal([]byte(r.body), &got); r.status != 201 || err != nil || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("register: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
		}
		p := got.Platform
		if p.Name != "e2e-self-pa" || p.Issuer != iss || p.JWKSURI != jwksURI || !p.Enabled || p.ID == "" {
			t.Fatalf("registered platform: %+v", p)
		}
		want := fmt.Sprintf(`{"platform":{"enabled":true,"id":%q,"issuer":%q,"jwksUri":%q,"name":"e2e-self-pa"}}`+"\n", p.ID, iss, jwksURI)
		if r.body != want {
			t.Fatalf("register body %q, want %q", r.body, want)
		}
		after := agents()
		if len(after) != len(before)+1 || !slices.Contains(after, fmt.Sprintf("%s %s %s e2e-self-pa true", p.ID, iss, jwksURI)) {
			t.Fatalf("agents after registering: %v (before %v)", after, before)
		}
		// Identical again with a new jti: 200, the same platform, nothing new stored.
		if r := register(regJWT(self, iss), "e2e-self-pa", jwksURI); r.status != 200 || r.body != want {
			t.Fatalf("register again: %d %s, want 200 %s", r.status, r.body, want)
		}
		// Its PA JWTs are now accepted through the frontend (VerifyAgentRequest).
		if s := tasks(); s != 200 {
			t.Fatalf("the registered PA's JWT: %d, want 200", s)
		}

		// The first JWT replayed: 401, the realm, jti_replayed.
		r = register(first, "e2e-self-pa", jwksURI)
		if r.status != 401 || r.header.Get("WWW-Authenticate") != `Bearer realm="platforms"` || r.body != `{"error":"jti_replayed"}`+"\n" {
			t.Fatalf("replayed: %d %v %s", r.status, r.header, r.body)
		}
		// Another PA whose jwksUri is on another origin than its issuer: 400 jwks_uri_cross_origin.
		other := newPA(t)
		r = register(regJWT(other, other.jwks.URL), "e2e-cross-origin", jwksURI)
		if r.status != 400 || r.header.Get("WWW-Authenticate") != "" || r.body != `{"error":"jwks_uri_cross_origin"}`+"\n" {
			t.Fatalf("cross-origin: %d %v %s", r.status, r.header, r.body)
		}
		// The frontend's own refusals, the same bytes from every frontend (the Go handler's).
		big := `{"name":"` + strings.Repeat("a", frontdoor.MaxRegistrationBody) + `"}`
		for _, c := range []struct {
			name, method, body, auth string
			status                   int
			want, realm              string
		}{
			{"no token", "POST", `{"name":"e2e-x","jwksUri":"` + jwksURI + `"}`, "", 401, `{"error":"token_missing"}` + "\n", `Bearer realm="platforms"`},
			{"not JSON", "POST", "nope", "Bearer " + regJWT(self, iss), 400, `{"error":"body_invalid"}` + "\n", ""},
			{"a number for name", "POST", `{"name":5}`, "Bearer " + regJWT(self, iss), 400, `{"error":"body_invalid"}` + "\n", ""},
			{"over 8 KiB", "POST", big, "Bearer " + regJWT(self, iss), 413, `{"error":"body_too_large"}` + "\n", ""},
			{"GET", "GET", "", "", 405, "", ""},
		} {
			var h []string
			if c.auth != "" {
				h = append(h, "Authorization: "+c.auth)
			}
			r := w.do(t, c.method, pacta2a.RegistrationPath, c.body, h...)
			if r.status != c.status || r.body != c.want || r.header.Get("WWW-Authenticate") != c.realm {
				t.Errorf("%s: %d %q %v, want %d %q realm %q", c.name, r.status, r.body, r.header, c.status, c.want, c.realm)
			}
			if c.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("%s: Allow %q, want POST", c.name, r.header.Get("Allow"))
			}
			if c.want != "" && (r.header.Get("Content-Type") != "application/json" || r.header.Get("Cache-Control") != "no-store") {
				t.Errorf("%s: Content-Type %q, Cache-Control %q", c.name, r.header.Get("Content-Type"), r.header.Get("Cache-Control"))
			}
		}
		if now := agents(); !slices.Equal(now, after) {
			t.Fatalf("a refusal changed the agents: %v, want %v", now, after)
		}
	})
}

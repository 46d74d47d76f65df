package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/testkit/testsigner"
	"pactd.dev/pactd/internal/urlrule"
	"pactd.dev/pactd/services/agent"
	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/regjwt"
)

const (
	endpoint = "https://provider.example/api/platforms"
	issuer   = "https://pa.example"
	jwksURI  = "https://pa.example/jwks.json"
)

type keys struct{ set *jose.KeySet }

func (k keys) Keys(context.Context, string) (*jose.KeySet, error) { return k.set, nil }

func TestSelfRegisterAgent(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	pa := testsigner.New(t, "k1")
	k, _ := jose.NewECKey("k1", &pa.Key.PublicKey)
	set, _ := jose.NewKeySet(k)
	token := func(jti, iss string) string {
		return pa.JWT(t, map[string]any{"alg": "ES256", "kid": "k1"},
			map[string]any{"iss": iss, "sub": iss, "aud": endpoint, "iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": jti})
	}
	newSvc := func(t *testing.T, policy string) (*agent.Service, db.Store) {
		st := dbtest.Open(t, "", t.TempDir())
		return agent.New(agent.Deps{Store: st, Audience: "https://provider.example", Now: func() time.Time { return now },
			SelfRegistration: policy, RegistrationKeys: keys{set}}), st
	}
	call := func(t *testing.T, s *agent.Service, tok, name, uri string) *pactv1.SelfRegisterAgentResponse {
		t.Helper()
		r, err := s.SelfRegisterAgent(t.Context(), &pactv1.SelfRegisterAgentRequest{Token: tok, Name: name, JwksUri: uri, EndpointUrl: endpoint})
		if err != nil {
			t.Fatalf("SelfRegisterAgent: %v", err)
		}
		return r
	}
	snapshot := func(t *testing.T, st db.Store) (int, int64) {
		t.Helper()
		l, err := st.ListAgents(t.Context(), "", 100)
		if err != nil {
			t.Fatal(err)
		}
		n, err := st.CountRegistrationJTIs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return len(l), n
	}
	const (
		created  = pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CREATED
		exists   = pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_EXISTS
		badTok   = pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_TOKEN
		badReq   = pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_REQUEST
		conflict = pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CONFLICT
		closed   = pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CLOSED
	)

	t.Run("enabled", func(t *testing.T) {
		s, st := newSvc(t, agent.SelfRegistrationEnabled)
		r := call(t, s, token("j1", issuer), "my-pa", jwksURI)
		if r.GetResult() != created || !r.GetAgent().GetEnabled() || r.GetAgent().GetIssuer() != issuer || r.GetAgent().GetAudience() != "https://provider.example" {
			t.Fatalf("first registration = %v; want CREATED, enabled, issuer %s, Provider audience", r, issuer)
		}
		n0, j0 := snapshot(t, st)
		refusals := []struct {
			name, tok, pa, uri string
			result             pactv1.SelfRegistrationResult
			reason             string
		}{
			{"replayed jti", token("j1", issuer), "my-pa", jwksURI, badTok, "jti_replayed"},
			{"cross-origin jwks", token("j2", issuer), "my-pa", "https://evil.example/jwks.json", badReq, "jwks_uri_cross_origin"},
			{"name taken", token("j3", "https://other.example"), "my-pa", "https://other.example/jwks.json", conflict, "name_taken"},
			{"issuer taken", token("j4", issuer), "another-pa", jwksURI, conflict, "issuer_taken"},
			{"bad name", token("j5", issuer), "-x", jwksURI, badReq, "name_invalid"},
			// One bound for the token, regjwt.MaxTokenBytes, however far past it.
			{"token one byte too long", strings.Repeat("a", regjwt.MaxTokenBytes+1), "my-pa", jwksURI, badTok, "token_too_large"},
			{"token far too long", strings.Repeat("a", 200<<10), "my-pa", jwksURI, badTok, "token_too_large"},
		}
		for _, tc := range refusals {
			r := call(t, s, tc.tok, tc.pa, tc.uri)
			if r.GetResult() != tc.result || r.GetReason() != tc.reason || r.GetAgent() != nil {
				t.Fatalf("%s: %v; want %v %s", tc.name, r, tc.result, tc.reason)
			}
			if n, j := snapshot(t, st); n != n0 || j != j0 {
				t.Fatalf("%s: refusal stored something: %d agents, %d jtis; want %d, %d", tc.name, n, j, n0, j0)
			}
		}
		// Idempotent: the same registration with a fresh jti.
		if r2 := call(t, s, token("j6", issuer), "my-pa", jwksURI); r2.GetResult() != exists || r2.GetAgent().GetId() != r.GetAgent().GetId() {
			t.Fatalf("identical registration = %v; want EXISTS %s", r2, r.GetAgent().GetId())
		}
	})
	t.Run("oversized fields", func(t *testing.T) {
		s, st := newSvc(t, agent.SelfRegistrationEnabled)
		long := "https://pa.example/" + strings.Repeat("a", urlrule.MaxURLLength)
		for field, req := range map[string]*pactv1.SelfRegisterAgentRequest{
			"name":     {Token: token("j1", issuer), Name: long, JwksUri: jwksURI, EndpointUrl: endpoint},
			"jwks_uri": {Token: token("j1", issuer), Name: "my-pa", JwksUri: long, EndpointUrl: endpoint},
		} {
			_, err := s.SelfRegisterAgent(t.Context(), req)
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), field) {
				t.Errorf("%s longer than %d bytes: %v; want InvalidArgument naming %s", field, urlrule.MaxURLLength, err, field)
			}
		}
		if n, j := snapshot(t, st); n != 0 || j != 0 {
			t.Fatalf("oversized fields stored %d agents, %d jtis", n, j)
		}
	})
	t.Run("pending", func(t *testing.T) {
		s, _ := newSvc(t, agent.SelfRegistrationPending)
		r := call(t, s, token("j1", issuer), "my-pa", jwksURI)
		if r.GetResult() != created || r.GetAgent().GetEnabled() {
			t.Fatalf("pending registration = %v; want CREATED and not enabled", r)
		}
	})
	t.Run("off", func(t *testing.T) {
		s, st := newSvc(t, agent.SelfRegistrationOff)
		r := call(t, s, token("j1", issuer), "my-pa", jwksURI)
		if r.GetResult() != closed || r.GetReason() != "self_registration_off" {
			t.Fatalf("off: %v; want CLOSED self_registration_off", r)
		}
		if n, j := snapshot(t, st); n != 0 || j != 0 {
			t.Fatalf("off stored %d agents, %d jtis", n, j)
		}
	})
}

package agent_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/testkit/testclock"
	"pactd.dev/pactd/services/agent"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const providerAudience = "https://provider.example"

var (
	start   = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	agentID = regexp.MustCompile(`^agt_[0-9A-Za-z]{26}$`)
)

const invalid = pactv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT

// agentEnv is the service on a fresh store of one engine, recording what it
// reports to OnChange.
type agentEnv struct {
	svc     *agent.Service
	clk     *testclock.Clock
	changes []string // "id" or "id deleted"
}

func newAgentEnv(t *testing.T, dbURL string, mod ...func(*agent.Deps)) *agentEnv {
	t.Helper()
	e := &agentEnv{clk: testclock.New(start)}
	d := agent.Deps{Store: dbtest.Open(t, dbURL, t.TempDir()), Audience: providerAudience, Now: e.clk.Now,
		OnChange: func(a db.Agent, deleted bool) {
			if deleted {
				e.changes = append(e.changes, a.ID+" deleted")
			} else {
				e.changes = append(e.changes, a.ID)
			}
		}}
	for _, m := range mod {
		m(&d)
	}
	e.svc = agent.New(d)
	return e
}

func (e *agentEnv) register(t *testing.T, iss, jwks, name string) *pactv1.RegisterAgentResponse {
	t.Helper()
	r, err := e.svc.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: iss, JwksUri: jwks, DisplayName: name})
	if err != nil {
		t.Fatalf("RegisterAgent(%s): %v", iss, err)
	}
	return r
}

// refused checks err is code with the ErrorInfo reason and, for an
// InvalidArgument, that its BadRequest names exactly fields (in any order).
func refused(t *testing.T, name string, err error, code connect.Code, reason pactv1.ErrorReason, fields ...string) {
	t.Helper()
	if connect.CodeOf(err) != code || rpcerr.Reason(err) != reason.String() {
		t.Fatalf("%s: err = %v (reason %q); want %s with reason %s", name, err, rpcerr.Reason(err), code, reason)
	}
	got := slices.Sorted(slices.Values(rpcerr.FieldViolations(err)))
	if !slices.Equal(got, slices.Sorted(slices.Values(fields))) {
		t.Fatalf("%s: field violations %q; want %q", name, got, fields)
	}
}

// TestRegisterAgent: a registration is enabled with the Provider audience
// unless overridden; the same details again return the same agent
// (created = false); the same issuer with other details is AlreadyExists.
func TestRegisterAgent(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := newAgentEnv(t, dbURL)
		r := e.register(t, "https://pa.example", "https://pa.example/.well-known/jwks.json", "Example PA")
		a := r.GetAgent()
		if !r.GetCreated() || !agentID.MatchString(a.GetId()) || a.GetIssuer() != "https://pa.example" ||
			a.GetJwksUri() != "https://pa.example/.well-known/jwks.json" || a.GetDisplayName() != "Example PA" ||
			a.GetAudience() != providerAudience || !a.GetEnabled() ||
			!a.GetCreateTime().AsTime().Equal(start) || !a.GetUpdateTime().AsTime().Equal(start) {
			t.Fatalf("registered %v (created %v)", a, r.GetCreated())
		}
		if !slices.Equal(e.changes, []string{a.GetId()}) {
			t.Fatalf("OnChange saw %q; want the new agent", e.changes)
		}

		again := e.register(t, "https://pa.example", "https://pa.example/.well-known/jwks.json", "Example PA")
		if again.GetCreated() || again.GetAgent().GetId() != a.GetId() {
			t.Fatalf("registered again: %v; want the existing agent, created false", again)
		}
		_, err := e.svc.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: "https://pa.example",
			JwksUri: "https://pa.example/other-jwks.json", DisplayName: "Example PA"})
		refused(t, "same issuer, other JWKS", err, connect.CodeAlreadyExists, pactv1.ErrorReason_ERROR_REASON_ALREADY_EXISTS)

		// Issuers are compared byte for byte: a trailing slash is another agent.
		other := e.register(t, "https://pa.example/", "https://pa.example/.well-known/jwks.json", "Example PA")
		if !other.GetCreated() || other.GetAgent().GetId() == a.GetId() {
			t.Fatalf("issuer with a trailing slash: %v; want a new agent", other)
		}
		o, err := e.svc.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: "https://pa2.example",
			JwksUri: "https://pa2.example/jwks.json", DisplayName: "Second", Audience: "https://provider.example/pa2"})
		if err != nil || o.GetAgent().GetAudience() != "https://provider.example/pa2" {
			t.Fatalf("audience override: %v, %v", o, err)
		}
	})
}

// TestRegisterAgentRefusals: each bad field is InvalidArgument naming it,
// and a refused request stores nothing.
func TestRegisterAgentRefusals(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := newAgentEnv(t, dbURL)
		const iss, jwks = "https://pa.example", "https://pa.example/jwks.json"
		for _, tc := range []struct {
			name             string
			iss, jwks, title string
			fields           []string
		}{
			{"no issuer", "", jwks, "PA", []string{"issuer"}},
			{"relative issuer", "pa.example", jwks, "PA", []string{"issuer"}},
			{"issuer with a query", iss + "/?x=1", jwks, "PA", []string{"issuer"}},
			{"issuer with a fragment", iss + "/#f", jwks, "PA", []string{"issuer"}},
			{"issuer not http(s)", "ftp://pa.example", jwks, "PA", []string{"issuer"}},
			{"no JWKS URI", iss, "", "PA", []string{"jwks_uri"}},
			{"plain http JWKS URI", iss, "http://pa.example/jwks.json", "PA", []string{"jwks_uri"}},
			{"loopback JWKS URI without PACT_DEV", iss, "https://127.0.0.1/jwks.json", "PA", []string{"jwks_uri"}},
			{"private JWKS URI", iss, "https://10.0.0.1/jwks.json", "PA", []string{"jwks_uri"}},
			{"no display name", iss, jwks, "", []string{"display_name"}},
			{"display name of 201 characters", iss, jwks, strings.Repeat("é", 201), []string{"display_name"}},
			{"every field", "", "", "", []string{"issuer", "jwks_uri", "display_name"}},
		} {
			_, err := e.svc.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: tc.iss, JwksUri: tc.jwks, DisplayName: tc.title})
			refused(t, tc.name, err, connect.CodeInvalidArgument, invalid, tc.fields...)
		}
		l, err := e.svc.ListAgents(t.Context(), &pactv1.ListAgentsRequest{})
		if err != nil || len(l.GetAgents()) != 0 || len(e.changes) != 0 {
			t.Fatalf("after refusals: %v, %v, changes %q; want nothing stored", l, err, e.changes)
		}
		// Positive control: 200 characters is the most a display name may have.
		e.register(t, iss, jwks, strings.Repeat("é", 200))
	})
}

// TestRegisterAgentDevAndAllowHosts: PACT_DEV admits http JWKS URIs and
// issuers on loopback hosts; PACT_JWKS_ALLOW_HOSTS admits https ones on a
// private host it names, and plain http stays refused there.
func TestRegisterAgentDevAndAllowHosts(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		dev := newAgentEnv(t, dbURL, func(d *agent.Deps) { d.Dev = true })
		dev.register(t, "http://127.0.0.1:9000", "http://127.0.0.1:9000/jwks.json", "Local PA")
		_, err := dev.svc.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: "https://pa.example",
			JwksUri: "http://pa.example/jwks.json", DisplayName: "PA"})
		refused(t, "PACT_DEV, http JWKS URI off loopback", err, connect.CodeInvalidArgument, invalid, "jwks_uri")

		allow := newAgentEnv(t, dbURL, func(d *agent.Deps) { d.AllowHosts = []string{"10.0.0.1"} })
		allow.register(t, "https://10.0.0.1", "https://10.0.0.1/jwks.json", "Staging PA")
		_, err = allow.svc.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: "https://10.0.0.1",
			JwksUri: "http://10.0.0.1/jwks.json", DisplayName: "Staging PA"})
		refused(t, "allowed host, plain http", err, connect.CodeInvalidArgument, invalid, "jwks_uri")
		_, err = allow.svc.RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: "https://10.0.0.2",
			JwksUri: "https://10.0.0.2/jwks.json", DisplayName: "Other PA"})
		refused(t, "private host not allowed", err, connect.CodeInvalidArgument, invalid, "issuer", "jwks_uri")
	})
}

// TestGetListDeleteAgent: by id and by exact issuer; creation order with
// paging; a deleted agent is NotFound, and deleting it again too.
func TestGetListDeleteAgent(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := newAgentEnv(t, dbURL)
		var ids []string
		for _, h := range []string{"a", "b", "c"} {
			ids = append(ids, e.register(t, "https://"+h+".pa.example", "https://"+h+".pa.example/jwks.json", h).GetAgent().GetId())
			e.clk.Advance(time.Millisecond)
		}
		byID, err := e.svc.GetAgent(t.Context(), &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: ids[1]}})
		if err != nil || byID.GetAgent().GetIssuer() != "https://b.pa.example" {
			t.Fatalf("by id: %v, %v", byID, err)
		}
		byIss, err := e.svc.GetAgent(t.Context(), &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Issuer{Issuer: "https://b.pa.example"}})
		if err != nil || byIss.GetAgent().GetId() != ids[1] {
			t.Fatalf("by issuer: %v, %v", byIss, err)
		}
		_, err = e.svc.GetAgent(t.Context(), &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Issuer{Issuer: "https://b.pa.example/"}})
		refused(t, "issuer not byte for byte", err, connect.CodeNotFound, pactv1.ErrorReason_ERROR_REASON_NOT_FOUND)

		p1, err := e.svc.ListAgents(t.Context(), &pactv1.ListAgentsRequest{Page: &pactv1.PageRequest{PageSize: 2}})
		if err != nil || len(p1.GetAgents()) != 2 || p1.GetAgents()[0].GetId() != ids[0] || p1.GetAgents()[1].GetId() != ids[1] || p1.GetNextPageToken() == "" {
			t.Fatalf("page 1: %v, %v", p1, err)
		}
		p2, err := e.svc.ListAgents(t.Context(), &pactv1.ListAgentsRequest{Page: &pactv1.PageRequest{PageSize: 2, PageToken: p1.GetNextPageToken()}})
		if err != nil || len(p2.GetAgents()) != 1 || p2.GetAgents()[0].GetId() != ids[2] || p2.GetNextPageToken() != "" {
			t.Fatalf("page 2: %v, %v", p2, err)
		}
		_, err = e.svc.ListAgents(t.Context(), &pactv1.ListAgentsRequest{Page: &pactv1.PageRequest{PageSize: 501}})
		refused(t, "page_size 501", err, connect.CodeInvalidArgument, invalid, "page.page_size")

		e.changes = nil
		if _, err := e.svc.DeleteAgent(t.Context(), &pactv1.DeleteAgentRequest{Id: ids[0]}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(e.changes, []string{ids[0] + " deleted"}) {
			t.Fatalf("OnChange saw %q; want the deletion", e.changes)
		}
		_, err = e.svc.GetAgent(t.Context(), &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: ids[0]}})
		refused(t, "deleted agent", err, connect.CodeNotFound, pactv1.ErrorReason_ERROR_REASON_NOT_FOUND)
		_, err = e.svc.DeleteAgent(t.Context(), &pactv1.DeleteAgentRequest{Id: ids[0]})
		refused(t, "deleted again", err, connect.CodeNotFound, pactv1.ErrorReason_ERROR_REASON_NOT_FOUND)
		if l, err := e.svc.ListAgents(t.Context(), &pactv1.ListAgentsRequest{}); err != nil || len(l.GetAgents()) != 2 {
			t.Fatalf("after the deletion: %v, %v; want 2 agents", l, err)
		}
	})
}

// TestUpdateAgent: the masked fields change and nothing else; the mask is
// required and names only enabled, jwks_uri, display_name, audience.
func TestUpdateAgent(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		e := newAgentEnv(t, dbURL)
		a := e.register(t, "https://pa.example", "https://pa.example/jwks.json", "Example PA").GetAgent()
		e.clk.Advance(time.Minute)
		e.changes = nil
		mask := func(paths ...string) *fieldmaskpb.FieldMask { return &fieldmaskpb.FieldMask{Paths: paths} }
		r, err := e.svc.UpdateAgent(t.Context(), &pactv1.UpdateAgentRequest{
			Agent:      &pactv1.Agent{Id: a.GetId(), Enabled: false, DisplayName: "ignored: not in the mask", Issuer: "https://ignored.example"},
			UpdateMask: mask("enabled"),
		})
		u := r.GetAgent()
		if err != nil || u.GetEnabled() || u.GetDisplayName() != "Example PA" || u.GetIssuer() != "https://pa.example" ||
			!u.GetCreateTime().AsTime().Equal(start) || !u.GetUpdateTime().AsTime().Equal(start.Add(time.Minute)) {
			t.Fatalf("disable: %v, %v", u, err)
		}
		if !slices.Equal(e.changes, []string{a.GetId()}) {
			t.Fatalf("OnChange saw %q; want the update", e.changes)
		}
		r, err = e.svc.UpdateAgent(t.Context(), &pactv1.UpdateAgentRequest{
			Agent:      &pactv1.Agent{Id: a.GetId(), JwksUri: "https://pa.example/keys.json", DisplayName: "Renamed", Audience: "https://provider.example/x"},
			UpdateMask: mask("jwks_uri", "display_name", "audience"),
		})
		if u := r.GetAgent(); err != nil || u.GetJwksUri() != "https://pa.example/keys.json" || u.GetDisplayName() != "Renamed" ||
			u.GetAudience() != "https://provider.example/x" || u.GetEnabled() {
			t.Fatalf("three fields: %v, %v", u, err)
		}

		for _, tc := range []struct {
			name   string
			req    *pactv1.UpdateAgentRequest
			fields []string
		}{
			{"no mask", &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: a.GetId(), Enabled: true}}, []string{"update_mask"}},
			{"issuer in the mask", &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: a.GetId(), Issuer: "https://x.example"}, UpdateMask: mask("issuer")}, []string{"update_mask"}},
			{"no id", &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Enabled: true}, UpdateMask: mask("enabled")}, []string{"agent.id"}},
			{"bad display name", &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: a.GetId()}, UpdateMask: mask("display_name")}, []string{"agent.display_name"}},
			{"bad JWKS URI", &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: a.GetId(), JwksUri: "http://pa.example/j"}, UpdateMask: mask("jwks_uri")}, []string{"agent.jwks_uri"}},
		} {
			_, err := e.svc.UpdateAgent(t.Context(), tc.req)
			refused(t, tc.name, err, connect.CodeInvalidArgument, invalid, tc.fields...)
		}
		_, err = e.svc.UpdateAgent(t.Context(), &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: "agt_01JZZZZZZZZZZZZZZZZZZZZZZZ", Enabled: true}, UpdateMask: mask("enabled")})
		refused(t, "unknown agent", err, connect.CodeNotFound, pactv1.ErrorReason_ERROR_REASON_NOT_FOUND)
		g, err := e.svc.GetAgent(t.Context(), &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: a.GetId()}})
		if err != nil || g.GetAgent().GetDisplayName() != "Renamed" || g.GetAgent().GetEnabled() {
			t.Fatalf("after refused updates: %v, %v; want the last accepted state", g, err)
		}
	})
}

package server_test

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/testkit/testclock"
)

// delegatedPA is a PA with a grant at Brand acme (trusted-frontend login)
// and a delegation token of it, made through pactd's RPCs on inst.
type delegatedPA struct {
	pa         *testPA
	agentID    string
	delegation string // "Bearer " + the access token
	grantID    string
}

func newDelegatedPA(t *testing.T, inst *instance) *delegatedPA {
	t.Helper()
	ctx := t.Context()
	pa := newTestPA(t)
	reg, err := agents(inst, adminToken).RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "PA"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := brands(inst, adminToken).CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme", Delegation: delegationSettings()}); err != nil {
		t.Fatal(err)
	}
	jwt := func() string {
		return "Bearer " + pa.token(t, map[string]any{"alg": "ES256", "kid": pa.kid}, pa.claims("https://provider.example/a2a", time.Now()))
	}
	dc := pactv1connect.NewDelegationServiceClient(h2c(), inst.url, withToken(frontendToken))
	dev, err := dc.StartDeviceAuthorization(ctx, &pactv1.StartDeviceAuthorizationRequest{BrandId: "acme", Authorization: jwt(), ClientId: pa.issuer, Scope: "orders:read"})
	if err != nil || dev.GetError() != nil {
		t.Fatalf("StartDeviceAuthorization = %v, %v", dev, err)
	}
	if _, err := dc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: dev.GetUserCode(), BrandUser: "user-42", Scopes: []string{"orders:read"}}); err != nil {
		t.Fatal(err)
	}
	tok, err := dc.IssueDelegation(ctx, &pactv1.IssueDelegationRequest{BrandId: "acme", Authorization: jwt(), ClientId: pa.issuer,
		GrantType: "urn:ietf:params:oauth:grant-type:device_code", DeviceCode: dev.GetDeviceCode()})
	if err != nil || tok.GetAccessToken() == "" {
		t.Fatalf("IssueDelegation = %v, %v", tok, err)
	}
	d := &delegatedPA{pa: pa, agentID: reg.GetAgent().GetId(), delegation: "Bearer " + tok.GetAccessToken()}
	r := d.verify(t, inst)
	if !r.GetAllowed() || r.GetDelegation().GetGrantId() == "" {
		t.Fatalf("ok/delegated-call: %v", r)
	}
	d.grantID = r.GetDelegation().GetGrantId()
	return d
}

// verify is a delegated VerifyAgentRequest on inst with a new PA JWT.
func (d *delegatedPA) verify(t *testing.T, inst *instance) *pactv1.VerifyAgentRequestResponse {
	t.Helper()
	return d.call(t, inst, d.delegation)
}

// call is VerifyAgentRequest on inst with a new PA JWT and the delegation
// header value ("" for an identity-only call).
func (d *delegatedPA) call(t *testing.T, inst *instance, delegation string) *pactv1.VerifyAgentRequestResponse {
	t.Helper()
	tok := d.pa.token(t, map[string]any{"alg": "ES256", "kid": d.pa.kid}, d.pa.claims("https://provider.example/a2a", time.Now()))
	r, err := pactv1connect.NewVerificationServiceClient(h2c(), inst.url, withToken(frontendToken)).VerifyAgentRequest(t.Context(),
		&pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer " + tok, UserDelegation: delegation})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// decide is a delegated call as refusedWithin wants it; identity decides
// an identity-only call.
func (d *delegatedPA) decide(t *testing.T, inst *instance) func() (bool, pactv1.DenyReason) {
	return func() (bool, pactv1.DenyReason) { r := d.verify(t, inst); return r.GetAllowed(), r.GetReason() }
}

func (d *delegatedPA) identity(t *testing.T, inst *instance) func() (bool, pactv1.DenyReason) {
	return func() (bool, pactv1.DenyReason) { r := d.call(t, inst, ""); return r.GetAllowed(), r.GetReason() }
}

// samples reads inst's /metrics as a map from each sample's name and
// labels ("pactd_x{a=\"b\"}") to its value.
func samples(t *testing.T, inst *instance) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(scrapeBody(t, inst.url)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		n, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		out[line[:i]] = n
	}
	return out
}

// statements is pactd_db_statements_total by statement.
func statements(t *testing.T, inst *instance) map[string]float64 {
	t.Helper()
	const prefix = `pactd_db_statements_total{statement="`
	out := map[string]float64{}
	for k, v := range samples(t, inst) {
		if name, ok := strings.CutPrefix(k, prefix); ok {
			out[strings.TrimSuffix(name, `"}`)] = v
		}
	}
	if len(out) == 0 {
		t.Fatal("no pactd_db_statements_total on /metrics")
	}
	return out
}

// feedCaughtUp waits until a poll of inst's change feed that started after
// now has completed, so every change made before has been applied.
func feedCaughtUp(t *testing.T, inst *instance) {
	t.Helper()
	since := time.Now()
	waitFor(t, 5*time.Second, "a complete poll of the change feed", func() bool {
		age, ok := samples(t, inst)["pactd_change_feed_poll_age_seconds"]
		return ok && age < time.Since(since).Seconds()
	})
}

// feedAppliedAll moves clk one poll interval (a poll of pactd's feed) and
// waits until the feed has applied every change in store: feedCaughtUp
// for a pactd on a test clock, whose poll age only moves with the clock.
func feedAppliedAll(t *testing.T, inst *instance, clk *testclock.Clock, interval time.Duration, store db.Store) {
	t.Helper()
	latest, err := store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := clk.WaitForTicker(t.Context(), interval); err != nil {
		t.Fatal(err)
	}
	clk.Advance(interval)
	waitFor(t, 5*time.Second, "the feed to apply every change", func() bool {
		return samples(t, inst)["pactd_change_feed_position"] >= float64(latest.Pos)
	})
}

// Repeated delegated calls read nothing from the database while nothing
// changed: the statements pactd ran meanwhile (counted by the store and
// exported on /metrics) are only the change feed's polls, the credential
// check that is re-read once a second, and the metrics scrape's ping —
// no grant, agent or Brand read. Then a revocation through this replica is
// refused on its next call. Both stores.
func TestDelegatedCallsReadNoGrantWhileNothingChanged(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir(), "PACT_CACHE_TTL=1h"))
		d := newDelegatedPA(t, inst)
		// The setup's own changes (the agent, the Brand) reach the caches
		// through the feed too; let them land, then warm the caches again.
		feedCaughtUp(t, inst)
		if r := d.verify(t, inst); !r.GetAllowed() {
			t.Fatalf("ok/warm-up: %v", r)
		}
		// A window of at least 200 calls over at least 1.5 s, so the feed
		// polls meanwhile (the control below). A window in which the feed
		// went stale (its poller fell a bound behind on a loaded machine:
		// pactd_change_feed_stale_lookups_total moved) or a poll failed
		// (and the caches were dropped) rightly reads again, so it is
		// measured again, at most three times.
		// A window in which the feed applied a change (its position moved:
		// something did change, e.g. a setup write that reached this
		// replica's poller late on a loaded machine) rightly reads again too.
		feedTrouble := func() float64 {
			m := samples(t, inst)
			return m["pactd_change_feed_stale_lookups_total"] + m["pactd_change_feed_poll_errors_total"] + m["pactd_change_feed_resyncs_total"] + m["pactd_change_feed_position"]
		}
		for attempt := 1; ; attempt++ {
			before, trouble0 := statements(t, inst), feedTrouble()
			began := time.Now()
			calls := 0
			for ; calls < 200 || time.Since(began) < 1500*time.Millisecond; calls++ {
				if r := d.verify(t, inst); !r.GetAllowed() || r.GetDelegation().GetGrantId() != d.grantID {
					t.Fatalf("ok/delegated-call %d: %v", calls, r)
				}
			}
			elapsed := time.Since(began)
			after, trouble := statements(t, inst), feedTrouble()-trouble0
			ran := map[string]float64{}
			for name, n := range after {
				if delta := n - before[name]; delta > 0 {
					ran[name] = delta
				}
			}
			t.Logf("%d delegated calls in %v; statements meanwhile: %v; stale lookups, failed polls, resyncs and changes applied: %v",
				calls, elapsed.Round(time.Millisecond), ran, trouble)
			if trouble > 0 {
				if attempt == 3 {
					t.Fatalf("the change feed went stale, failed or applied a change in each of %d windows", attempt)
				}
				continue
			}
			for name, n := range ran {
				switch name {
				case "ListChangesFrom": // the feed's polls, twice a second
				case "UpsertReplica", "PruneReplicas": // the replica's heartbeat, every 15 s
					if limit := elapsed.Seconds()/15 + 1; n > limit {
						t.Errorf("%s ran %v times in %v: more than once per heartbeat", name, n, elapsed)
					}
				case "GetCredentialByHash", "TouchCredential": // the callers' credentials, re-read once a second
					if limit := 2 * (elapsed.Seconds() + 2); n > limit {
						t.Errorf("%s ran %v times in %v: more than once a second per credential", name, n, elapsed)
					}
				case "ClaimWebhookDeliveries", "WebhookOutboxGauges": // the webhook dispatcher's poll, once a second
					if limit := elapsed.Seconds() + 2; n > limit {
						t.Errorf("%s ran %v times in %v: more than once a second", name, n, elapsed)
					}
				case "query": // the ping behind pactd_database_up, per scrape
					if n > 4 {
						t.Errorf("unnamed statements ran %v times", n)
					}
				default:
					t.Errorf("%s ran %v times during %d delegated calls; want none (GetGrant is the grant read)", name, n, calls)
				}
			}
			if ran["ListChangesFrom"] < 2 {
				t.Errorf("the change feed's polls (twice a second) were not counted during %v: the count is not being read", elapsed)
			}
			break
		}
		// A revocation through this replica applies to its next call.
		dc := pactv1connect.NewDelegationServiceClient(h2c(), inst.url, withToken(frontendToken))
		if _, err := dc.RevokeGrant(t.Context(), &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: d.grantID}); err != nil {
			t.Fatal(err)
		}
		if r := d.verify(t, inst); r.GetAllowed() || r.GetReason() != pactv1.DenyReason_DENY_REASON_DELEGATION_INVALID {
			t.Fatalf("fail/revoked-here: %v; want DELEGATION_INVALID at once", r)
		}
	})
}

// A grant revoked on replica A is refused on replica B within the
// revocation bound, B polling the feed alone (no LISTEN): the delegated
// VerifyAgentRequest and IntrospectToken both.
func TestRevokedGrantRefusedOnAnotherReplicaWithinTheBound(t *testing.T) {
	dbURL := dbtest.PostgresURL(t)
	env := []string{"PACT_CACHE_TTL=1h", "PACT_CHANGE_NOTIFY_URL=off"}
	a := start(t, testConfig(t, dbURL, t.TempDir(), env...))
	b := start(t, testConfig(t, dbURL, t.TempDir(), env...))
	d := newDelegatedPA(t, a)
	// Positive controls: B allows, and caches the grant.
	tc := pactv1connect.NewTokenServiceClient(h2c(), b.url, withToken(frontendToken))
	introspect := func() bool {
		r, err := tc.IntrospectToken(t.Context(), &pactv1.IntrospectTokenRequest{Token: strings.TrimPrefix(d.delegation, "Bearer "), BrandId: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetActive()
	}
	if r := d.verify(t, b); !r.GetAllowed() || !introspect() {
		t.Fatalf("ok/replica-b-allows: %v", r)
	}
	dc := pactv1connect.NewDelegationServiceClient(h2c(), a.url, withToken(frontendToken))
	if _, err := dc.RevokeGrant(t.Context(), &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: d.grantID}); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	took := refusedWithin(t, revoked, bound, pactv1.DenyReason_DENY_REASON_DELEGATION_INVALID, d.decide(t, b))
	if introspect() {
		t.Fatal("IntrospectToken on B still says active after VerifyAgentRequest refused")
	}
	t.Logf("grant revoked on A; refused on B after %v (bound %v)", took.Round(time.Millisecond), bound)
}

// The action guard obeys the same bound: CheckGrant on replica B answers
// active from its cache, and REVOKED within the revocation bound after
// RevokeGrant on replica A (no notification: B learns it by polling).
func TestCheckGrantTurnsFalseOnAnotherReplicaWithinTheBound(t *testing.T) {
	dbURL := dbtest.PostgresURL(t)
	env := []string{"PACT_CACHE_TTL=1h", "PACT_CHANGE_NOTIFY_URL=off"}
	a := start(t, testConfig(t, dbURL, t.TempDir(), env...))
	b := start(t, testConfig(t, dbURL, t.TempDir(), env...))
	d := newDelegatedPA(t, a)
	onB := pactv1connect.NewDelegationServiceClient(h2c(), b.url, withToken(frontendToken))
	check := func() (bool, pactv1.GrantCheckReason) {
		r, err := onB.CheckGrant(t.Context(), &pactv1.CheckGrantRequest{BrandId: "acme", GrantId: d.grantID, Scopes: []string{"orders:read"},
			BrandUser: "user-42", AgentId: d.agentID})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetActive(), r.GetReason()
	}
	// Positive control, twice: the second is answered from B's cache.
	for range 2 {
		if ok, reason := check(); !ok {
			t.Fatalf("ok/active-on-b: %v", reason)
		}
	}
	dc := pactv1connect.NewDelegationServiceClient(h2c(), a.url, withToken(frontendToken))
	if _, err := dc.RevokeGrant(t.Context(), &pactv1.RevokeGrantRequest{BrandId: "acme", GrantId: d.grantID}); err != nil {
		t.Fatal(err)
	}
	took := refusedWithin(t, time.Now(), bound, pactv1.GrantCheckReason_GRANT_CHECK_REASON_REVOKED, check)
	t.Logf("grant revoked on A; CheckGrant false on B after %v (bound %v)", took.Round(time.Millisecond), bound)
}

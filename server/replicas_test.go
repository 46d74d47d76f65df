package server_test

import (
	"net/url"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// bound is the revocation bound of the default poll interval (500 ms).
const bound = time.Second

// refusedWithin calls decide until it refuses, and fails the test if a call
// that started more than limit after since was still allowed, or if the
// refusal has another reason than want. It returns how long after since
// the first refusal came. decide returns whether the call was allowed and,
// if not, why.
func refusedWithin[R comparable](t *testing.T, since time.Time, limit time.Duration, want R, decide func() (bool, R)) time.Duration {
	t.Helper()
	for {
		started := time.Now()
		allowed, reason := decide()
		if !allowed {
			if reason != want {
				t.Fatalf("refused with %v, want %v", reason, want)
			}
			return time.Since(since)
		}
		if started.Sub(since) > limit {
			t.Fatalf("a call that started %v after the change was still allowed; the bound is %v", started.Sub(since).Round(time.Millisecond), limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// replicaPair is two replicas on one PostgreSQL database with a PA and a
// Brand registered through A, and a verify call on B.
type replicaPair struct {
	a, b    *instance
	agentID string
	pa      *testPA
}

func newReplicaPair(t *testing.T, dbURLA, dbURLB string, env ...string) *replicaPair {
	t.Helper()
	// An hour of cache lifetime: only the change feed can make B see what
	// A changed within the test.
	env = append([]string{"PACT_CACHE_TTL=1h"}, env...)
	p := &replicaPair{a: start(t, testConfig(t, dbURLA, t.TempDir(), env...)), b: start(t, testConfig(t, dbURLB, t.TempDir(), env...)), pa: newTestPA(t)}
	reg, err := agents(p.a, adminToken).RegisterAgent(t.Context(), &pactv1.RegisterAgentRequest{Issuer: p.pa.issuer, JwksUri: p.pa.jwks.URL + "/jwks.json", DisplayName: "PA"})
	if err != nil {
		t.Fatal(err)
	}
	p.agentID = reg.GetAgent().GetId()
	return p
}

// verifyOnB asks replica B about a new PA JWT for the Brand.
func (p *replicaPair) verifyOnB(t *testing.T, brandID string) *pactv1.VerifyAgentRequestResponse {
	t.Helper()
	tok := p.pa.token(t, map[string]any{"alg": "ES256", "kid": p.pa.kid}, p.pa.claims("https://provider.example/a2a", time.Now()))
	r, err := pactv1connect.NewVerificationServiceClient(h2c(), p.b.url, withToken(frontendToken)).VerifyAgentRequest(t.Context(),
		&pactv1.VerifyAgentRequestRequest{BrandId: brandID, Authorization: "Bearer " + tok})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (p *replicaPair) decideOnB(t *testing.T, brandID string) func() (bool, pactv1.DenyReason) {
	return func() (bool, pactv1.DenyReason) { r := p.verifyOnB(t, brandID); return r.GetAllowed(), r.GetReason() }
}

// Replica B learns what replica A changes through the change feed: a Brand
// created after B cached its absence, an agent disabled after B cached it
// enabled. With LISTEN/NOTIFY (the default) a notification wakes B's
// poller at once; with it off B polls alone, and the change is in effect
// within the revocation bound either way.
func TestReplicasLearnChangesThroughTheFeed(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
	}{{"notify", nil}, {"poll-alone", []string{"PACT_CHANGE_NOTIFY_URL=off"}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dbURL := dbtest.PostgresURL(t)
			p := newReplicaPair(t, dbURL, dbURL, tc.env...)
			ctx := t.Context()
			// B caches that Brand acme does not exist.
			if r := p.verifyOnB(t, "acme"); r.GetAllowed() || r.GetReason() != pactv1.DenyReason_DENY_REASON_UNKNOWN_BRAND {
				t.Fatalf("fail/unknown-brand-first: %v", r)
			}
			if _, err := brands(p.a, adminToken).CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
				t.Fatal(err)
			}
			created := time.Now()
			for r := p.verifyOnB(t, "acme"); !r.GetAllowed(); r = p.verifyOnB(t, "acme") {
				if time.Since(created) > bound+time.Second {
					t.Fatalf("replica B still refuses (%v) a Brand created on A %v ago", r.GetReason(), time.Since(created))
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("%s: a new Brand answered on B after %v", tc.name, time.Since(created).Round(time.Millisecond))
			// Positive control for the agent: B allows, and caches it enabled.
			if r := p.verifyOnB(t, "acme"); !r.GetAllowed() {
				t.Fatalf("ok/replica-b-allows: %v", r)
			}
			if _, err := agents(p.a, adminToken).UpdateAgent(ctx, &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: p.agentID},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled"}}}); err != nil {
				t.Fatal(err)
			}
			took := refusedWithin(t, time.Now(), bound, pactv1.DenyReason_DENY_REASON_AGENT_DISABLED, p.decideOnB(t, "acme"))
			t.Logf("%s: agent disabled on A, refused on B after %v", tc.name, took.Round(time.Millisecond))
		})
	}
}

// A replica that loses the database misses what others change meanwhile;
// when it can read again it drops every cache and goes on from the newest
// change, so the change is in effect on it too. (While it cannot read, it
// verifies from what it knew, within PACT_OUTAGE_GRACE: the outage tests.)
func TestReplicaCatchesUpAfterLosingTheDatabase(t *testing.T) {
	dbURL := dbtest.PostgresURL(t)
	direct, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, direct.Host)
	viaProxy := *direct
	viaProxy.Host = proxy.ln.Addr().String()
	q := viaProxy.Query()
	q.Set("connect_timeout", "1")
	viaProxy.RawQuery = q.Encode()
	// A reaches the database directly; B through the proxy that the test cuts.
	p := newReplicaPair(t, dbURL, viaProxy.String(), "PACT_CHANGE_NOTIFY_URL=off")
	ctx := t.Context()
	if _, err := brands(p.a, adminToken).CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "replica B to allow", func() bool { return p.verifyOnB(t, "acme").GetAllowed() })

	pollErrors := samples(t, p.b)["pactd_change_feed_poll_errors_total"]
	proxy.setCut(true)
	if _, err := agents(p.a, adminToken).UpdateAgent(ctx, &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: p.agentID},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled"}}}); err != nil {
		t.Fatal(err)
	}
	// B misses the change: its polls fail while it is cut off.
	waitFor(t, 10*time.Second, "a failed poll on replica B", func() bool {
		return samples(t, p.b)["pactd_change_feed_poll_errors_total"] > pollErrors
	})
	proxy.setCut(false)
	back := time.Now()
	// B needs its pool to reconnect (connect_timeout 1 s), then one poll.
	took := refusedWithin(t, back, bound+2*time.Second, pactv1.DenyReason_DENY_REASON_AGENT_DISABLED, p.decideOnB(t, "acme"))
	t.Logf("the agent disabled while B was cut off was refused on B %v after the database came back", took.Round(time.Millisecond))
}

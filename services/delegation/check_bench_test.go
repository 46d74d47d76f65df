package delegation_test

// Benchmarks of CheckGrant, the action guard an agent calls twice per tool
// call (before the tool runs and after a policy decision):
//
//	go test -run '^$' -bench CheckGrant -benchtime 2s -count 3 -cpu 1 ./services/delegation/

import (
	"net/http"
	"testing"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/cpumeter"
)

// checkEnv is the service with a grant cache and one live grant; req asks
// whether it grants orders:write to its user and PA.
func checkEnv(b *testing.B, engine string) (*refreshEnv, *pactv1.CheckGrantRequest) {
	b.Helper()
	e := newBenchService(b, engine, true)
	rt := e.grant(b, "user-42")
	// The grant id, from the refresh the PA would make.
	resp, err := e.svc.IssueDelegation(b.Context(), refreshReq(rt))
	rotated(b, resp, err, rt)
	grants, err := e.svc.ListGrants(b.Context(), &pactv1.ListGrantsRequest{BrandId: benchBrand, BrandUser: "user-42"})
	if err != nil || len(grants.GetGrants()) != 1 {
		b.Fatalf("ListGrants = %v, %v", grants, err)
	}
	return e, &pactv1.CheckGrantRequest{BrandId: benchBrand, GrantId: grants.GetGrants()[0].GetGrantId(), Scopes: []string{"orders:write"},
		BrandUser: "user-42", AgentId: "agt_1"}
}

// active fails the benchmark unless the answer is active, so every
// iteration measures the whole check and not an early refusal.
func active(b *testing.B, r *pactv1.CheckGrantResponse, err error) {
	if err != nil || !r.GetActive() {
		b.Fatalf("CheckGrant = %v, %v; want active", r, err)
	}
}

// BenchmarkCheckGrant is CheckGrant in process on both stores: the Brand
// from the Brand cache and the grant from the grant cache (no statement
// while nothing changes), judged at the wall clock.
func BenchmarkCheckGrant(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			e, req := checkEnv(b, engine)
			ctx := b.Context()
			m := cpumeter.Start(e.dbName)
			b.ReportAllocs()
			for b.Loop() {
				r, err := e.svc.CheckGrant(ctx, req)
				active(b, r, err)
			}
			m.Report(b.N, b.ReportMetric)
		})
	}
}

// BenchmarkCheckGrantRPC is CheckGrant through a connect-go client (gRPC
// protocol) to an h2c server on loopback, as BenchmarkRefreshRPC: what a
// frontend pays per guard call, client and server on the benchmark's
// cores.
func BenchmarkCheckGrantRPC(b *testing.B) {
	e, req := checkEnv(b, "postgres")
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewDelegationServiceHandler(e.svc, connect.WithReadMaxBytes(benchMaxRequestBytes)))
	base, client := serveH2C(b, mux)
	c := pactv1connect.NewDelegationServiceClient(client, base, connect.WithGRPC())
	ctx := b.Context()
	m := cpumeter.Start(e.dbName)
	b.ReportAllocs()
	for b.Loop() {
		r, err := c.CheckGrant(ctx, req)
		active(b, r, err)
	}
	m.Report(b.N, b.ReportMetric)
}

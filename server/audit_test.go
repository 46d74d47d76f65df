package server_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/rpcerr"
)

func auditClient(inst *instance, tok string, opts ...connect.ClientOption) pactv1connect.AuditServiceClient {
	return pactv1connect.NewAuditServiceClient(h2c(), inst.url, append(opts, withToken(tok))...)
}

// The audit trail through the server: a delegated PA's grant events and
// a receipt are listed for an admin across Brands and for the Brand's
// frontend in its own view, on every protocol; the roles, the filters'
// refusals (each naming its field) and the metric hold.
func TestAuditTrailThroughTheServer(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir()))
		ctx := t.Context()
		d := newDelegatedPA(t, inst)
		tc := pactv1connect.NewTokenServiceClient(h2c(), inst.url, withToken(frontendToken))
		if _, err := tc.SignReceipt(ctx, &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: d.grantID, PaIssuer: d.pa.issuer, BrandUser: "user-42",
			ScopesUsed: []string{"orders:read"}, Actions: []*pactv1.ReceiptAction{{Tool: "lookup_order"}}}); err != nil {
			t.Fatal(err)
		}
		want := []pactv1.AuditEventKind{
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_CREATED, pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REDEEMED,
			pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED,
		}
		kinds := func(es []*pactv1.AuditEvent) []pactv1.AuditEventKind {
			var out []pactv1.AuditEventKind
			for _, e := range es {
				out = append(out, e.GetKind())
			}
			return out
		}
		for name, opts := range protocols {
			all, err := auditClient(inst, adminToken, opts...).ListAuditEvents(ctx, &pactv1.ListAuditEventsRequest{})
			if err != nil || !slices.Equal(kinds(all.GetEvents()), want) {
				t.Fatalf("%s: admin ListAuditEvents = %v, %v; want kinds %v", name, all, err, want)
			}
			for _, e := range all.GetEvents() {
				if e.GetGrantId() != d.grantID || e.GetAgentId() != d.agentID || e.GetBrandUser() != "user-42" || e.GetPaIssuer() != d.pa.issuer {
					t.Fatalf("%s: event %v", name, e)
				}
			}
			own, err := auditClient(inst, frontendToken, opts...).ListBrandAuditEvents(ctx, &pactv1.ListBrandAuditEventsRequest{BrandId: "acme"})
			if err != nil || !slices.Equal(kinds(own.GetEvents()), want) {
				t.Fatalf("%s: frontend ListBrandAuditEvents = %v, %v", name, own, err)
			}
		}
		r := auditTrail(t, inst)
		if got := r[2]; got.GetActions()[0].GetTool() != "lookup_order" || got.GetActor() != "frontend" || len(got.GetDetail()) != 43 {
			t.Fatalf("receipt event = %v", got)
		}
		// Roles: the whole trail is for admins only; the Brand view needs
		// a credential.
		if _, err := auditClient(inst, frontendToken).ListAuditEvents(ctx, &pactv1.ListAuditEventsRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Fatalf("fail/frontend-lists-all: err = %v, want PermissionDenied", err)
		}
		if _, err := auditClient(inst, "").ListBrandAuditEvents(ctx, &pactv1.ListBrandAuditEventsRequest{BrandId: "acme"}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("fail/no-credential: err = %v, want Unauthenticated", err)
		}
		// The Brand view of another Brand sees none of acme's events.
		if _, err := brands(inst, adminToken).CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "globex", DisplayName: "Globex"}); err != nil {
			t.Fatal(err)
		}
		other, err := auditClient(inst, frontendToken).ListBrandAuditEvents(ctx, &pactv1.ListBrandAuditEventsRequest{BrandId: "globex"})
		if err != nil || len(other.GetEvents()) != 0 {
			t.Fatalf("globex view = %v, %v; want no events", other, err)
		}
		// Refusals, each naming its field.
		fc := auditClient(inst, frontendToken)
		now := time.Now()
		for name, c := range map[string]struct {
			req   *pactv1.ListBrandAuditEventsRequest
			code  connect.Code
			field string
		}{
			"fail/no-brand":        {&pactv1.ListBrandAuditEventsRequest{}, connect.CodeInvalidArgument, "brand_id"},
			"fail/unknown-brand":   {&pactv1.ListBrandAuditEventsRequest{BrandId: "nope"}, connect.CodeNotFound, ""},
			"fail/unknown-kind":    {&pactv1.ListBrandAuditEventsRequest{BrandId: "acme", Filter: &pactv1.AuditFilter{Kind: 99}}, connect.CodeInvalidArgument, "filter.kind"},
			"fail/range-backwards": {&pactv1.ListBrandAuditEventsRequest{BrandId: "acme", Filter: &pactv1.AuditFilter{StartTime: timestamppb.New(now), EndTime: timestamppb.New(now.Add(-time.Hour))}}, connect.CodeInvalidArgument, "filter.end_time"},
			"fail/bad-time":        {&pactv1.ListBrandAuditEventsRequest{BrandId: "acme", Filter: &pactv1.AuditFilter{StartTime: &timestamppb.Timestamp{Nanos: -1}}}, connect.CodeInvalidArgument, "filter.start_time"},
			"fail/long-grant":      {&pactv1.ListBrandAuditEventsRequest{BrandId: "acme", Filter: &pactv1.AuditFilter{GrantId: strings.Repeat("g", 257)}}, connect.CodeInvalidArgument, "filter.grant_id"},
			"fail/foreign-token":   {&pactv1.ListBrandAuditEventsRequest{BrandId: "acme", Page: &pactv1.PageRequest{PageToken: "v1.YWJj"}}, connect.CodeInvalidArgument, "page.page_token"},
		} {
			_, err := fc.ListBrandAuditEvents(ctx, c.req)
			if connect.CodeOf(err) != c.code || (c.field != "" && !slices.Equal(rpcerr.FieldViolations(err), []string{c.field})) {
				t.Errorf("%s: err = %v (fields %v), want %v on %q", name, err, rpcerr.FieldViolations(err), c.code, c.field)
			}
		}
		if _, err := auditClient(inst, adminToken).ListAuditEvents(ctx, &pactv1.ListAuditEventsRequest{Filter: &pactv1.AuditFilter{BrandUser: "user-42"}}); connect.CodeOf(err) != connect.CodeInvalidArgument ||
			!slices.Equal(rpcerr.FieldViolations(err), []string{"filter.brand_user"}) {
			t.Errorf("fail/user-without-brand: err = %v", err)
		}
		// Positive controls of the filters: kind, grant, time range, paging.
		rc, err := fc.ListBrandAuditEvents(ctx, &pactv1.ListBrandAuditEventsRequest{BrandId: "acme", Filter: &pactv1.AuditFilter{
			Kind: pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED, GrantId: d.grantID, BrandUser: "user-42",
			StartTime: timestamppb.New(now.Add(-time.Hour)), EndTime: timestamppb.New(now.Add(time.Hour))}})
		if err != nil || len(rc.GetEvents()) != 1 || rc.GetEvents()[0].GetId() != r[2].GetId() {
			t.Fatalf("ok/filters = %v, %v", rc, err)
		}
		var paged []string
		page := &pactv1.PageRequest{PageSize: 2}
		for {
			p, err := fc.ListBrandAuditEvents(ctx, &pactv1.ListBrandAuditEventsRequest{BrandId: "acme", Page: page})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.GetEvents() {
				paged = append(paged, e.GetId())
			}
			if p.GetNextPageToken() == "" {
				break
			}
			page = &pactv1.PageRequest{PageSize: 2, PageToken: p.GetNextPageToken()}
		}
		if len(paged) != 3 || paged[0] != r[0].GetId() || paged[2] != r[2].GetId() {
			t.Fatalf("ok/paging: ids %v", paged)
		}
		// The metric counts what was recorded, by kind.
		body := scrapeBody(t, inst.url)
		for _, line := range []string{
			`pactd_audit_events_recorded_total{kind="grant.created"} 1`, `pactd_audit_events_recorded_total{kind="grant.redeemed"} 1`,
			`pactd_audit_events_recorded_total{kind="receipt.signed"} 1`, `pactd_audit_events_recorded_total{kind="grant.revoked"} 0`,
			`pactd_audit_events_pruned_total 0`,
		} {
			if !strings.Contains(body, line+"\n") {
				t.Errorf("metrics lack %s", line)
			}
		}
	})
}

// auditTrail lists the whole trail as an admin.
func auditTrail(t *testing.T, inst *instance) []*pactv1.AuditEvent {
	t.Helper()
	r, err := auditClient(inst, adminToken).ListAuditEvents(t.Context(), &pactv1.ListAuditEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetEvents()
}

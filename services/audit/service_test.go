package audit_test

import (
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/services/audit"
)

// Prune deletes exactly the events older than the retention, counts them
// for the metric, and deletes nothing when the retention is zero.
func TestPrune(t *testing.T) {
	s := dbtest.Open(t, "", t.TempDir())
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, age := range []time.Duration{100 * 24 * time.Hour, 91 * 24 * time.Hour, 89 * 24 * time.Hour, time.Hour} {
		if _, err := s.RecordAuditEvent(t.Context(), db.AuditEvent{Kind: db.AuditStepUp, Time: now.Add(-age), BrandID: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		es, err := s.ListAuditEvents(t.Context(), db.AuditFilter{}, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	var pruned int64
	keep := audit.New(audit.Deps{Store: s, Retention: 0, Now: func() time.Time { return now }, OnPrune: func(n int64) { pruned += n }})
	if n, err := keep.Prune(t.Context()); err != nil || n != 0 || count() != 4 || pruned != 0 {
		t.Fatalf("retention 0: Prune = %d, %v; %d events left, %d counted; want nothing pruned", n, err, count(), pruned)
	}
	svc := audit.New(audit.Deps{Store: s, Retention: 90 * 24 * time.Hour, Now: func() time.Time { return now }, OnPrune: func(n int64) { pruned += n }})
	if n, err := svc.Prune(t.Context()); err != nil || n != 2 || count() != 2 || pruned != 2 {
		t.Fatalf("retention 90d: Prune = %d, %v; %d events left, %d counted; want 2 pruned, 2 left", n, err, count(), pruned)
	}
	if n, err := svc.Prune(t.Context()); err != nil || n != 0 || pruned != 2 {
		t.Fatalf("second Prune = %d, %v (counted %d); want 0", n, err, pruned)
	}
}

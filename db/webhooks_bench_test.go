package db_test

import (
	"fmt"
	"testing"
	"time"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
)

// BenchmarkRecordAuditEvent is the cost the outbox adds to every audit
// event: the trigger's INSERT … SELECT over the destinations, with none,
// one matching and ten matching destinations, on each engine.
func BenchmarkRecordAuditEvent(b *testing.B) {
	engines := map[string]func(b *testing.B) db.Store{
		"sqlite":   func(b *testing.B) db.Store { return dbtest.Open(b, "", b.TempDir()) },
		"postgres": func(b *testing.B) db.Store { return dbtest.Open(b, dbtest.PostgresURL(b), "") },
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, dests := range []int{0, 1, 10} {
			b.Run(fmt.Sprintf("%s/destinations=%d", engine, dests), func(b *testing.B) {
				s := engines[engine](b)
				ctx := b.Context()
				now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
				for i := range dests {
					if _, err := s.CreateWebhookDestination(ctx, db.WebhookDestination{ID: fmt.Sprintf("wh_%02d", i), URL: "https://siem.example/h",
						Enabled: true, SealedSecret: []byte("s"), CreateTime: now, UpdateTime: now}); err != nil {
						b.Fatal(err)
					}
				}
				e := db.AuditEvent{Kind: db.AuditGrantRefreshed, Time: now, BrandID: "acme", BrandUser: "u", GrantID: "g", Actor: db.ActorPA}
				for b.Loop() {
					if _, err := s.RecordAuditEvent(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

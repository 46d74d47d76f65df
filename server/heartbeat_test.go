package server_test

import (
	"testing"
	"time"

	"pactd.dev/pactd/db/dbtest"
)

// Each replica records its heartbeat as it starts: two replicas on one
// PostgreSQL database are two rows, each with the change-feed position it
// applied (the console's overview lists them).
func TestReplicasReportTheirHeartbeat(t *testing.T) {
	dbURL := dbtest.PostgresURL(t)
	store := dbtest.Open(t, dbURL, "")
	since := time.Now().Add(-time.Minute)
	before, err := store.ListReplicas(t.Context(), since, 100)
	if err != nil {
		t.Fatal(err)
	}
	newReplicaPair(t, dbURL, dbURL)
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := store.ListReplicas(t.Context(), since, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) >= len(before)+2 {
			for _, r := range list {
				if r.ID == "" || r.Version == "" || r.SeenTime.Before(since) || r.StartTime.After(r.SeenTime) {
					t.Fatalf("replica %+v", r)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas after two started: %d, before: %d", len(list), len(before))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

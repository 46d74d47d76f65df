package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A short failover in each mode, with the standby held 0.7 s behind: with
// asynchronous replication the writes acknowledged in that time are lost
// (the control: the scenario can lose acknowledged writes), with
// synchronous replication none is — the primary could not acknowledge a
// commit the standby had not flushed, so writes wait instead. In both,
// writes succeed again after the promotion and every acknowledged write
// was checked.
func TestFailover(t *testing.T) {
	if _, err := exec.LookPath("initdb"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
			if os.Getenv("CI") == "true" {
				t.Fatal("PostgreSQL's server binaries (initdb, pg_ctl, pg_basebackup) are required in CI")
			}
			t.Skip("PostgreSQL's server binaries (initdb, pg_ctl, pg_basebackup) are not installed")
		}
	}
	for _, sync := range []bool{false, true} {
		t.Run(modeName(sync), func(t *testing.T) {
			sc := scenario{Sync: sync, Before: 2500 * time.Millisecond, Lag: 700 * time.Millisecond, PromoteAfter: 500 * time.Millisecond,
				After: 2 * time.Second, Writers: 3, Verifiers: 2}
			if err := sc.check(); err != nil {
				t.Fatal(err)
			}
			r, err := sc.run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			acked := r.found["credential"] + r.found["grant"] + r.lost()
			back, ok := r.writesBack()
			t.Logf("%d writes acknowledged, %d lost; writes back %v after the stop; verifications %v",
				acked, r.lost(), back.end.Sub(r.stopAt).Round(time.Millisecond), r.verifRate(time.Time{}, r.endAt, nil))
			if acked < 50 || r.found["credential"] == 0 || r.found["grant"] == 0 {
				t.Fatalf("only %d acknowledged writes (%v found): the load did not run", acked, r.found)
			}
			if !ok || back.end.Before(r.promoteAt) {
				t.Fatalf("writes never came back after the promotion (first after the stop: %+v)", back)
			}
			// No write is acknowledged while there is no primary. A write
			// begun just before the promotion may wait for it (pactd retries
			// its connection) and succeed after: only an acknowledgement
			// before the promotion would be wrong.
			outage := r.writeRate(r.downAt, r.promoteAt)
			early := 0
			for _, w := range r.writes {
				if w.ok && !w.start.Before(r.downAt) && w.end.Before(r.promoteAt) {
					early++
				}
			}
			if outage.all == 0 || early != 0 {
				t.Fatalf("between the stop and the promotion %d of %d writes were acknowledged; want none", early, outage.all)
			}
			if sync {
				if r.lost() != 0 {
					t.Fatalf("synchronous replication lost %d acknowledged writes", r.lost())
				}
				// Held behind, the standby flushed nothing: the primary
				// acknowledged no commit in that time.
				if held := r.writeRate(r.holdAt.Add(200*time.Millisecond), r.stopAt); held.ok != 0 {
					t.Fatalf("%d writes were acknowledged while the standby received nothing", held.ok)
				}
			} else if r.lost() == 0 {
				t.Fatal("control: asynchronous replication lost nothing though the standby was 0.7 s behind; the scenario cannot tell the modes apart")
			}
		})
	}
}

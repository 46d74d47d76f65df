package hdtp

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/peertest"
)

// raceUntilStored sends each body from its own goroutine at once, as many
// times as it takes: the one call dispatched is completed only after every
// other goroutine has had its first answer (so each met the call in flight),
// and each goroutine then sends its body again until it gets a stored
// answer. It returns how many dispatches there were, the completion's body,
// every goroutine's final body, and every in-flight answer's code.
func raceUntilStored(t *testing.T, f *hostFixture, s *served, bodies [][]byte) (dispatches int32, completed []byte, finals [][]byte, inFlight []string) {
	t.Helper()
	var n atomic.Int32
	var mu sync.Mutex
	finals = make([][]byte, len(bodies))
	first := make(chan struct{}, len(bodies))
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Go(func() {
			r, err := f.host.OpenInbound(t.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: body})
			if err != nil {
				t.Error(err)
				first <- struct{}{}
				return
			}
			if d := r.GetDispatch(); d != nil {
				n.Add(1)
				deadline := time.After(30 * time.Second)
				for range len(bodies) - 1 {
					select {
					case <-first:
					case <-deadline:
						t.Error("the duplicates did not answer within 30 s")
						return
					}
				}
				done, err := f.host.CompleteInbound(t.Context(), &hdtpv1.CompleteInboundRequest{CallHandle: d.GetCallHandle(),
					Outcome: &hdtpv1.CompleteInboundRequest_ResultJson{ResultJson: `{"thread_id":"t-9","status":"delivered"}`}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				completed, finals[i] = done.GetBody(), done.GetBody()
				mu.Unlock()
				return
			}
			// A duplicate: unavailable while the call runs, then the
			// stored answer.
			mu.Lock()
			inFlight = append(inFlight, r.GetRespond().GetReason()+" "+r.GetRespond().GetCode())
			mu.Unlock()
			first <- struct{}{}
			deadline := time.Now().Add(30 * time.Second)
			for r.GetRespond().GetReason() == "in_flight" || r.GetRespond().GetReason() == "msg_id_in_flight" {
				if time.Now().After(deadline) {
					t.Error("no stored answer within 30 s")
					return
				}
				time.Sleep(5 * time.Millisecond)
				if r, err = f.host.OpenInbound(t.Context(), &hdtpv1.OpenInboundRequest{IdentityId: s.id, Body: body}); err != nil {
					t.Error(err)
					return
				}
				if r.GetDispatch() != nil {
					n.Add(1)
					t.Error("a duplicate was dispatched")
					return
				}
			}
			finals[i] = r.GetRespond().GetBody()
		})
	}
	wg.Wait()
	return n.Load(), completed, finals, inFlight
}

// TestEnvelopeSentEightTimesRunsOnce: the same envelope sent 8 times at
// once (hostile case 73, exactly once, on both engines under -race): one
// dispatch; every duplicate that came while it ran got "unavailable"
// (pactd's answer for a call in flight, sealed to the caller), never a
// second dispatch; once completed, every duplicate gets the stored answer,
// byte for byte the completion's. Then 8 fresh envelopes carrying one
// inner msg_id (case 74): one dispatch, every other envelope the original
// result, sealed for its own envelope.
func TestEnvelopeSentEightTimesRunsOnce(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		f := newHostFixture(t, dbURL)
		s := f.serve(t, "https://agent.bharat.example/mcp", hdtpv1.Generation_GENERATION_HDTP1, hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED)
		f.declare(t, s, toolSendMessage)
		alina := f.peer(t, s, "Alina Rao", "https://agent.alina.example/mcp")
		f.befriend(t, s, alina, "basic")

		c, err := alina.Seal(s.leaf, 41, "env-race", f.clock.Now(), "send_message", `{"msg_id":"m-race","text":"once"}`, false)
		if err != nil {
			t.Fatal(err)
		}
		bodies := make([][]byte, 8)
		for i := range bodies {
			bodies[i] = c.Body
		}
		n, completed, finals, inFlight := raceUntilStored(t, f, s, bodies)
		if n != 1 || completed == nil {
			t.Fatalf("%d dispatches, want exactly 1", n)
		}
		if len(inFlight) != 7 {
			t.Fatalf("%d duplicates met the call in flight, want 7", len(inFlight))
		}
		for _, a := range inFlight {
			if a != "in_flight unavailable" {
				t.Fatalf("a duplicate in flight was answered %q, want in_flight unavailable", a)
			}
		}
		for i, b := range finals {
			if !bytes.Equal(b, completed) {
				t.Fatalf("duplicate %d's answer differs from the stored one:\n%s\n%s", i, b, completed)
			}
		}
		if res, code := f.openBody(t, s, alina, c, completed); code != "" || string(res) != `{"thread_id":"t-9","status":"delivered"}` {
			t.Fatalf("stored answer = %s %s", res, code)
		}

		// Eight fresh envelopes, one inner msg_id.
		calls := make([]*peertest.Call, 8)
		for i := range calls {
			if calls[i], err = alina.Seal(s.leaf, 50+i, fmt.Sprintf("env-inner-%d", i), f.clock.Now(), "send_message",
				`{"msg_id":"m-inner","text":"once"}`, false); err != nil {
				t.Fatal(err)
			}
			bodies[i] = calls[i].Body
		}
		n, _, finals, inFlight = raceUntilStored(t, f, s, bodies)
		if n != 1 || len(inFlight) != 7 {
			t.Fatalf("one inner msg_id: %d dispatches and %d in flight, want 1 and 7", n, len(inFlight))
		}
		for _, a := range inFlight {
			if a != "msg_id_in_flight unavailable" {
				t.Fatalf("an envelope in flight was answered %q", a)
			}
		}
		for i, b := range finals {
			if res, code := f.openBody(t, s, alina, calls[i], b); code != "" || string(res) != `{"thread_id":"t-9","status":"delivered"}` {
				t.Fatalf("envelope %d's answer = %s %s, want the original result", i, res, code)
			}
		}
	})
}

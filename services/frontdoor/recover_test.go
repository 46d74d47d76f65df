package frontdoor_test

import (
	"strings"
	"testing"

	"pactd.dev/pactd/internal/a2aerr"
)

// TestPanicsBecomeInternalErrors: a panic in what pactd's front door calls
// (the verification, the Brand service, the grant list, the receipt
// signer) becomes the A2A INTERNAL answer under /a2a/ (a bare 500
// elsewhere), logged once by
// pactd with its cause and stack (never by the frontend or its
// http.Server), a turn it interrupts is released, and the Service goes on
// serving; an agent's panic reaches pactd as the turn's failure, which
// answers INTERNAL, is logged once and releases the messageId.
func TestPanicsBecomeInternalErrors(t *testing.T) {
	internal := errBody(a2aerr.Internal, "Internal error")
	t.Run("verification", func(t *testing.T) {
		e := newEnv(t)
		e.verifier.panics.Store(true)
		wantA2A(t, "panicking verification", e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "hi"), good), 500, internal)
		wantPanicLoggedOnce(t, e, "the verifier fell over")
		e.verifier.panics.Store(false)
		decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "hi"), good))
	})
	t.Run("brand-service", func(t *testing.T) {
		e := newEnv(t, func(o *options) { o.panicBrands = true })
		wantA2A(t, "panicking Brand service", e.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", ""), 500, internal)
		wantPanicLoggedOnce(t, e, "the Brand service fell over")
		decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "hi"), good)) // message:send needs no Brand
	})
	t.Run("root-page", func(t *testing.T) {
		// Outside /a2a/ no answer is A2A: a bare 500.
		e := newEnv(t, func(o *options) { o.panicBrands = true })
		wantBare(t, "panicking root page", e.do(t, "GET", "/", "", browser), 500)
		wantPanicLoggedOnce(t, e, "the Brand service fell over")
		wantA2A(t, "still serving", e.do(t, "GET", "/a2a/acme/tasks", "", good), 200, `{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}`)
	})
	t.Run("grant-list", func(t *testing.T) {
		e := newEnv(t, withSessions)
		e.deleg.mu.Lock()
		e.deleg.listPanic = true
		e.deleg.mu.Unlock()
		wantA2A(t, "panicking grant list", e.do(t, "GET", "/a2a/shop/oauth/connected", "", alice), 500, internal)
		wantPanicLoggedOnce(t, e, "the grant list fell over")
		e.deleg.mu.Lock()
		e.deleg.listPanic = false
		e.deleg.mu.Unlock()
		wantPage(t, "after the panic", e.do(t, "GET", "/a2a/shop/oauth/connected", "", alice), 200, "no personal agent is connected")
	})
	t.Run("receipt-signer", func(t *testing.T) {
		// A panic in FinishTurn: the INTERNAL answer, and the turn is
		// released like any failed turn.
		e := newEnv(t)
		e.receipts.panics.Store(true)
		deleg := "X-A2A-User-Delegation: Bearer deleg-u1"
		wantA2A(t, "panicking receipt signer", e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "hi"), good, deleg), 500, internal)
		wantPanicLoggedOnce(t, e, "the receipt signer fell over")
		if n := e.turns.abandoned.Load(); n != 1 {
			t.Errorf("AbandonTurn called %d times, want 1", n)
		}
		e.receipts.panics.Store(false)
		decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "hi"), good, deleg))
	})
	t.Run("agent", func(t *testing.T) {
		e := newEnv(t)
		e.agent.panics.Store(true)
		wantA2A(t, "panicking agent", e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "hi"), good), 500, internal)
		lines := e.logLines("the agent fell over")
		if len(lines) != 1 || !strings.Contains(lines[0], `"msg":"run turn"`) || !strings.Contains(lines[0], "the agent failed: the agent panicked") {
			t.Errorf("the agent's panic is logged %d times: %v", len(lines), lines)
		}
		if e.feLog.String() != "" || e.srvLog.String() != "" {
			t.Errorf("the frontend logged too: %s / %s", e.feLog.String(), e.srvLog.String())
		}
		e.agent.panics.Store(false)
		decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "hi"), good)) // released, and still serving
	})
}

// wantPanicLoggedOnce: pactd logged the panic once, with its cause and
// stack; the frontend and its http.Server logged nothing.
func wantPanicLoggedOnce(t *testing.T, e *env, cause string) {
	t.Helper()
	lines := e.logLines(cause)
	if len(lines) != 1 || !strings.Contains(lines[0], `"msg":"front door panic"`) || !strings.Contains(lines[0], "goroutine ") {
		t.Errorf("the cause %q is in pactd's log %d times (want once, with the stack):\n%s", cause, len(lines), e.log.String())
	}
	if e.feLog.String() != "" || e.srvLog.String() != "" {
		t.Errorf("the frontend logged the panic too: %s / %s", e.feLog.String(), e.srvLog.String())
	}
}

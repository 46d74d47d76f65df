package pacta2a_test

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"pactd.dev/pactd/frontends/pacta2a"
)

// funcExecutor answers with whatever its function (swappable) yields.
type funcExecutor struct {
	f    atomic.Pointer[func(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error]]
	runs atomic.Int32
}

func (e *funcExecutor) set(f func(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error]) {
	e.f.Store(&f)
}

func (e *funcExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	e.runs.Add(1)
	return (*e.f.Load())(ctx, ec)
}

func (*funcExecutor) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrTaskNotCancelable) }
}

func yields(f func(ec *a2asrv.ExecutorContext) (a2a.Event, error)) func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
		return func(yield func(a2a.Event, error) bool) { yield(f(ec)) }
	}
}

// sdkServer is the A2A server a Provider already has: a2a-go's handler
// with PACT's interceptor, under /a2a/{tenant}.
func sdkServer(exec a2asrv.AgentExecutor) http.Handler {
	return a2asrv.NewTenantRESTHandler("/a2a/{*}", a2asrv.NewHandler(exec, a2asrv.WithCallInterceptors(pacta2a.Interceptor()),
		a2asrv.WithLogger(slog.New(slog.DiscardHandler))))
}

func wrapped(next http.Handler) func(pacta2a.Config) (http.Handler, error) {
	return func(cfg pacta2a.Config) (http.Handler, error) { return pacta2a.Wrap(cfg, next) }
}

type testKey struct{}

// TestSDKExecutorSeesTheCaller: behind Wrap, the a2a-go executor gets the
// request pactd prepared (its message, contextId and metadata), the caller
// pactd verified as its authenticated user (CallerOf, DelegationOf,
// BrandOf, TurnOf), A2A-Version 1.0 and the PA's other headers without its
// credentials or cookies, in a context that keeps the request's values;
// its answer goes to FinishTurn as it is.
func TestSDKExecutorSeesTheCaller(t *testing.T) {
	type seenCtx struct {
		ec    *a2asrv.ExecutorContext
		value any
	}
	seen := make(chan seenCtx, 2)
	var exec funcExecutor
	exec.set(func(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
		seen <- seenCtx{ec, ctx.Value(testKey{})}
		return func(yield func(a2a.Event, error) bool) {
			yield(pacta2a.WithReceipt(a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("ok")), []string{"orders:read"},
				pacta2a.Action{Tool: "list_orders", Args: map[string]any{"n": 1}}), nil)
		}
	})
	door := &fakeDoor{answer: aTurn(true)}
	fe := newFrontend(t, door, func(cfg pacta2a.Config) (http.Handler, error) {
		h, err := pacta2a.Wrap(cfg, sdkServer(&exec))
		// A value a Provider's own middleware puts in the request context.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), testKey{}, "from the request")))
		}), err
	})
	res, body := rawRequest(t, fe, "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nX-A2A-User-Delegation: Bearer d\r\n"+
		"Cookie: session=secret\r\nA2A-Version: 2.0\r\nX-Request-Id: req-7\r\nContent-Length: 2\r\n\r\n{}")
	if res.StatusCode != 200 || body != "finished" {
		t.Fatalf("answer %d %q", res.StatusCode, body)
	}
	s := <-seen
	ec := s.ec
	if ec.User == nil || !ec.User.Authenticated || ec.User.Name != "agt_1:alice" {
		t.Fatalf("user = %+v; want authenticated agt_1:alice", ec.User)
	}
	if c := pacta2a.CallerOf(ec.User); c.GetIssuer() != "https://pa.example" || c.GetSubject() != "alice" {
		t.Errorf("CallerOf = %v", c)
	}
	if d := pacta2a.DelegationOf(ec.User); d.GetBrandUser() != "u9" || d.GetGrantId() != "a2agrant_1" {
		t.Errorf("DelegationOf = %v", d)
	}
	if b := pacta2a.BrandOf(ec.User); b != "acme" {
		t.Errorf("BrandOf = %q", b)
	}
	if turn, ok := pacta2a.TurnOf(ec); !ok || turn.Text != "hi\nthere" || turn.ContextID != "ctx-1" || !turn.NewContext || turn.BrandID != "acme" {
		t.Errorf("TurnOf = %+v, %v", turn, ok)
	}
	if ec.ContextID != "ctx-1" || ec.Message.ID != "m1" || ec.Metadata["k"] != "v" {
		t.Errorf("executor context: %q, message %+v, metadata %v", ec.ContextID, ec.Message, ec.Metadata)
	}
	for _, h := range []string{"Authorization", "X-A2A-User-Delegation", "Cookie"} {
		if v, found := ec.ServiceParams.Get(h); found {
			t.Errorf("the SDK saw the PA's %s: %v", h, v)
		}
	}
	if v, _ := ec.ServiceParams.Get("A2A-Version"); len(v) != 1 || v[0] != "1.0" {
		t.Errorf("A2A-Version = %v, want [1.0]", v)
	}
	if v, _ := ec.ServiceParams.Get("X-Request-Id"); len(v) != 1 || v[0] != "req-7" {
		t.Errorf("X-Request-Id = %v, want the PA's [req-7]", v)
	}
	if s.value != "from the request" {
		t.Errorf("the executor's context lost the request context's value: %v", s.value)
	}
	_, finishes := door.recorded()
	m, _ := decodeFinish(t, finishes[0])["message"].(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	if finishes[0].GetSdkAnswer().GetStatus() != 200 || m["role"] != "ROLE_AGENT" || fmt.Sprint(meta["pact.scopesUsed"]) != "[orders:read]" ||
		fmt.Sprint(meta["pact.actions"]) != "[map[args:map[n:1] tool:list_orders]]" {
		t.Fatalf("SDK answer %s", finishes[0].GetSdkAnswer().GetBody())
	}
}

// TestInterceptorRefusesCallsNotFromWrap: the SDK's own routes, reached
// without the frontend, answer a2a-go's UNAUTHENTICATED error and run
// nothing; the same server behind Wrap runs the turn (the control).
func TestInterceptorRefusesCallsNotFromWrap(t *testing.T) {
	var exec funcExecutor
	exec.set(yields(func(ec *a2asrv.ExecutorContext) (a2a.Event, error) {
		return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("ran")), nil
	}))
	direct := newFrontend(t, &fakeDoor{}, func(pacta2a.Config) (http.Handler, error) { return sdkServer(&exec), nil })
	body := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/a2a/acme/message:send", 401}, {"POST", "/a2a/acme/message:stream", 200},
		{"GET", "/a2a/acme/tasks", 401}, {"GET", "/a2a/acme/tasks/t1", 401}, {"POST", "/a2a/acme/tasks/t1:cancel", 401},
	} {
		res, got := rawRequest(t, direct, fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", c.method, c.path, len(body), body))
		if !strings.Contains(got, `"reason":"UNAUTHENTICATED"`) || res.StatusCode != c.status {
			t.Errorf("%s %s without the frontend: %d %s; want %d with a2a-go's UNAUTHENTICATED", c.method, c.path, res.StatusCode, got, c.status)
		}
	}
	if n := exec.runs.Load(); n != 0 {
		t.Fatalf("the executor ran %d times for calls that did not come through the frontend", n)
	}
	door := &fakeDoor{answer: aTurn(false)}
	fe := newFrontend(t, door, wrapped(sdkServer(&exec)))
	rawRequest(t, fe, "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	_, finishes := door.recorded()
	if m, _ := decodeFinish(t, finishes[0])["message"].(map[string]any); fmt.Sprint(m["parts"]) != "[map[text:ran]]" {
		t.Fatalf("through the frontend: %s", finishes[0].GetSdkAnswer().GetBody())
	}
}

// TestSDKFailuresFailTheTurn: the SDK's errors and step-ups go to pactd as
// the SDK answered them (pactd reads them); an executor that panics, or an
// answer past 1 MiB, is a failure of the turn.
func TestSDKFailuresFailTheTurn(t *testing.T) {
	cases := []struct {
		name    string
		f       func(ec *a2asrv.ExecutorContext) (a2a.Event, error)
		status  int32  // the SDK answer's status, or 0 for a failure
		failure string // in the failure's text
	}{
		{"answer/invalid-params", func(*a2asrv.ExecutorContext) (a2a.Event, error) {
			return nil, fmt.Errorf("say an order number: %w", a2a.ErrInvalidParams)
		}, 400, ""},
		{"answer/step-up", func(ec *a2asrv.ExecutorContext) (a2a.Event, error) {
			return pacta2a.StepUpTask(ec, "not here", "orders:read"), nil
		}, 200, ""},
		// a2a-go recovers its executor's panic and answers INTERNAL_ERROR,
		// which pactd takes for a failed turn.
		{"answer/executor-panic", func(*a2asrv.ExecutorContext) (a2a.Event, error) { panic("executor fell over") }, 500, ""},
		{"fail/too-large", func(ec *a2asrv.ExecutorContext) (a2a.Event, error) {
			return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(strings.Repeat("a", 1<<20))), nil
		}, 0, "larger than 1048576 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var exec funcExecutor
			exec.set(yields(c.f))
			door := &fakeDoor{answer: aTurn(false)}
			fe := newFrontend(t, door, wrapped(sdkServer(&exec)))
			rawRequest(t, fe, "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
			_, finishes := door.recorded()
			f := finishes[0]
			switch {
			case c.status != 0 && f.GetSdkAnswer().GetStatus() != c.status:
				t.Errorf("finish %v; want an SDK answer with status %d", f, c.status)
			case c.status == 0 && !strings.Contains(f.GetFailure(), c.failure):
				t.Errorf("finish %v; want a failure naming %q", f, c.failure)
			}
		})
	}
}

// TestSDKHandlerPanicFailsTheTurn: a panic in the SDK's handler itself
// (not its executor, which a2a-go recovers) fails the turn, and the
// frontend goes on serving.
func TestSDKHandlerPanicFailsTheTurn(t *testing.T) {
	door := &fakeDoor{answer: aTurn(false)}
	fe := newFrontend(t, door, wrapped(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("handler fell over") })))
	for range 2 {
		if res, body := rawRequest(t, fe, "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"); res.StatusCode != 200 || body != "finished" {
			t.Fatalf("answer %d %q", res.StatusCode, body)
		}
	}
	_, finishes := door.recorded()
	if len(finishes) != 2 || !strings.Contains(finishes[0].GetFailure(), "the A2A handler panicked: handler fell over") {
		t.Fatalf("finishes %v", finishes)
	}
}

func TestWrapNeedsAnSDKHandlerAndNoAgent(t *testing.T) {
	cfg := pacta2a.Config{PactdURL: "http://127.0.0.1:1", Token: "t"}
	if _, err := pacta2a.Wrap(cfg, nil); err == nil {
		t.Error("Wrap(nil handler) succeeded")
	}
	cfg.Agent = pacta2a.EchoAgent{}
	if _, err := pacta2a.Wrap(cfg, http.NotFoundHandler()); err == nil {
		t.Error("Wrap with an Agent succeeded; the SDK is the agent")
	}
	cfg.Agent = nil
	if _, err := pacta2a.Wrap(cfg, http.NotFoundHandler()); err != nil {
		t.Errorf("Wrap(valid) = %v", err)
	}
	cfg.Token = ""
	if _, err := pacta2a.Wrap(cfg, http.NotFoundHandler()); err == nil {
		t.Error("Wrap without a token succeeded")
	}
}

// TestReadersOfOtherUsers: CallerOf, DelegationOf, BrandOf and TurnOf give
// nothing for a user Interceptor did not make.
func TestReadersOfOtherUsers(t *testing.T) {
	for _, u := range []*a2asrv.User{nil, {Name: "x"}, a2asrv.NewAuthenticatedUser("x", nil),
		a2asrv.NewAuthenticatedUser("x", map[string]any{pacta2a.AttrCaller: "not a caller", pacta2a.AttrBrandID: 5}),
		{Name: "x", Authenticated: false, Attributes: map[string]any{pacta2a.AttrBrandID: "acme"}}} {
		if pacta2a.CallerOf(u) != nil || pacta2a.DelegationOf(u) != nil || pacta2a.BrandOf(u) != "" {
			t.Errorf("user %+v read as a PACT caller", u)
		}
		if _, ok := pacta2a.TurnOf(&a2asrv.ExecutorContext{User: u, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("x"))}); ok {
			t.Errorf("TurnOf(user %+v) is a turn", u)
		}
	}
}

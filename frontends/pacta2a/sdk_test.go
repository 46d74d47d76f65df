package pacta2a_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"pactd.dev/pactd/frontends/pacta2a"
	"pactd.dev/pactd/internal/a2aerr"
)

// agentExecutor is an a2a-go executor that runs a pacta2a.Agent, the way
// frontends/a2a-go-example runs the demo Brand: the turn from the SDK's
// user (TurnOf), a step-up Task or a Message with the receipt's metadata.
type agentExecutor struct{ agent pacta2a.Agent }

func (e agentExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		turn, ok := pacta2a.TurnOf(ec)
		if !ok {
			yield(nil, a2a.ErrUnauthenticated)
			return
		}
		r, err := e.agent.Reply(ctx, turn)
		switch {
		case err != nil:
			yield(nil, err)
		case len(r.NeedScopes) > 0:
			yield(pacta2a.StepUpTask(ec, r.Text, r.NeedScopes...), nil)
		default:
			msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(r.Text))
			for k, v := range r.Metadata {
				msg.SetMeta(k, v)
			}
			yield(pacta2a.WithReceipt(msg, r.ScopesUsed, r.Actions...), nil)
		}
	}
}

func (agentExecutor) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrTaskNotCancelable) }
}

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

// sdkServer is the A2A server a Provider already has: a2a-go's handler
// with PACT's interceptor, under /a2a/{tenant}.
func sdkServer(exec a2asrv.AgentExecutor, opts ...a2asrv.RequestHandlerOption) http.Handler {
	opts = append([]a2asrv.RequestHandlerOption{a2asrv.WithCallInterceptors(pacta2a.Interceptor()),
		a2asrv.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	return a2asrv.NewTenantRESTHandler("/a2a/{*}", a2asrv.NewHandler(exec, opts...))
}

// newSDKEnv is newEnv with pacta2a.Wrap in front of an a2a-go server.
func newSDKEnv(t *testing.T, exec a2asrv.AgentExecutor, tweak func(*pacta2a.Config), opts ...a2asrv.RequestHandlerOption) *env {
	t.Helper()
	return newEnvWith(t, func(cfg pacta2a.Config) (http.Handler, error) {
		cfg.Agent = nil
		if tweak != nil {
			tweak(&cfg)
		}
		return pacta2a.Wrap(cfg, sdkServer(exec, opts...))
	})
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// TestSDKAnswersAsTheStandaloneFrontend: the same turns, with the same
// Brand logic, get the same bytes from the standalone frontend and from
// Wrap in front of an a2a-go server running that logic as its executor:
// replies, retries, receipts (the hash of each action's arguments
// included), metadata passed on and pact.* dropped, step-ups and the
// no-delegation fallback. Only pactd's contextIds differ.
func TestSDKAnswersAsTheStandaloneFrontend(t *testing.T) {
	standalone := newEnv(t)
	viaSDK := newSDKEnvAgent(t) // its executor runs its own counting agent
	deleg := "X-A2A-User-Delegation: Bearer deleg-u1"
	type step struct {
		brand, body string
		headers     []string
	}
	msg := func(id, ctx, text, extra string) string {
		c := ""
		if ctx != "" {
			c = `,"contextId":"` + ctx + `"`
		}
		return `{"message":{"messageId":"` + id + `","role":"ROLE_USER","parts":[{"text":"` + text + `","metadata":{"p":1}}]` + c + extra + `}}`
	}
	run := func(e *env) []string {
		var out []string
		do := func(s step) response {
			r := e.do(t, "POST", "/a2a/"+s.brand+"/message:send", s.body, append([]string{good}, s.headers...)...)
			out = append(out, fmt.Sprintf("%d %s %s", r.status, r.header.Get("Content-Type"), uuidRE.ReplaceAllString(r.body, "<ctx>")))
			return r
		}
		first := decodeReply(t, do(step{"acme", msg("m1", "", "hello", ""), nil}))
		ctx := first.Message.ContextID
		for _, s := range []step{
			{"acme", msg("m2", ctx, "again", `,"metadata":{"k":"v"}`), []string{"Content-Type: text/plain", "A2A-Version: 2.0"}},
			{"acme", msg("m1", ctx, "hello", ""), nil}, // replayed
			{"acme", msg("m3", ctx, "act", ""), []string{deleg}},
			{"acme", msg("m3", ctx, "act", ""), []string{deleg}}, // replayed, receipt and all
			{"acme", msg("m4", ctx, "act", ""), nil},             // identity only: no receipt
			{"acme", msg("m5", ctx, "mine", ""), []string{deleg}},
			{"acme", msg("m6", ctx, "need orders:read", ""), nil},
			{"acme", msg("m6", ctx, "need orders:read", ""), nil}, // a step-up is not stored: it runs again
			{"beta", msg("m7", "", "need orders:read", ""), nil},  // no delegation: the fallback text
			{"acme", `{"message":{"messageId":"m8","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":"` + ctx + `"},"metadata":{"a":[1,2]},"configuration":{"blocking":true}}`, nil},
		} {
			do(s)
		}
		return out
	}
	want, got := run(standalone), run(viaSDK)
	if len(want) != len(got) {
		t.Fatalf("%d answers, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("answer %d:\n via the SDK %s\n standalone  %s", i, got[i], want[i])
		}
	}
	// The answers are what they should be, not merely equal: the receipt
	// names both actions, the second with the hash of its arguments' JSON
	// (sorted keys, no HTML escaping, the number as written), and only the
	// agent's own metadata is passed on. (The fake SignReceipt writes the
	// request's ReceiptAction protos as they are, hence args_hash.)
	wantAct := `{"message":{"messageId":"reply-3","contextId":"<ctx>","role":"ROLE_AGENT","parts":[{"text":"done <ok> & more"}],` +
		`"metadata":{"nested":{"a":["x"]},"pact.receipt":{"claims":{"actions":[{"tool":"list_orders"},{"tool":"cancel_order","args_hash":"` +
		argsHash(`{"big":12345678901234567890,"list":[1.5,true,null],"note":"<b>&","orderId":"1002"}`) +
		`"}],"grantId":"a2agrant_1","pa":"https://pa.example","scopesUsed":["orders:read","orders:cancel"],"user":"u1"},"jws":"h.p.s"},"trace":"t-1"}}}`
	if got[3] != "200 application/a2a+json "+wantAct {
		t.Errorf("delegated act:\n got %s\nwant 200 application/a2a+json %s", got[3], wantAct)
	}
	if runs := viaSDK.agent.runs.Load(); runs != 9 || standalone.agent.runs.Load() != 9 {
		t.Errorf("agent runs: via the SDK %d, standalone %d; want 9 each (replays do not run it)", runs, standalone.agent.runs.Load())
	}
}

// newSDKEnvAgent is an SDK env whose executor runs the env's own counting
// agent, so runs are counted as in newEnv.
func newSDKEnvAgent(t *testing.T) *env {
	t.Helper()
	var e *env
	var exec agentExecutorRef
	e = newSDKEnv(t, &exec, nil)
	exec.agent.Store(e.agent)
	return e
}

// agentExecutorRef is agentExecutor for an agent known only after the env
// is built.
type agentExecutorRef struct{ agent atomic.Pointer[countingAgent] }

func (r *agentExecutorRef) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return agentExecutor{r.agent.Load()}.Execute(ctx, ec)
}

func (r *agentExecutorRef) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return agentExecutor{r.agent.Load()}.Cancel(ctx, ec)
}

// TestSDKExecutorSeesTheCaller: the executor learns the verified caller
// and grant through a2a-go's own types (ExecutorContext.User), gets the
// PA's message with pactd's contextId and the request's metadata, sees
// none of the PA's credentials among the service parameters, and runs in
// a context that keeps the request context's values (a2a-go's local mode
// detaches it with context.WithoutCancel).
func TestSDKExecutorSeesTheCaller(t *testing.T) {
	type seenCtx struct {
		ec    *a2asrv.ExecutorContext
		value any
	}
	seen := make(chan seenCtx, 4)
	var exec funcExecutor
	exec.set(func(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
		seen <- seenCtx{ec, ctx.Value(testKey{})}
		return func(yield func(a2a.Event, error) bool) {
			yield(a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("ok")), nil)
		}
	})
	e := newEnvWith(t, func(cfg pacta2a.Config) (http.Handler, error) {
		cfg.Agent = nil
		h, err := pacta2a.Wrap(cfg, sdkServer(&exec))
		// A value a Provider's own middleware puts in the request context.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), testKey{}, "from the request")))
		}), err
	})
	body := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"},{"text":"there"}],"extensions":["urn:x"]},"metadata":{"k":"v"}}`
	r := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", body, good, "X-Request-Id: req-7", "Cookie: session=secret", "A2A-Version: 2.0"))
	s := <-seen
	ec := s.ec
	if ec.User == nil || !ec.User.Authenticated || ec.User.Name != "agt_1:alice" {
		t.Fatalf("user = %+v; want authenticated agt_1:alice", ec.User)
	}
	if c := pacta2a.CallerOf(ec.User); c.GetIssuer() != "https://pa.example" || c.GetSubject() != "alice" || c.GetAgentId() != "agt_1" {
		t.Errorf("CallerOf = %v", c)
	}
	if d := pacta2a.DelegationOf(ec.User); d != nil {
		t.Errorf("identity-only turn: DelegationOf = %v, want nil", d)
	}
	if b := pacta2a.BrandOf(ec.User); b != "acme" {
		t.Errorf("BrandOf = %q", b)
	}
	turn, ok := pacta2a.TurnOf(ec)
	if !ok || turn.Text != "hi\nthere" || turn.ContextID != r.Message.ContextID || !turn.NewContext || turn.BrandID != "acme" {
		t.Errorf("TurnOf = %+v, %v", turn, ok)
	}
	if ec.ContextID != r.Message.ContextID || ec.Message.ContextID != r.Message.ContextID || ec.Message.ID != "m1" ||
		len(ec.Message.Extensions) != 1 || ec.Metadata["k"] != "v" {
		t.Errorf("executor context: contextId %q/%q (pactd's %q), message %+v, metadata %v", ec.ContextID, ec.Message.ContextID, r.Message.ContextID, ec.Message, ec.Metadata)
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

	// The next turn of the conversation, delegated.
	next := `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"more"}],"contextId":"` + r.Message.ContextID + `"}}`
	decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", next, good, "X-A2A-User-Delegation: Bearer deleg-u9"))
	ec = (<-seen).ec
	if d := pacta2a.DelegationOf(ec.User); d.GetBrandUser() != "u9" || d.GetGrantId() != "a2agrant_1" {
		t.Errorf("DelegationOf = %v", d)
	}
	if turn, _ := pacta2a.TurnOf(ec); turn.NewContext || turn.Delegation.GetBrandUser() != "u9" {
		t.Errorf("second turn = %+v", turn)
	}
}

type testKey struct{}

// TestInterceptorRefusesCallsNotFromWrap: the SDK's own routes, reached
// without the frontend, answer a2a-go's UNAUTHENTICATED error and run
// nothing; the same server behind Wrap runs the turn (the control).
func TestInterceptorRefusesCallsNotFromWrap(t *testing.T) {
	var exec funcExecutor
	exec.set(func(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
		return func(yield func(a2a.Event, error) bool) {
			yield(a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("ran")), nil)
		}
	})
	e := newEnvWith(t, func(cfg pacta2a.Config) (http.Handler, error) {
		cfg.Agent = nil
		direct := sdkServer(&exec)
		fe, err := pacta2a.Wrap(cfg, direct)
		mux := http.NewServeMux()
		mux.Handle("/a2a/", fe)
		mux.Handle("/direct/", http.StripPrefix("/direct", direct)) // as if mounted without PACT
		return mux, err
	})
	body := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	// Each route has one answer: 401, except the stream, which a2a-go opens
	// (200, text/event-stream) before it sends the error as its one event.
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/direct/a2a/acme/message:send", 401}, {"POST", "/direct/a2a/acme/message:stream", 200},
		{"GET", "/direct/a2a/acme/tasks", 401}, {"GET", "/direct/a2a/acme/tasks/t1", 401}, {"POST", "/direct/a2a/acme/tasks/t1:cancel", 401},
	} {
		r := e.do(t, c.method, c.path, body, good)
		if !strings.Contains(r.body, `"reason":"UNAUTHENTICATED"`) || r.status != c.status ||
			(c.status == 200 && (!strings.HasPrefix(r.body, "id: ") || !strings.Contains(r.body, "\ndata: {\"error\":{\"code\":401,"))) {
			t.Errorf("%s %s without the frontend: %d %s; want %d with a2a-go's UNAUTHENTICATED", c.method, c.path, r.status, r.body, c.status)
		}
	}
	if n := exec.runs.Load(); n != 0 {
		t.Fatalf("the executor ran %d times for calls that did not come through the frontend", n)
	}
	if got := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", body, good)); got.Message.Parts[0].Text != "ran" {
		t.Fatalf("through the frontend: %+v", got)
	}
}

// TestSDKFailuresFailTheTurn: an SDK answer that is not a PACT answer
// fails the turn with INTERNAL (logged once with its cause) and releases
// the messageId, so the same message succeeds once the agent answers
// properly; an SDK error PACT defines is sent with its reason and the
// SDK's message.
func TestSDKFailuresFailTheTurn(t *testing.T) {
	msgOf := func(ec *a2asrv.ExecutorContext, parts ...*a2a.Part) *a2a.Message {
		return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, parts...)
	}
	yields := func(ev a2a.Event, err error) func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
		return func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(yield func(a2a.Event, error) bool) { yield(ev, err) }
		}
	}
	with := func(f func(ec *a2asrv.ExecutorContext) a2a.Event) func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
		return func(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(yield func(a2a.Event, error) bool) { yield(f(ec), nil) }
		}
	}
	internal := errBody(a2aerr.Internal, "Internal error")
	cases := []struct {
		name   string
		f      func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error]
		status int
		body   string
		cause  string // in the log line
	}{
		{"fail/data-part", with(func(ec *a2asrv.ExecutorContext) a2a.Event {
			return msgOf(ec, a2a.NewTextPart("x"), a2a.NewDataPart(map[string]any{"a": 1}))
		}), 500, internal, "PACT replies carry text only"},
		{"fail/no-parts", with(func(ec *a2asrv.ExecutorContext) a2a.Event { return msgOf(ec) }), 500, internal, "has no parts"},
		{"fail/user-role", with(func(ec *a2asrv.ExecutorContext) a2a.Event {
			return a2a.NewMessageForTask(a2a.MessageRoleUser, ec, a2a.NewTextPart("x"))
		}), 500, internal, "not ROLE_AGENT"},
		{"fail/bad-scopes-used", with(func(ec *a2asrv.ExecutorContext) a2a.Event {
			m := msgOf(ec, a2a.NewTextPart("x"))
			m.SetMeta("pact.scopesUsed", "orders:read")
			return m
		}), 500, internal, "pact.scopesUsed must be an array"},
		{"fail/action-without-tool", with(func(ec *a2asrv.ExecutorContext) a2a.Event {
			m := msgOf(ec, a2a.NewTextPart("x"))
			m.SetMeta("pact.actions", []any{map[string]any{"args": 1}})
			return m
		}), 500, internal, "each action needs a tool"},
		{"fail/completed-task", with(func(ec *a2asrv.ExecutorContext) a2a.Event {
			return &a2a.Task{ID: ec.TaskID, ContextID: ec.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
		}), 500, internal, "TASK_STATE_COMPLETED"},
		{"fail/auth-required-without-scopes", with(func(ec *a2asrv.ExecutorContext) a2a.Event {
			return pacta2a.StepUpTask(ec, "x")
		}), 500, internal, "has no pact.missingScopes"},
		{"fail/executor-error", yields(nil, errors.New("database down")), 500, internal, "database down"},
		{"fail/executor-panic", func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(func(a2a.Event, error) bool) { panic("executor fell over") }
		}, 500, internal, "executor fell over"},
		{"fail/too-large", with(func(ec *a2asrv.ExecutorContext) a2a.Event {
			return msgOf(ec, a2a.NewTextPart(strings.Repeat("a", 1<<20)))
		}), 500, internal, "larger than 1048576 bytes"},
		{"fail/silent-executor", func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(func(a2a.Event, error) bool) {}
		}, 500, internal, "answered 504"},
		{"refused/content-type", yields(nil, fmt.Errorf("no images here: %w", a2a.ErrUnsupportedContentType)), 400,
			errBody(a2aerr.ContentTypeNotSupported, "no images here: incompatible content types"), ""},
		{"refused/invalid-params", yields(nil, fmt.Errorf("say an order number: %w", a2a.ErrInvalidParams)), 400,
			errBody(a2aerr.InvalidParams, "say an order number: invalid params"), ""},
		{"refused/unsupported-operation", yields(nil, a2a.ErrUnsupportedOperation), 400,
			errBody(a2aerr.UnsupportedOperation, "this operation is not supported"), ""},
	}
	var exec funcExecutor
	e := newSDKEnv(t, &exec, func(cfg *pacta2a.Config) { cfg.TurnTimeout = 2 * time.Second })
	fine := with(func(ec *a2asrv.ExecutorContext) a2a.Event { return msgOf(ec, a2a.NewTextPart("fine")) })
	exec.set(fine)
	ctxID := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`, good)).Message.ContextID
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":%q}}`, i, ctxID)
			before := e.log.String()
			exec.set(c.f)
			wantA2A(t, c.name, e.do(t, "POST", "/a2a/acme/message:send", body, good), c.status, c.body)
			logged := strings.TrimPrefix(e.log.String(), before)
			lines := strings.Count(logged, "\n")
			switch {
			case c.cause != "" && (lines != 1 || !strings.Contains(logged, `"msg":"run turn"`) || !strings.Contains(logged, c.cause)):
				t.Errorf("want one log line with the cause %q; got:\n%s", c.cause, logged)
			case c.cause == "" && lines != 0:
				t.Errorf("a refusal was logged: %s", logged)
			}
			// The messageId was released: the same message runs again.
			exec.set(fine)
			if ok := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", body, good)); ok.Message.Parts[0].Text != "fine" {
				t.Fatalf("retry = %+v", ok)
			}
		})
	}
}

// TestSDKStepUpAndMessageInTheTaskStore: a Message answer leaves no task in
// a2a-go's task store (the SDK returns it as it is); a step-up Task is
// written there (a2a-go stores every task), while the PA gets pactd's task,
// which tasks/{id} does not find. With pacta2a.TaskStore the SDK's copy is
// forgotten after its ttl, so step-ups do not pile up as they do in
// a2a-go's default in-memory store.
func TestSDKStepUpAndMessageInTheTaskStore(t *testing.T) {
	const ttl = 50 * time.Millisecond
	ts := pacta2a.NewTaskStore(ttl, 0)
	store := &countingStore{Store: ts}
	var exec agentExecutorRef
	e := newSDKEnv(t, &exec, nil, a2asrv.WithTaskStore(store))
	exec.agent.Store(e.agent)
	decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, good))
	if n := store.creates.Load(); n != 0 {
		t.Fatalf("a Message answer created %d tasks in the SDK's store", n)
	}
	stepUp := func(id string) {
		t.Helper()
		r := e.do(t, "POST", "/a2a/acme/message:send", `{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"text":"need orders:read"}]}}`, good)
		if r.status != 200 || !strings.Contains(r.body, `"TASK_STATE_AUTH_REQUIRED"`) {
			t.Fatalf("step-up = %d %s", r.status, r.body)
		}
	}
	stepUp("m2")
	if n := store.creates.Load(); n != 1 || ts.Len() != 1 {
		t.Fatalf("a step-up created %d tasks in the SDK's store (holding %d), want 1", n, ts.Len())
	}
	wantA2A(t, "pactd's step-up task", e.do(t, "GET", "/a2a/acme/tasks/t-1", "", good), 404, errBody(a2aerr.TaskNotFound, "Task not found: t-1"))
	time.Sleep(2 * ttl)
	stepUp("m3")
	if n := store.creates.Load(); n != 2 || ts.Len() != 1 {
		t.Fatalf("after the first task's ttl: %d created, %d held; want 2 created, 1 held", n, ts.Len())
	}
}

type countingStore struct {
	taskstore.Store
	creates atomic.Int32
}

func (s *countingStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	s.creates.Add(1)
	return s.Store.Create(ctx, task)
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

// argsHash is a receipt action's argsHash: base64url SHA-256 (PACT §5.6).
func argsHash(canonicalJSON string) string {
	sum := sha256.Sum256([]byte(canonicalJSON))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

package frontdoor_test

import (
	"context"
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

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
)

// These tests put a real A2A SDK (a2a-go's HTTP+JSON handler) behind the
// test frontend, so the answers FinishTurn reads are the bytes an SDK
// writes, not only the hand-written ones of sdkanswer_test.go.

// agentExecutor is an a2a-go executor that runs the env's counting agent
// on the turn the frontend put in the request context, answering as a
// Brand's executor does: a step-up Task (state AUTH_REQUIRED,
// pact.missingScopes) or a Message with pact.scopesUsed, pact.actions and
// its own metadata.
type agentExecutor struct{ agent *countingAgent }

func (x agentExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		turn, ok := ctx.Value(turnKey{}).(*pactv1.Turn)
		if !ok {
			yield(nil, a2a.ErrUnauthenticated)
			return
		}
		r, err := x.agent.reply(turn)
		switch {
		case err != nil:
			yield(nil, err)
		case len(r.NeedScopes) > 0:
			need := make([]any, 0, len(r.NeedScopes))
			for _, s := range r.NeedScopes {
				need = append(need, s)
			}
			yield(&a2a.Task{ID: ec.TaskID, ContextID: ec.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateAuthRequired,
				Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(r.Text))},
				Metadata: map[string]any{"pact.missingScopes": need}}, nil)
		default:
			msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(r.Text))
			for k, v := range r.Metadata {
				msg.SetMeta(k, v)
			}
			used := make([]any, 0, len(r.ScopesUsed))
			for _, s := range r.ScopesUsed {
				used = append(used, s)
			}
			acts := make([]any, 0, len(r.Actions))
			for _, a := range r.Actions {
				act := map[string]any{"tool": a.Tool}
				if a.Args != nil {
					act["args"] = a.Args
				}
				acts = append(acts, act)
			}
			msg.SetMeta("pact.scopesUsed", used)
			msg.SetMeta("pact.actions", acts)
			yield(msg, nil)
		}
	}
}

func (agentExecutor) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrTaskNotCancelable) }
}

// funcExecutor answers with whatever its function (swappable) yields.
type funcExecutor struct {
	f atomic.Pointer[func(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error]]
}

func (x *funcExecutor) set(f func(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error]) {
	x.f.Store(&f)
}

func (x *funcExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return (*x.f.Load())(ctx, ec)
}

func (*funcExecutor) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrTaskNotCancelable) }
}

// sdkServer is a2a-go's HTTP+JSON handler under /a2a/{tenant}.
func sdkServer(exec a2asrv.AgentExecutor) http.Handler {
	return a2asrv.NewTenantRESTHandler("/a2a/{*}", a2asrv.NewHandler(exec, a2asrv.WithLogger(slog.New(slog.DiscardHandler))))
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// TestSDKAnswersAsTheStandaloneFrontend: the same turns, with the same
// Brand logic, get the same bytes from a frontend that runs the agent
// itself and from one that hands the turn to an a2a-go server running
// that logic as its executor: replies, retries, receipts (each action's
// arguments included), metadata passed on and "pact." keys dropped,
// step-ups and the no-delegation fallback. Only the contextIds differ.
func TestSDKAnswersAsTheStandaloneFrontend(t *testing.T) {
	standalone := newEnv(t)
	viaSDK := newEnv(t, func(o *options) { o.sdk = func(e *env) http.Handler { return sdkServer(agentExecutor{e.agent}) } })
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
	// names both actions, the second with its arguments' JSON; only the
	// agent's own metadata is passed on.
	wantAct := `{"message":{"messageId":"reply-3","contextId":"<ctx>","role":"ROLE_AGENT","parts":[{"text":"done <ok> & more"}],` +
		`"metadata":{"nested":{"a":["x"]},"pact.receipt":{"claims":{"actions":[{"tool":"list_orders"},{"tool":"cancel_order","args_json":` +
		`"{\"big\":12345678901234567890,\"list\":[1.5,true,null],\"note\":\"\\u003cb\\u003e\\u0026\",\"orderId\":\"1002\"}"}],` +
		`"grantId":"a2agrant_1","pa":"https://pa.example","scopesUsed":["orders:read","orders:cancel"],"user":"u1"},"jws":"h.p.s"},"trace":"t-1"}}}`
	if got[3] != "200 application/a2a+json "+wantAct {
		t.Errorf("delegated act:\n got %s\nwant 200 application/a2a+json %s", got[3], wantAct)
	}
	if runs := viaSDK.agent.runs.Load(); runs != 9 || standalone.agent.runs.Load() != 9 {
		t.Errorf("agent runs: via the SDK %d, standalone %d; want 9 each (replays do not run it)", runs, standalone.agent.runs.Load())
	}
}

// TestSDKFailuresFailTheTurn: what a2a-go answers when its executor gives
// no PACT answer fails the turn with INTERNAL (logged once by pactd with
// its cause) and releases the messageId, so the same message succeeds
// once the executor answers properly; an SDK error PACT defines is sent
// with its reason and the SDK's message.
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
		cause  string // in pactd's log line
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
			return &a2a.Task{ID: ec.TaskID, ContextID: ec.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateAuthRequired}}
		}), 500, internal, "has no pact.missingScopes"},
		{"fail/executor-error", yields(nil, errors.New("database down")), 500, internal, "the SDK answered 500"},
		{"fail/executor-panic", func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(func(a2a.Event, error) bool) { panic("executor fell over") }
		}, 500, internal, "the SDK answered 500"},
		{"fail/too-large", with(func(ec *a2asrv.ExecutorContext) a2a.Event {
			return msgOf(ec, a2a.NewTextPart(strings.Repeat("a", 1<<20)))
		}), 500, internal, "larger than 1048576 bytes"},
		{"fail/silent-executor", func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(func(a2a.Event, error) bool) {}
		}, 500, internal, "the SDK answered"},
		{"refused/content-type", yields(nil, fmt.Errorf("no images here: %w", a2a.ErrUnsupportedContentType)), 400,
			errBody(a2aerr.ContentTypeNotSupported, "no images here: incompatible content types"), ""},
		{"refused/invalid-params", yields(nil, fmt.Errorf("say an order number: %w", a2a.ErrInvalidParams)), 400,
			errBody(a2aerr.InvalidParams, "say an order number: invalid params"), ""},
		{"refused/unsupported-operation", yields(nil, a2a.ErrUnsupportedOperation), 400,
			errBody(a2aerr.UnsupportedOperation, "this operation is not supported"), ""},
	}
	var exec funcExecutor
	e := newEnv(t, func(o *options) {
		o.turnTimeout = time.Second
		o.sdk = func(*env) http.Handler { return sdkServer(&exec) }
	})
	fine := with(func(ec *a2asrv.ExecutorContext) a2a.Event { return msgOf(ec, a2a.NewTextPart("fine")) })
	exec.set(fine)
	ctxID := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", sendBody("m", "", "x"), good)).Message.ContextID
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := sendBody(fmt.Sprintf("m%d", i), ctxID, "x")
			mark := len(e.log.String())
			exec.set(c.f)
			wantA2A(t, c.name, e.do(t, "POST", "/a2a/acme/message:send", body, good), c.status, c.body)
			logged := e.logEntries(t, mark)
			switch {
			case c.cause != "" && (len(logged) != 1 || logged[0]["msg"] != "run turn" || !strings.Contains(fmt.Sprint(logged[0]["error"]), c.cause)):
				t.Errorf("want one log line with the cause %q; got %v", c.cause, logged)
			case c.cause == "" && len(logged) != 0:
				t.Errorf("a refusal was logged: %v", logged)
			}
			// The messageId was released: the same message runs again.
			exec.set(fine)
			if ok := decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", body, good)); ok.Message.Parts[0].Text != "fine" {
				t.Fatalf("retry = %+v", ok)
			}
		})
	}
}

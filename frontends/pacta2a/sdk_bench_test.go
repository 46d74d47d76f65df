package pacta2a

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

type echoExecutor struct{}

func (echoExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t, _ := TurnOf(ec)
		msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("You said: "+t.Text))
		yield(WithReceipt(msg, []string{"orders:read"}, Action{Tool: "list_orders"}), nil)
	}
}

func (echoExecutor) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrTaskNotCancelable) }
}

// BenchmarkAgentTurn is what a turn costs the frontend beside pactd's
// RPCs: the standalone Agent call, and the same turn through Wrap's bridge
// to an a2a-go server (the normalized request, a2a-go's handler, executor
// and task machinery in local mode, the answer read back).
func BenchmarkAgentTurn(b *testing.B) {
	m, bad := parseSend([]byte(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"show my orders"}]}}`))
	if bad != nil {
		b.Fatal(bad.message)
	}
	turn := Turn{BrandID: "acme", ContextID: "3f1d1c1e-0000-4000-8000-000000000001", Text: m.text,
		Caller:     &pactv1.Caller{AgentId: "agt_1", Issuer: "https://pa.example", Subject: "alice"},
		Delegation: &pactv1.DelegationInfo{GrantId: "g", BrandUser: "alice", Scopes: []string{"orders:read"}},
		message:    m.message, metadata: json.RawMessage(nil)}
	b.Run("standalone", func(b *testing.B) {
		for b.Loop() {
			if _, err := (EchoAgent{}).Reply(b.Context(), turn); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("a2a-go", func(b *testing.B) {
		next := a2asrv.NewTenantRESTHandler("/a2a/{*}", a2asrv.NewHandler(echoExecutor{},
			a2asrv.WithCallInterceptors(Interceptor()), a2asrv.WithLogger(slog.New(slog.DiscardHandler))))
		agent := &sdkAgent{next: next}
		for b.Loop() {
			r, err := agent.Reply(b.Context(), turn)
			if err != nil || len(r.ScopesUsed) != 1 {
				b.Fatal(r, err)
			}
		}
	})
}

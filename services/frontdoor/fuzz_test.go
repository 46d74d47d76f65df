package frontdoor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/server/oauthhttp"
	"pactd.dev/pactd/services/brand"
	"pactd.dev/pactd/services/frontdoor"
)

// The fuzz targets call the Service in process, over the real Brand
// service on SQLite and fakes elsewhere; turns go to memTurns, which
// runs every turn in one conversation, so a handle can be finished again
// and again.

// memTurns is a Conversation service that runs every turn and counts
// what FinishTurn does with it.
type memTurns struct{ completed, abandoned atomic.Int32 }

const fuzzContext = "0b7d9a3e-5c1f-4e2a-9d8b-6f4a2c1e3b5d"

func (m *memTurns) BeginTurn(_ context.Context, req *pactv1.BeginTurnRequest) (*pactv1.BeginTurnResponse, error) {
	return &pactv1.BeginTurnResponse{Outcome: pactv1.TurnOutcome_TURN_OUTCOME_RUN, ContextId: fuzzContext, ContextCreated: req.GetContextId() == ""}, nil
}

func (m *memTurns) CompleteTurn(context.Context, *pactv1.CompleteTurnRequest) (*pactv1.CompleteTurnResponse, error) {
	m.completed.Add(1)
	return &pactv1.CompleteTurnResponse{}, nil
}

func (m *memTurns) AbandonTurn(context.Context, *pactv1.AbandonTurnRequest) (*pactv1.AbandonTurnResponse, error) {
	m.abandoned.Add(1)
	return &pactv1.AbandonTurnResponse{}, nil
}

// panicLog is a slog handler that keeps the front door's panics; the
// Service recovers a handler's panic, so a fuzz target looks here.
type panicLog struct {
	mu     sync.Mutex
	panics []string
}

func (*panicLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *panicLog) WithAttrs([]slog.Attr) slog.Handler     { return l }
func (l *panicLog) WithGroup(string) slog.Handler          { return l }

func (l *panicLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "front door panic" {
		var b strings.Builder
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, "%s=%v\n", a.Key, a.Value)
			return true
		})
		l.mu.Lock()
		l.panics = append(l.panics, b.String())
		l.mu.Unlock()
	}
	return nil
}

func (l *panicLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.panics
	l.panics = nil
	return p
}

// fuzzService is the Service the fuzz targets call.
type fuzzService struct {
	svc      *frontdoor.Service
	turns    *memTurns
	deleg    *fakeDelegation
	receipts *fakeReceipts
	log      *panicLog
}

func newFuzzService(tb testing.TB) *fuzzService {
	tb.Helper()
	store := dbtest.Open(tb, "", tb.TempDir())
	now := time.Unix(1_800_000_000, 0)
	for _, b := range []db.Brand{
		{ID: "acme", DisplayName: "ACME"},
		{ID: "beta", DisplayName: "BETA"},
		{ID: "shop", DisplayName: "Shop", Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See your orders"}},
			LoginURL: "https://shop.example", LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND.String()}},
		{ID: "mart", DisplayName: "Mart", Delegation: db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See your orders"}},
			LoginURL: "https://mart.example", LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION.String()}},
	} {
		b.CreateTime, b.UpdateTime = now, now
		if _, err := store.CreateBrand(tb.Context(), b); err != nil {
			tb.Fatal(err)
		}
	}
	fs := &fuzzService{turns: &memTurns{}, deleg: &fakeDelegation{now: func() time.Time { return now }}, receipts: &fakeReceipts{}, log: &panicLog{}}
	fs.deleg.grants = []*pactv1.Grant{grant("g2", "agt_1", now, []string{"orders:read"}), grant("g1", "agt_1", now.Add(-time.Hour), []string{"orders:read"})}
	oauth := &fakeOAuth{}
	oauthMux := http.NewServeMux()
	oauthhttp.New(oauth, oauth, nil).Register(oauthMux)
	svc, err := frontdoor.New(frontdoor.Deps{
		Verify: &fakeVerifier{}, Brands: brand.New(brand.Deps{Store: store, PublicURL: "https://provider.example"}), Turns: fs.turns,
		Delegation: fs.deleg, Receipts: fs.receipts, Registration: &fakeRegistration{res: &pactv1.SelfRegisterAgentResponse{}},
		OAuth: oauthMux, Secret: secret, PublicURL: "https://provider.example", Now: func() time.Time { return now },
		NewMessageID: func() string { return "reply-1" }, Logger: slog.New(fs.log),
	})
	if err != nil {
		tb.Fatal(err)
	}
	fs.svc = svc
	return fs
}

// handle is a turn handle the Service issued.
func (fs *fuzzService) handle(tb testing.TB, brand, user string) string {
	tb.Helper()
	res, err := fs.svc.Serve(tb.Context(), sendRequest(brand, "m1", "", "hi", user))
	if err != nil || res.GetTurn() == nil {
		tb.Fatalf("no turn: %v %v", res, err)
	}
	return res.GetTurn().GetHandle()
}

// checkResponse holds what every HTTP answer of the front door must be: a
// status a frontend can write, header fields it can send without
// splitting the response, and, when the request was valid UTF-8, a
// message that survives the wire.
func checkResponse(t *testing.T, res *pactv1.HttpResponse, utf8Input bool) {
	t.Helper()
	if res.GetStatus() < 200 || res.GetStatus() > 599 {
		t.Fatalf("status %d", res.GetStatus())
	}
	for _, h := range res.GetHeaders() {
		if h.GetName() == "" || strings.ContainsAny(h.GetName(), " \t\r\n:\x00") || strings.ContainsAny(h.GetValue(), "\r\n\x00") {
			t.Fatalf("header %q: %q", h.GetName(), h.GetValue())
		}
	}
	if utf8Input {
		if _, err := proto.Marshal(res); err != nil {
			t.Fatalf("the answer cannot be sent: %v", err)
		}
	}
}

// FuzzServe: whatever a frontend forwards (method, path, query, header
// fields as "Name: value" lines, body, the sign-in fields), Serve answers
// with exactly one outcome or refuses it with InvalidArgument naming the
// field, and no handler panics. A response has a writable status and
// header fields, and survives the wire when the request did; only a
// verified POST makes a turn; only a signed-in page of a frontend that
// signs Users in, asked without brand_user or sign_in_url, asks for the
// User, with return_to the path and query as received.
func FuzzServe(f *testing.F) {
	type seed struct {
		method, path, query, headers string
		body                         string
		brandUser, signInURL         string
		signsIn, tooLarge            bool
	}
	const auth = "Host: fe.example\nAuthorization: Bearer good-alice"
	seeds := []seed{
		{"GET", "/", "", "Accept: text/html", "", "", "", false, false},
		{"POST", "/api/platforms", "", "Authorization: Bearer tok", `{"name":"x","jwksUri":"https://x"}`, "", "", false, false},
		{"POST", "/api/platforms", "", "Authorization: Bearer tok", "", "", "", false, true},
		{"GET", "/a2a/acme/tasks", "pageSize=5", auth, "", "", "", false, false},
		{"POST", "/a2a/shop/oauth/token", "", auth + "\nContent-Type: application/x-www-form-urlencoded", "grant_type=x", "", "", false, false},
		{"POST", "/a2a/shop/oauth/token", "", auth + "\nContent-Type: application/x-www-form-urlencoded", "", "", "", false, true},
		{"GET", "/a2a/shop/oauth/.well-known/oauth-authorization-server", "", "", "", "", "", false, false},
		{"GET", "/a2a/shop/oauth/connected", "status=revoked&agent_id=agt_1", "Accept: text/html", "", "alice", "", true, false},
		{"GET", "/a2a/shop/oauth/connected", "", "", "", "", "", true, false},
		{"GET", "/a2a/shop/oauth/connected", "", "", "", "", "/login?x=1", true, false},
		{"GET", "/a2a/shop/oauth/connected/revoke", "agent_id=agt_1", "", "", "alice", "", true, false},
		{"POST", "/a2a/shop/oauth/connected/revoke", "", "Content-Type: application/x-www-form-urlencoded", "agent_id=agt_1&csrf=x", "alice", "", true, false},
		{"GET", "/a2a/shop/oauth/consent", "user_code=" + pendingCode, "", "", "alice", "", true, false},
		{"GET", "/a2a/shop/oauth/consent", "step_up=t-1", "", "", "alice", "", true, false},
		{"POST", "/a2a/shop/oauth/consent/decision", "", "Content-Type: application/x-www-form-urlencoded",
			"decision=allow&user_code=" + pendingCode + "&csrf=x", "alice", "", true, false},
		{"POST", "/a2a/shop/oauth/consent/decision", "", "Sec-Fetch-Site: cross-site", "", "", "/login", true, true},
		{"GET", "/a2a/mart/oauth/consent", "user_code=" + pendingCode, "", "", "", "", false, false},
		{"GET", "/a2a/mart/oauth/connected", "status=approved&scope=orders%3Aread", "", "", "", "", false, false},
		{"POST", "/a2a/mart/oauth/connected", "", "Content-Type: application/x-www-form-urlencoded", "assertion=%FF%FE%0D%0A&session=%zz", "", "", false, false},
		{"GET", "/a2a/%FF/.well-known/agent-card.json", "", "Accept: text/html", "", "", "", false, false},
		{"POST", "/a2a/%FF/message:send", "", auth, "{}", "", "", false, false},
		{"GET", "/a2a/nope%3Cb%3E/oauth/consent", "", "Accept: text/html", "", "", "", false, false},
		{"POST", "/a2a/acme/message:send", "", auth, "", "", "", false, true},
		{"POST", "/a2a/acme/message:send", "", auth + "\nX-A2A-User-Delegation: Bearer deleg-u1", sendBody("m1", "", "hi"), "", "", false, false},
		{"GET", "/a2a/acme/message:send", "", "Authorization: Bearer busy", "", "", "", false, false},
		{"M-SEARCH", "/a2a/acme/tasks/t1", "", "", "", "", "", false, false},
		{"POST", "/a2a/acme/message:send", "", auth, strings.Replace(sendBody("m1", "", "hi @"), "@", "\xff", 1), "", "", false, false},
	}
	// Route seeds, by GET and POST: escapes, empty and dot segments, the OAuth subtree.
	for _, p := range []string{
		"/a2a/acme/message:send", "/a2a/acme/message%3Asend", "/a2a/acme/tasks/x%3acancel", "/a2a/acme/tasks/x/pushNotificationConfigs/c",
		"/a2a/acme/.well-known/agent-card.json", "/a2a//x", "/a2a/acme/tasks/", "/a2a/a%2Fb/tasks", "/a2a/acme/%zz",
		"/a2a/acme/oauth/token", "/a2a/acme/oauth/../token", "/a2a/acme/oauth/.well-known/oauth-authorization-server",
		"/a2a/acme/oauth/consent/decision", "/a2a/acme/oauth/%2e%2e/message:send",
	} {
		seeds = append(seeds, seed{"GET", p, "", auth, "", "", "", false, false}, seed{"POST", p, "", auth, "{}", "", "", false, false})
	}
	// message:send seeds in the order of its checks.
	for _, b := range []string{
		`{`, ``, `[]`, `{"message":null}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":""},{"raw":"aGVsbG8="}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}],"taskId":"t"}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"text","text":"x"}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":" "}],"contextId":"c"}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":null}],"metadata":[]}}`,
	} {
		seeds = append(seeds, seed{"POST", "/a2a/acme/message:send", "", auth, b, "", "", false, false})
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.headers, []byte(s.body), s.brandUser, s.signInURL, s.signsIn, s.tooLarge)
	}
	fs := newFuzzService(f)
	f.Fuzz(func(t *testing.T, method, path, query, headers string, body []byte, brandUser, signInURL string, signsIn, tooLarge bool) {
		req := &pactv1.ServeRequest{Method: method, Path: path, Query: query, Body: body, BrandUser: brandUser, SignInUrl: signInURL,
			SignsInUsers: signsIn, BodyTooLarge: tooLarge, ClientAddress: "192.0.2.1:4711"}
		utf8Input := utf8.ValidString(method) && utf8.ValidString(path) && utf8.ValidString(query) && utf8.ValidString(headers) &&
			utf8.ValidString(brandUser) && utf8.ValidString(signInURL)
		verified := false
		if headers != "" {
			for line := range strings.SplitSeq(headers, "\n") {
				name, value, _ := strings.Cut(line, ":")
				value = strings.TrimPrefix(value, " ")
				req.Headers = append(req.Headers, &pactv1.HttpHeader{Name: name, Value: value})
				verified = verified || strings.EqualFold(name, "Authorization") && strings.HasPrefix(value, "Bearer good-")
			}
		}
		res, err := fs.svc.Serve(t.Context(), req)
		if p := fs.log.take(); len(p) > 0 {
			t.Fatalf("a handler panicked: %s", p[0])
		}
		if err != nil {
			if connect.CodeOf(err) != connect.CodeInvalidArgument || len(rpcerr.FieldViolations(err)) == 0 {
				t.Fatalf("Serve refused with %v; want InvalidArgument naming the field", err)
			}
			return
		}
		outcomes := 0
		for _, set := range []bool{res.GetResponse() != nil, res.GetTurn() != nil, res.GetUserNeeded() != nil} {
			if set {
				outcomes++
			}
		}
		if outcomes != 1 {
			t.Fatalf("%d outcomes: %v", outcomes, res)
		}
		if utf8Input {
			if _, err := proto.Marshal(res); err != nil {
				t.Fatalf("the answer cannot be sent: %v", err)
			}
		}
		switch {
		case res.GetResponse() != nil:
			checkResponse(t, res.GetResponse(), utf8Input)
		case res.GetTurn() != nil:
			if method != http.MethodPost || !verified || res.GetTurn().GetHandle() == "" {
				t.Fatalf("a turn for %s %q without a verified PA JWT: %v", method, path, res.GetTurn())
			}
		case res.GetUserNeeded() != nil:
			n := res.GetUserNeeded()
			want := path
			if query != "" {
				want += "?" + query
			}
			if !signsIn || brandUser != "" || signInURL != "" || n.GetBrandId() == "" || n.GetReturnTo() != want {
				t.Fatalf("UserNeeded %v for signs_in_users=%v brand_user=%q sign_in_url=%q", n, signsIn, brandUser, signInURL)
			}
		}
	})
}

// FuzzFinishTurnSDKAnswer: whatever an SDK answers (status and body),
// FinishTurn never fails the call and never panics, and its answer is one
// of three: a 200 reply or step-up (only for a 200 answer; no "pact."
// metadata key but pactd's receipt, and that only on a delegated turn), a
// 400 with one of the three reasons a PA may see and a message, or the
// exact INTERNAL error. Each answer either stores the turn (a reply) or
// releases it, never both or neither; a receipt names only tools and
// non-empty scopes; a step-up asks for non-empty scopes; and the same
// answer gives the same bytes.
func FuzzFinishTurnSDKAnswer(f *testing.F) {
	for _, c := range sdkAnswerCases() {
		if len(c.body) < 64<<10 { // the 1 MiB one only slows the mutator down
			f.Add(c.status, []byte(c.body), c.user != "", c.brand == "beta")
		}
	}
	// More SDK answers: escapes, two parts, a receipt, a step-up with its text, keys in no order.
	for _, s := range []string{
		`{"message":{"messageId":"m","parts":[{"text":"hi \u003cb\u003e"}],"role":"ROLE_AGENT"}}`,
		`{"message":{"messageId":"m","parts":[{"text":"a"},{"text":"b"}],"role":"ROLE_AGENT","metadata":{"pact.scopesUsed":["orders:read"],` +
			`"pact.actions":[{"tool":"cancel_order","args":{"orderId":"1002","n":12345678901234567890}}],"trace":"t","pact.receipt":"x"}}}`,
		`{"task":{"id":"t","contextId":"c","metadata":{"pact.missingScopes":["a"]},"status":{"state":"TASK_STATE_AUTH_REQUIRED",` +
			`"message":{"messageId":"s","parts":[{"text":"not here"}],"role":"ROLE_AGENT"}}}}`,
		`{"x":1,"y":2,"z":3,"w":4}`,
	} {
		f.Add(int32(200), []byte(s), true, false)
	}
	f.Add(int32(401), []byte(`{"error":{"message":"","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"other.org","reason":"INVALID_PARAMS"}]}}`), false, false)
	fs := newFuzzService(f)
	handles := map[[2]bool]string{}
	for _, deleg := range []bool{false, true} {
		for _, beta := range []bool{false, true} {
			brand, user := "acme", ""
			if beta {
				brand = "beta"
			}
			if deleg {
				user = "u1"
			}
			handles[[2]bool{deleg, beta}] = fs.handle(f, brand, user)
		}
	}
	passOn := map[a2aerr.Reason]bool{a2aerr.InvalidParams: true, a2aerr.ContentTypeNotSupported: true, a2aerr.UnsupportedOperation: true}
	internal := a2aerr.Body(a2aerr.Internal, "Internal error")
	f.Fuzz(func(t *testing.T, status int32, body []byte, deleg, beta bool) {
		req := &pactv1.FinishTurnRequest{Handle: handles[[2]bool{deleg, beta}],
			Result: &pactv1.FinishTurnRequest_SdkAnswer{SdkAnswer: &pactv1.SdkAnswer{Status: status, Body: body}}}
		completed, abandoned, receipts, stepUps := fs.turns.completed.Load(), fs.turns.abandoned.Load(), len(fs.receipts.requests()), len(fs.deleg.stepUpRequests())
		res, err := fs.svc.FinishTurn(t.Context(), req)
		if err != nil {
			t.Fatalf("FinishTurn: %v", err)
		}
		if p := fs.log.take(); len(p) > 0 {
			t.Fatalf("panicked: %s", p[0])
		}
		got := res.GetResponse()
		checkResponse(t, got, true)
		stored := fs.turns.completed.Load() - completed
		released := fs.turns.abandoned.Load() - abandoned
		if stored+released != 1 {
			t.Fatalf("stored %d, released %d", stored, released)
		}
		if headerOf(got, "Content-Type") != a2aerr.ContentType {
			t.Fatalf("content type %q", headerOf(got, "Content-Type"))
		}
		switch got.GetStatus() {
		case 500:
			if !bytes.Equal(got.GetBody(), internal) || stored != 0 {
				t.Fatalf("500 %s (stored %d)", got.GetBody(), stored)
			}
		case 400:
			var e struct {
				Error struct {
					Message string
					Details []struct{ Reason a2aerr.Reason }
				}
			}
			if json.Unmarshal(got.GetBody(), &e) != nil || len(e.Error.Details) != 1 || !passOn[e.Error.Details[0].Reason] ||
				strings.TrimSpace(e.Error.Message) == "" || !bytes.Equal(got.GetBody(), a2aerr.Body(e.Error.Details[0].Reason, e.Error.Message)) ||
				status == http.StatusOK || stored != 0 {
				t.Fatalf("400 %s for an SDK answer %d (stored %d)", got.GetBody(), status, stored)
			}
		case 200:
			if status != http.StatusOK {
				t.Fatalf("a %d answer accepted: %s", status, got.GetBody())
			}
			var out struct {
				Message *struct {
					Parts    []struct{ Text string } `json:"parts"`
					Metadata map[string]json.RawMessage
				}
				Task *struct{ ID string }
			}
			if err := json.Unmarshal(got.GetBody(), &out); err != nil || (out.Message == nil) == (out.Task == nil) {
				t.Fatalf("200 %s is not one Message or Task", got.GetBody())
			}
			if out.Message != nil {
				if stored != 1 || len(out.Message.Parts) != 1 {
					t.Fatalf("reply %s (stored %d)", got.GetBody(), stored)
				}
				for k := range out.Message.Metadata {
					if strings.HasPrefix(k, "pact.") && (k != "pact.receipt" || !deleg) {
						t.Fatalf("metadata %q passed on: %s", k, got.GetBody())
					}
				}
				if _, ok := out.Message.Metadata["pact.receipt"]; ok != deleg {
					t.Fatalf("receipt %v on a turn delegated %v", ok, deleg)
				}
			}
			if out.Task != nil && (beta || stored != 0) {
				t.Fatalf("a step-up task at a Brand without delegation, or stored: %s", got.GetBody())
			}
		default:
			t.Fatalf("status %d", got.GetStatus())
		}
		if r := fs.receipts.requests(); len(r) > receipts {
			for _, a := range r[len(r)-1].GetActions() {
				if a.GetTool() == "" || a.GetArgsHash() != "" {
					t.Fatalf("receipt action %v", a)
				}
			}
			if slices.Contains(r[len(r)-1].GetScopesUsed(), "") {
				t.Fatalf("an empty scope in the receipt")
			}
		}
		if su := fs.deleg.stepUpRequests(); len(su) > stepUps && (len(su[len(su)-1].GetMissingScopes()) == 0 || slices.Contains(su[len(su)-1].GetMissingScopes(), "")) {
			t.Fatalf("a step-up for %v", su[len(su)-1].GetMissingScopes())
		}
		again, err := fs.svc.FinishTurn(t.Context(), req)
		if err != nil || !proto.Equal(again, res) {
			t.Fatalf("not deterministic: %v / %v", again, res)
		}
	})
}

// FuzzTurnHandle: FinishTurn accepts a handle only exactly as pactd
// issued it; any other string, however close, is InvalidArgument naming
// handle, and nothing is stored or released for it.
func FuzzTurnHandle(f *testing.F) {
	fs := newFuzzService(f)
	valid := fs.handle(f, "acme", "")
	delegated := fs.handle(f, "acme", "u1")
	payload, mac, _ := strings.Cut(valid, ".")
	for _, s := range []string{valid, delegated, "", ".", payload, payload + ".", "." + mac, valid + "=", valid + ".", strings.ToUpper(valid),
		payload + "." + mac[:len(mac)-1], payload[1:] + "." + mac, payload + " ." + mac, payload + strings.Repeat("A", 4<<10) + "." + mac,
		"eyJiIjoiYWNtZSJ9." + mac, valid + "\n", payload + ".\r\n" + mac} {
		f.Add(s)
	}
	issued := map[string]bool{valid: true, delegated: true}
	f.Fuzz(func(t *testing.T, h string) {
		completed, abandoned := fs.turns.completed.Load(), fs.turns.abandoned.Load()
		res, err := fs.svc.FinishTurn(t.Context(), finishReply(h, &pactv1.AgentReply{Text: "x"}))
		if p := fs.log.take(); len(p) > 0 {
			t.Fatalf("panicked: %s", p[0])
		}
		if issued[h] {
			if err != nil || res.GetResponse().GetStatus() != 200 {
				t.Fatalf("an issued handle: %v %v", res, err)
			}
			return
		}
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), []string{"handle"}) {
			t.Fatalf("handle %q: %v %v; want InvalidArgument on handle", h, res, err)
		}
		if fs.turns.completed.Load() != completed || fs.turns.abandoned.Load() != abandoned {
			t.Fatalf("a refused handle stored or released a turn")
		}
	})
}

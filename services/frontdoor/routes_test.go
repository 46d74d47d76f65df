package frontdoor_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pactd.dev/pactd/internal/a2aerr"
)

// browser is the Accept header of a browser's navigation.
const browser = "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// TestRootPage: GET / lists every Brand by display name, with its card's
// link, and the connected page's for a trusted-frontend Brand; the page
// has the pages' headers. Another method there is a bare 404.
func TestRootPage(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, "GET", "/", "")
	wantPage(t, "root", r, 200,
		`<h2>ACME <span class="id">acme</span></h2>`, `<a href="/a2a/acme/.well-known/agent-card.json">Agent Card</a></li>`,
		`<h2>BETA <span class="id">beta</span></h2>`,
		`<h2>Shop <span class="id">shop</span></h2>`,
		`<a href="/a2a/shop/.well-known/agent-card.json">Agent Card</a> · <a href="/a2a/shop/oauth/connected">Connected assistants</a>`)
	if strings.Contains(r.body, "/a2a/acme/oauth/connected") {
		t.Errorf("root page links a connected page of a Brand without delegation")
	}
	wantBare(t, "POST /", e.do(t, "POST", "/", ""), 404)
}

// TestNotFoundPage: a browser's GET (Accept names text/html) of an unknown
// Brand's card or pages, or of any unmatched path, gets an HTML 404 page;
// every other request gets the bare 404 PACT 1.0 §1.2 and §1.3 require
// (the positive controls), also with Accept: application/json or
// text/html;q=0.
func TestNotFoundPage(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		path, want string
		post       int // a POST's bare status
	}{
		{"/a2a/nope/.well-known/agent-card.json", "This Provider serves no Brand named “nope”.", 405},
		// connected takes POST too (a signed-assertion Brand's login posts
		// there), so an unknown Brand's POST is 404, as consent's.
		{"/a2a/nope/oauth/connected", "This Provider serves no Brand named “nope”.", 404},
		{"/a2a/nope%3Cb%3E/oauth/consent", "This Provider serves no such Brand.", 404},
		{"/a2a/acme/unknown", "There is no page at this address.", 404},
		{"/elsewhere", "There is no page at this address.", 404},
	} {
		r := e.do(t, "GET", c.path, "", browser)
		wantPage(t, "browser GET "+c.path, r, 404, c.want, `<a href="/">`)
		for _, hdr := range []string{"", "Accept: application/json", "Accept: text/html;q=0, application/json"} {
			if hdr == "" {
				wantBare(t, "GET "+c.path, e.do(t, "GET", c.path, ""), 404)
			} else {
				wantBare(t, "GET "+c.path+" "+hdr, e.do(t, "GET", c.path, "", hdr), 404)
			}
		}
		wantBare(t, "POST "+c.path, e.do(t, "POST", c.path, "", browser), c.post)
	}
}

// TestBrandIDNotUTF8IsNotFound: a Brand id (or any segment) whose
// percent-escapes decode to bytes that are not UTF-8 matches no route: a
// bare 404, or the HTML 404 page for a browser's GET, never a 500, and no
// service is asked about it. The control: the same routes of a real Brand
// answer.
func TestBrandIDNotUTF8IsNotFound(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/a2a/%FF/message:send", "/a2a/%FF/.well-known/agent-card.json", "/a2a/%C3%28/tasks",
		"/a2a/acme/tasks/%FF", "/a2a/%FF/oauth/consent", "/a2a/%ff%fe/oauth/connected"} {
		for _, method := range []string{"GET", "POST"} {
			wantBare(t, method+" "+path, e.do(t, method, path, "{}", good), 404)
		}
		wantPage(t, "browser GET "+path, e.do(t, "GET", path, "", browser), 404, "There is no page at this address.")
		wantBare(t, "browser POST "+path, e.do(t, "POST", path, "", browser, good), 404)
	}
	if n := len(e.verifier.calls()); n != 0 || e.calls.Load() != 0 {
		t.Fatalf("a path that is not UTF-8 reached the services: %d verifications, %d other calls", n, e.calls.Load())
	}
	if r := e.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", ""); r.status != 200 {
		t.Fatalf("control: the card of acme: %d %s", r.status, r.body)
	}
	if r := e.do(t, "POST", "/a2a/acme/message:send", sendBody("m1", "", "hi"), good); r.status != 200 {
		t.Fatalf("control: message:send at acme: %d %s", r.status, r.body)
	}
}

func TestAgentCard(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" ||
		r.header.Get("Cache-Control") != "public, max-age=300" || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("card: %d %v", r.status, r.header)
	}
	var card struct {
		Name                string                 `json:"name"`
		SupportedInterfaces []struct{ URL string } `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal([]byte(r.body), &card); err != nil || card.Name != "ACME" || card.SupportedInterfaces[0].URL != "https://provider.example/a2a/acme" {
		t.Fatalf("card body %s (%v)", r.body, err)
	}
	wantBare(t, "unknown Brand card", e.do(t, "GET", "/a2a/nope/.well-known/agent-card.json", ""), 404)
	wantBare(t, "card by POST", e.do(t, "POST", "/a2a/acme/.well-known/agent-card.json", ""), 405)
	if n := len(e.verifier.calls()); n != 0 {
		t.Fatalf("the card route called VerifyAgentRequest %d times; it needs no authentication", n)
	}
}

// TestUnmatchedRoutesBeforeAuth: routing happens before authentication, so
// these never reach a service, token or not.
func TestUnmatchedRoutesBeforeAuth(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		method, path string
		status       int
	}{
		{"GET", "/a2a/acme/unknown", 404},
		{"GET", "/a2a/acme/message:send", 405},
		{"PUT", "/a2a/acme/message:send", 405},
		{"DELETE", "/a2a/acme/message:send", 405},
		{"GET", "/a2a/acme/message%3Asend", 405},
		{"POST", "/a2a/acme/tasks", 405},
		{"GET", "/a2a/acme/tasks/x:cancel", 405},
		{"GET", "/a2a/acme/tasks/x:subscribe", 405},
		{"GET", "/a2a/acme/message:stream", 405},
		{"POST", "/a2a/acme/extendedAgentCard", 405},
		{"DELETE", "/a2a/acme/tasks/x/pushNotificationConfigs", 405},
		{"POST", "/a2a/acme/tasks/x/pushNotificationConfigs/c", 405},
		{"POST", "/a2a/acme/tasks/x", 405},
		{"GET", "/a2a/acme/tasks/", 404},
		{"GET", "/a2a/acme/tasks/x/y", 404},
		{"GET", "/a2a/acme/tasks/x/pushNotificationConfigs/c/d", 404},
		{"POST", "/a2a/acme/tasks/:cancel", 405}, // ":cancel" alone is a task id
		{"POST", "/a2a/acme/message:send/", 404},
		{"POST", "/a2a/acme", 404},
		{"POST", "/a2a//message:send", 404},
		{"POST", "/", 404}, // GET / is the root page (TestRootPage)
		{"GET", "/a2a", 404},
		{"GET", "/.well-known/agent-card.json", 404},
	}
	for _, c := range cases {
		for _, hdr := range []string{"", good} {
			var r response
			if hdr == "" {
				r = e.do(t, c.method, c.path, "{}")
			} else {
				r = e.do(t, c.method, c.path, "{}", hdr)
			}
			wantBare(t, c.method+" "+c.path, r, c.status)
			if c.status == 405 && r.header.Get("Allow") == "" {
				t.Errorf("%s %s: 405 without Allow", c.method, c.path)
			}
		}
	}
	if got := e.do(t, "GET", "/a2a/acme/message:send", "").header.Get("Allow"); got != "POST" {
		t.Errorf("Allow of message:send = %q, want POST", got)
	}
	if got := e.do(t, "POST", "/a2a/acme/tasks/x/pushNotificationConfigs/c", "").header.Get("Allow"); got != "DELETE, GET" {
		t.Errorf("Allow of a push config = %q, want \"DELETE, GET\"", got)
	}
	if n := len(e.verifier.calls()); n != 0 || e.calls.Load() != 0 {
		t.Fatalf("unmatched routes reached the services: %d verifications, %d other calls; want none", n, e.calls.Load())
	}
}

func TestAuthenticationIsPactdsAnswer(t *testing.T) {
	e := newEnv(t)
	send := sendBody("m1", "", "hi")
	for _, hdrs := range [][]string{
		nil,
		{"Authorization: Basic Zm9vOmJhcg=="},
		{"Authorization: Bearer bad"},
		{good, "Authorization: Bearer good-bob"}, // two Authorization headers
	} {
		for _, route := range [][2]string{{"POST", "/a2a/acme/message:send"}, {"GET", "/a2a/acme/tasks"}, {"GET", "/a2a/acme/tasks/t1"}, {"POST", "/a2a/acme/message:stream"}} {
			r := e.do(t, route[0], route[1], send, hdrs...)
			wantBare(t, fmt.Sprint(route, hdrs), r, 401)
			if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="a2a"` {
				t.Errorf("%v %v: WWW-Authenticate = %q", route, hdrs, got)
			}
		}
	}
	r := e.do(t, "POST", "/a2a/acme/message:send", send, "Authorization: Bearer busy")
	wantBare(t, "rate limited", r, 429)
	if r.header.Get("Retry-After") != "7" {
		t.Errorf("Retry-After = %q, want 7", r.header.Get("Retry-After"))
	}
	// An unknown Brand is a bare 404 even with a valid token.
	wantBare(t, "unknown Brand", e.do(t, "POST", "/a2a/nope/message:send", send, good), 404)
	wantBare(t, "unknown Brand tasks", e.do(t, "GET", "/a2a/nope/tasks", "", good), 404)
	if e.agent.runs.Load() != 0 {
		t.Fatalf("the agent ran for a refused request")
	}
	// The verification got the raw headers and the Brand from the path.
	e.do(t, "GET", "/a2a/beta/tasks", "", good, "X-A2A-User-Delegation: Bearer deleg-u1")
	calls := e.verifier.calls()
	last := calls[len(calls)-1]
	if last.GetBrandId() != "beta" || last.GetAuthorization() != "Bearer good-alice" || last.GetUserDelegation() != "Bearer deleg-u1" {
		t.Fatalf("VerifyAgentRequest got %v", last)
	}
}

func TestErrorRoutesAndTaskList(t *testing.T) {
	e := newEnv(t)
	unsupported := func(m string) string { return errBody(a2aerr.UnsupportedOperation, m) }
	push := errBody(a2aerr.PushNotificationNotSupported, "Push notifications are not supported")
	type tc struct {
		method, path string
		status       int
		body         string
	}
	cases := []tc{
		{"GET", "/a2a/acme/tasks/t-123", 404, errBody(a2aerr.TaskNotFound, "Task not found: t-123")},
		{"POST", "/a2a/acme/tasks/t-123:cancel", 404, errBody(a2aerr.TaskNotFound, "Task not found: t-123")},
		{"POST", "/a2a/acme/tasks/t-123%3Acancel", 404, errBody(a2aerr.TaskNotFound, "Task not found: t-123")},
		{"POST", "/a2a/acme/tasks/t-123%3acancel", 404, errBody(a2aerr.TaskNotFound, "Task not found: t-123")},
		{"GET", "/a2a/acme/tasks/%3Cb%3E&x", 404, errBody(a2aerr.TaskNotFound, "Task not found: <b>&x")},
		{"POST", "/a2a/acme/message:stream", 400, unsupported("Streaming is not supported")},
		{"POST", "/a2a/acme/message%3Astream", 400, unsupported("Streaming is not supported")},
		{"POST", "/a2a/acme/tasks/t1:subscribe", 400, unsupported("Subscribing to tasks is not supported")},
		{"GET", "/a2a/acme/extendedAgentCard", 400, unsupported("The extended Agent Card is not supported")},
		{"GET", "/a2a/acme/tasks/t1/pushNotificationConfigs", 400, push},
		{"POST", "/a2a/acme/tasks/t1/pushNotificationConfigs", 400, push},
		{"GET", "/a2a/acme/tasks/t1/pushNotificationConfigs/c1", 400, push},
		{"DELETE", "/a2a/acme/tasks/t1/pushNotificationConfigs/c1", 400, push},
		{"GET", "/a2a/acme/tasks", 200, `{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}`},
		{"GET", "/a2a/acme/tasks?pageSize=1", 200, `{"tasks":[],"nextPageToken":"","pageSize":1,"totalSize":0}`},
		{"GET", "/a2a/acme/tasks?pageSize=100&status=x&pageToken=y", 200, `{"tasks":[],"nextPageToken":"","pageSize":100,"totalSize":0}`},
	}
	for _, bad := range []string{"0", "101", "-1", "1.5", "abc", "", "+5", " 5", "5&pageSize=5", "99999999999999999999"} {
		cases = append(cases, tc{"GET", "/a2a/acme/tasks?pageSize=" + strings.ReplaceAll(bad, " ", "%20"), 400,
			errBody(a2aerr.InvalidParams, "pageSize must be an integer from 1 to 100")})
	}
	for _, c := range cases {
		wantA2A(t, c.method+" "+c.path, e.do(t, c.method, c.path, "", good), c.status, c.body)
	}
}

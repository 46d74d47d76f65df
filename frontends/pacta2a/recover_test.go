package pacta2a_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"iter"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"pactd.dev/pactd/frontends/pacta2a"
	"pactd.dev/pactd/internal/a2aerr"
)

// panicSessions is a Sessions whose every answer panics.
type panicSessions struct{}

func (panicSessions) BrandUser(*http.Request, string) string { panic("the session store fell over") }
func (panicSessions) LoginURL(string, string) string         { panic("the session store fell over") }

// panicInterceptor is a Provider's own a2a-go interceptor that panics.
type panicInterceptor struct {
	a2asrv.PassthroughCallInterceptor
}

func (panicInterceptor) Before(context.Context, *a2asrv.CallContext, *a2asrv.Request) (context.Context, any, error) {
	panic("the interceptor fell over")
}

// TestPanicsBecomeInternalErrors: a panic in the agent, in the Sessions or
// in the SDK's handler becomes a 500 with the A2A INTERNAL body, is logged
// once (by the frontend, not again by net/http), releases the turn's
// messageId, and the real http.Server goes on serving.
func TestPanicsBecomeInternalErrors(t *testing.T) {
	internal := errBody(a2aerr.Internal, "Internal error")
	send := func(id string) string {
		return `{"message":{"messageId":"` + id + `","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	}
	t.Run("agent", func(t *testing.T) {
		e, serverLog := newPanicEnv(t, nil, nil)
		e.agent.panics.Store(true)
		wantA2A(t, "panicking agent", e.do(t, "POST", "/a2a/acme/message:send", send("m1"), good), 500, internal)
		wantLoggedOnce(t, e, serverLog, "the agent fell over")
		e.agent.panics.Store(false)
		decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", send("m1"), good)) // released, and still serving
	})
	t.Run("sessions", func(t *testing.T) {
		e, serverLog := newPanicEnv(t, func(cfg *pacta2a.Config) { cfg.Sessions = panicSessions{} }, nil)
		wantA2A(t, "panicking sessions", e.do(t, "GET", "/a2a/shop/oauth/connected", ""), 500, internal)
		wantLoggedOnce(t, e, serverLog, "the session store fell over")
		decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", send("m1"), good))
	})
	t.Run("sdk-handler", func(t *testing.T) {
		var exec funcExecutor
		exec.set(func(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(yield func(a2a.Event, error) bool) {
				yield(a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("ok")), nil)
			}
		})
		panicking := sdkServer(&exec, a2asrv.WithCallInterceptors(panicInterceptor{}))
		var fine http.Handler
		e, serverLog := newPanicEnv(t, func(cfg *pacta2a.Config) { cfg.Agent = nil }, func(cfg pacta2a.Config) (http.Handler, error) {
			bad, err := pacta2a.Wrap(cfg, panicking)
			if err != nil {
				return nil, err
			}
			fine, err = pacta2a.Wrap(cfg, sdkServer(&exec))
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Fine") != "" {
					fine.ServeHTTP(w, r)
					return
				}
				bad.ServeHTTP(w, r)
			}), err
		})
		wantA2A(t, "panicking SDK handler", e.do(t, "POST", "/a2a/acme/message:send", send("m1"), good), 500, internal)
		wantLoggedOnce(t, e, serverLog, "the interceptor fell over")
		decodeReply(t, e.do(t, "POST", "/a2a/acme/message:send", send("m1"), good, "X-Fine: 1"))
	})
}

// newPanicEnv is newEnv (or, with build, newEnvWith) with tweak applied
// to the Config; its real http.Server logs to e.serverLog, so a test sees
// whether net/http logged a panic as well.
func newPanicEnv(t *testing.T, tweak func(*pacta2a.Config), build func(pacta2a.Config) (http.Handler, error)) (*env, *lockedBuffer) {
	t.Helper()
	if build == nil {
		build = func(cfg pacta2a.Config) (http.Handler, error) { return pacta2a.NewHandler(cfg) }
	}
	e := newEnvWith(t, func(cfg pacta2a.Config) (http.Handler, error) {
		if tweak != nil {
			tweak(&cfg)
		}
		return build(cfg)
	})
	return e, &e.serverLog
}

// wantLoggedOnce: the frontend logged the panic once with its cause and
// stack, and net/http logged nothing.
func wantLoggedOnce(t *testing.T, e *env, serverLog *lockedBuffer, cause string) {
	t.Helper()
	logged := e.log.String()
	if n := strings.Count(logged, cause); n != 1 || !strings.Contains(logged, "goroutine ") {
		t.Errorf("the cause %q is in the frontend's log %d times (want once, with the stack):\n%s", cause, n, logged)
	}
	if s := serverLog.String(); s != "" {
		t.Errorf("net/http logged the panic too: %s", s)
	}
}

// TestRecover: what a program mounts beside the frontend (a sign-in page)
// is covered by Recover: a panic before any answer is a plain 500 outside
// /a2a/ and the A2A INTERNAL body under it; after part of the answer, the
// connection is cut, so the client never takes half an answer for a
// whole one. Each is logged once and the server keeps serving.
func TestRecover(t *testing.T) {
	var frontendLog lockedBuffer
	h := pacta2a.Recover(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("panic") {
		case "before":
			w.Header().Set("Set-Cookie", "half=done")
			panic("before the answer")
		case "after":
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "partial")
			http.NewResponseController(w).Flush()
			panic("after the answer began")
		case "abort":
			panic(http.ErrAbortHandler)
		}
		_, _ = io.WriteString(w, "fine")
	}), slog.New(slog.NewJSONHandler(&frontendLog, nil)))
	var serverLog lockedBuffer
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(&serverLog, "", 0)
	srv.Start()
	defer srv.Close()
	get := func(path string) (*http.Response, string, error) {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			return nil, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res, string(b), err
	}
	res, body, err := get("/demo/acme/login?panic=before")
	if err != nil || res.StatusCode != 500 || res.Header.Get("Set-Cookie") != "" || strings.TrimSpace(body) != "Internal Server Error" {
		t.Fatalf("panic before the answer: %v %v %q", res, err, body)
	}
	res, body, err = get("/a2a/acme/tasks?panic=before")
	if err != nil || res.StatusCode != 500 || res.Header.Get("Content-Type") != "application/a2a+json" || body != errBody(a2aerr.Internal, "Internal error") {
		t.Fatalf("panic before the answer under /a2a/: %v %v %q", res, err, body)
	}
	if _, body, err = get("/demo/acme/login?panic=after"); err == nil {
		t.Fatalf("panic after the answer began: the client read %q as a whole answer", body)
	}
	if _, _, err = get("/x?panic=abort"); err == nil {
		t.Fatalf("http.ErrAbortHandler did not abort the answer")
	}
	if _, body, err = get("/demo/acme/login"); err != nil || body != "fine" {
		t.Fatalf("after the panics: %q %v", body, err)
	}
	logged := frontendLog.String()
	for cause, times := range map[string]int{"before the answer": 2, "after the answer began": 1} { // two requests panicked before
		if n := strings.Count(logged, `"panic":"`+cause+`"`); n != times {
			t.Errorf("%q logged %d times, want %d:\n%s", cause, n, times, logged)
		}
	}
	if strings.Contains(logged, "abort") || serverLog.String() != "" {
		t.Errorf("a deliberate abort was logged, or net/http logged a panic: %s / %s", logged, serverLog.String())
	}
}

// TestOversizedBodyClosesTheConnection (RFC 9112 §9.3): after refusing a
// body past its bound the server closes the connection, so the next
// request a keep-alive client sends on it is never parsed out of the rest
// of that body, and nothing hangs: the client reads the refusal, then
// end of file. Over one TCP connection each: message:send past 1 MiB (far
// past, and just past, where net/http alone would keep the connection),
// a consent form past 16 KiB, and a body that stops arriving. The
// control: a body within its bound keeps the connection for the next
// request.
func TestOversizedBodyClosesTheConnection(t *testing.T) {
	e := newEnvWith(t, func(cfg pacta2a.Config) (http.Handler, error) {
		cfg.Sessions = signedIn{"alice"}
		return pacta2a.NewHandler(cfg)
	})
	addr := strings.TrimPrefix(e.url, "http://")
	auth := "Authorization: Bearer good-alice\r\n"
	next := "GET /a2a/acme/tasks HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n"
	sendHead := func(n int) string {
		return "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n"
	}
	formHead := func(n int) string {
		return "POST /a2a/shop/oauth/consent/decision HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n"
	}
	big := func(n int) string { return "csrf=" + strings.Repeat("a", n-5) }
	cases := []struct {
		name         string
		head, body   string // body is written after the head, then next
		status       int
		wantA2A      string // the exact A2A body, when the answer is A2A
		keepsConnect bool
	}{
		{"fail/send-far-past-1MiB", sendHead(4 << 20), big(4 << 20), 400, errBody(a2aerr.InvalidParams, "The request body is unreadable or too large"), false},
		{"fail/send-just-past-1MiB", sendHead(1<<20 + 10), big(1<<20 + 10), 400, errBody(a2aerr.InvalidParams, "The request body is unreadable or too large"), false},
		{"fail/form-past-16KiB", formHead(20 << 10), big(20 << 10), 413, "", false},
		{"fail/send-body-stops", sendHead(4 << 20), big(1<<20 + 100), 400, errBody(a2aerr.InvalidParams, "The request body is unreadable or too large"), false},
		{"ok/send-within-bound", sendHead(len(`{`)), `{`, 400, errBody(a2aerr.InvalidParams, `The body must be JSON: {"message": Message}`), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, never blocks it
			go func() {
				// The server may stop reading and close; writing the rest then fails, as it should.
				_, _ = io.WriteString(conn, c.head+c.body)
				if !strings.Contains(c.name, "stops") {
					_, _ = io.WriteString(conn, next)
				}
			}()
			br := bufio.NewReader(conn)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("reading the refusal: %v", err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.status || c.wantA2A != "" && string(b) != c.wantA2A {
				t.Fatalf("answer %d %s; want %d %s", res.StatusCode, b, c.status, c.wantA2A)
			}
			if res.Close == c.keepsConnect {
				t.Fatalf("Connection: close = %v, want %v", res.Close, !c.keepsConnect)
			}
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			second, err := http.ReadResponse(br, nil)
			switch {
			case c.keepsConnect && err != nil:
				t.Fatalf("the connection was not kept for the next request: %v", err)
			case c.keepsConnect:
				b, _ := io.ReadAll(second.Body)
				if second.StatusCode != 200 || !strings.Contains(string(b), `"tasks":[]`) {
					t.Fatalf("next request on the kept connection: %d %s", second.StatusCode, b)
				}
			case err == nil:
				t.Fatalf("a second answer (%d) came on a connection that should be closed", second.StatusCode)
			case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err):
				// closed: the rest of the body was never read as a request
			default:
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("the connection hangs after the refusal")
				}
				t.Fatalf("after the refusal: %v", err)
			}
		})
	}
}

// signedIn is a Sessions with one signed-in user at every Brand.
type signedIn struct{ user string }

func (s signedIn) BrandUser(*http.Request, string) string { return s.user }
func (signedIn) LoginURL(_, returnTo string) string {
	return "/login?return_to=" + url.QueryEscape(returnTo)
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe")
}

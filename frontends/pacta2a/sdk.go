package pacta2a

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"runtime/debug"
)

// Wrap returns the whole PACT frontend of cfg (NewHandler) with an A2A
// server built on github.com/a2aproject/a2a-go/v2 as its agent. next is the
// SDK's HTTP+JSON handler, as a Provider already serves it:
//
//	next := a2asrv.NewTenantRESTHandler("/a2a/{*}",
//		a2asrv.NewHandler(executor, a2asrv.WithCallInterceptors(pacta2a.Interceptor())))
//	fe, err := pacta2a.Wrap(cfg, next)
//	mux.Handle("/a2a/", fe)
//
// Every route under /a2a/{brandId}/ stays PACT's (docs/frontends.md):
// matching, the Agent Card, VerifyAgentRequest, the fixed routes, the OAuth
// endpoints and pages, and message:send's conversation rules. Only a turn
// pactd says to run reaches next, as a normalized request: POST
// /a2a/{brandId}/message:send (so next must serve that path), Content-Type
// application/json, A2A-Version 1.0, body {"message": the PA's message with
// pactd's contextId, "metadata"?: the request's metadata object}, and the
// PA's other headers without Authorization, X-A2A-User-Delegation and
// Cookie. The verified caller travels in the request's context, where
// Interceptor finds it. next's answer (at most 1 MiB) is read with a2a-go's
// own types:
//
//   - a Message (ROLE_AGENT, text parts) is the reply: its parts joined by
//     newlines, its pact.scopesUsed and pact.actions metadata for the
//     receipt of a delegated turn (WithReceipt sets them), its other
//     non-"pact." metadata passed on;
//   - a Task in TASK_STATE_AUTH_REQUIRED with pact.missingScopes is a
//     step-up (StepUpTask makes one);
//   - an A2A error INVALID_PARAMS, CONTENT_TYPE_NOT_SUPPORTED or
//     UNSUPPORTED_OPERATION is sent to the PA with the SDK's message;
//   - anything else fails the turn: INTERNAL, logged once with the cause,
//     and the messageId is released for a retry.
//
// The bytes the PA gets are those the standalone frontend sends for the
// same Reply. cfg.Agent must be nil: next is the agent.
func Wrap(cfg Config, next http.Handler) (*Handler, error) {
	if next == nil {
		return nil, errors.New("pacta2a: Wrap needs the SDK's HTTP+JSON handler")
	}
	if cfg.Agent != nil {
		return nil, errors.New("pacta2a: Wrap makes the SDK's handler the agent; leave Config.Agent nil")
	}
	cfg.Agent = &sdkAgent{next: next}
	return NewHandler(cfg)
}

// maxAnswerBytes bounds what Wrap reads of the SDK's answer.
const maxAnswerBytes = 1 << 20

// sdkAgent is the Agent of Wrap: an a2a-go HTTP+JSON handler.
type sdkAgent struct{ next http.Handler }

// callKey is the context key of the call Wrap hands the SDK; only this
// package can set it, so Interceptor trusts what it finds there.
type callKey struct{}

// sdkCall is what the SDK's executor learns of a turn (see Interceptor).
type sdkCall struct {
	turn Turn
}

// dropped are the PA's headers that never reach the SDK: its credentials
// (the verified identity travels in the SDK's User instead), the headers
// Wrap sets itself, and the hop-by-hop ones.
var dropped = []string{"Authorization", "X-A2A-User-Delegation", "Cookie", "Content-Type", "Content-Length", "A2A-Version",
	"Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Expect"}

// Reply hands the turn to the SDK's handler and reads its answer.
func (a *sdkAgent) Reply(ctx context.Context, t Turn) (Reply, error) {
	if t.message == nil {
		return Reply{}, errors.New("pacta2a: an SDK runs only turns that message:send parsed")
	}
	msg := maps.Clone(t.message)
	msg["contextId"] = marshal(t.ContextID) // pactd's: minted or checked
	delete(msg, "taskId")                   // never present: message:send refuses it before
	body := marshal(struct {
		Message  any `json:"message"`
		Metadata any `json:"metadata,omitempty"`
	}{msg, rawOrNil(t.metadata)})
	path := "/a2a/" + url.PathEscape(t.BrandID) + "/message:send"
	req, err := http.NewRequestWithContext(context.WithValue(ctx, callKey{}, &sdkCall{turn: t}), http.MethodPost, path, bytes.NewReader(body))
	if err != nil {
		return Reply{}, err
	}
	req.Header = t.header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	for _, k := range dropped {
		req.Header.Del(k)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	rec := &captureWriter{header: http.Header{}}
	if err := serveSDK(a.next, rec, req); err != nil {
		return Reply{}, err
	}
	if rec.over {
		return Reply{}, fmt.Errorf("the A2A handler's answer is larger than %d bytes", maxAnswerBytes)
	}
	return decodeAnswer(rec.status(), rec.body.Bytes())
}

// rawOrNil keeps an absent metadata absent (omitempty sees a nil any).
func rawOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return rawJSON(b)
}

// rawJSON is JSON passed on as it is.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// serveSDK runs the SDK's handler; its panic (an interceptor's, the
// handler's own) fails the turn like an error.
func serveSDK(next http.Handler, w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the A2A handler panicked: %v\n%s", v, debug.Stack())
		}
	}()
	next.ServeHTTP(w, r)
	return nil
}

// errAnswerTooLarge stops the SDK from writing past maxAnswerBytes.
var errAnswerTooLarge = errors.New("pacta2a: the answer is too large")

// captureWriter keeps the SDK's answer, at most maxAnswerBytes of it.
type captureWriter struct {
	header http.Header
	code   int
	body   bytes.Buffer
	over   bool
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(code int) {
	if c.code == 0 && code >= 200 { // 1xx are interim
		c.code = code
	}
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	if c.over || c.body.Len()+len(b) > maxAnswerBytes {
		c.over = true
		return 0, errAnswerTooLarge
	}
	return c.body.Write(b)
}

func (c *captureWriter) status() int {
	if c.code == 0 {
		return http.StatusOK
	}
	return c.code
}

// Package pacta2a is every PACT HTTP rule of a Provider's A2A frontend
// (HTTP+JSON, A2A 1.0): routing, the A2A envelope, the OAuth endpoints and
// consent pages, and the conversation rules, with the Brand's agent as the
// one replaceable part. Every PACT decision and all state live in pactd,
// reached only through its generated Connect clients; this package imports
// nothing else of pactd, so a Provider imports it from outside the module
// and a frontend in any language can follow it (docs/frontends.md).
//
// Two ways to use it: NewHandler serves with an Agent of its own (the
// standalone frontend, cmd/pact-a2a); Wrap puts it in front of an A2A
// server built on github.com/a2aproject/a2a-go/v2, whose executor learns
// the verified caller through the SDK's own types (Interceptor, CallerOf,
// DelegationOf, BrandOf, TurnOf) and answers with StepUpTask and
// WithReceipt. Both run one send flow and send the same bytes.
//
// Each request is handled in the order of PACT 1.0 §4.3: match the route
// (else 404/405, before any authentication), then VerifyAgentRequest (the PA
// JWT and, when sent, the delegation token; pactd answers 401 or 404 for an
// unknown Brand), then the route: its fixed A2A error, the task list, or
// message:send.
//
// Under /a2a/{brandId}/oauth/ (PACT Delegated) pactd's OAuth endpoints are
// reverse-proxied, and the Provider's consent and connected-apps pages are
// served here: for Brands in BRAND_LOGIN_MODE_TRUSTED_FRONTEND with the
// frontend's own sign-in (see Sessions), for Brands in
// BRAND_LOGIN_MODE_SIGNED_ASSERTION without any cookie (see signed.go).
//
// No input stops the process: a panic becomes a 500 (Recover), and a body
// past its bound is refused and its connection closed (RFC 9112 §9.3).
package pacta2a

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// Config configures the frontend.
type Config struct {
	// PactdURL is pactd's base URL, e.g. http://127.0.0.1:7070.
	PactdURL string
	// Token is the frontend credential pactd knows (PACT_FRONTEND_TOKEN).
	Token string
	// HTTPClient calls pactd; a client with a 10 s timeout when nil.
	HTTPClient connect.HTTPClient
	// Agent answers User turns; EchoAgent when nil.
	Agent Agent
	// NewMessageID mints reply message ids; random when nil.
	NewMessageID func() string
	// MaxBodyBytes bounds a request body; 1 MiB when zero.
	MaxBodyBytes int64
	// TurnTimeout bounds the agent run and storing its reply; 60 s when zero.
	TurnTimeout time.Duration
	// Logger receives one line per failed call to pactd or the agent, and
	// one per panic (with its stack).
	Logger *slog.Logger
	// Sessions tells the consent and connected-apps pages who the User is
	// at a Brand in BRAND_LOGIN_MODE_TRUSTED_FRONTEND; without it those
	// Brands' pages answer 404 (signed-assertion Brands need none).
	Sessions Sessions
}

// Handler serves A2A under /a2a/{brandId}/.
type Handler struct {
	cfg    Config
	brands pactv1connect.BrandServiceClient
	verify pactv1connect.VerificationServiceClient
	conv   pactv1connect.ConversationServiceClient
	deleg  pactv1connect.DelegationServiceClient
	tokens pactv1connect.TokenServiceClient
	proxy  *httputil.ReverseProxy // to pactd's OAuth endpoints
	pages  *pages
}

// NewHandler returns the frontend's HTTP handler.
func NewHandler(cfg Config) (*Handler, error) {
	if _, err := url.ParseRequestURI(cfg.PactdURL); err != nil || cfg.Token == "" {
		return nil, fmt.Errorf("a2a: need pactd's URL and a frontend token")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Agent == nil {
		cfg.Agent = EchoAgent{}
	}
	if cfg.NewMessageID == nil {
		cfg.NewMessageID = rand.Text
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = 60 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	auth := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+cfg.Token)
			return next(ctx, req)
		}
	}))
	h := &Handler{
		cfg:    cfg,
		brands: pactv1connect.NewBrandServiceClient(cfg.HTTPClient, cfg.PactdURL, auth),
		verify: pactv1connect.NewVerificationServiceClient(cfg.HTTPClient, cfg.PactdURL, auth),
		conv:   pactv1connect.NewConversationServiceClient(cfg.HTTPClient, cfg.PactdURL, auth),
		deleg:  pactv1connect.NewDelegationServiceClient(cfg.HTTPClient, cfg.PactdURL, auth),
		tokens: pactv1connect.NewTokenServiceClient(cfg.HTTPClient, cfg.PactdURL, auth),
		pages:  newPages(),
	}
	h.proxy = h.newProxy()
	return h, nil
}

// call is one authenticated request.
type call struct {
	brandID    string
	caller     *pactv1.Caller
	delegation *pactv1.DelegationInfo
}

// endpoint serves one method of one route.
type endpoint struct {
	public bool // served without a PA JWT (the Agent Card)
	serve  func(w http.ResponseWriter, r *http.Request, c *call)
}

// ServeHTTP routes, authenticates and serves one request. A panic in it
// (the agent's, the Sessions', an SDK's) becomes a 500, as Recover says.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serveRecovered(w, r, h.cfg.Logger, func(w http.ResponseWriter) { h.serve(w, r) })
}

// serve routes, authenticates and serves one request.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.EscapedPath() == "/" && r.Method == http.MethodGet {
		h.root(w, r)
		return
	}
	brandID, rest, ok := splitPath(r.URL.EscapedPath())
	if !ok {
		h.notFound(w, r, "")
		return
	}
	methods := h.routes(rest)
	ep, ok := methods[r.Method]
	if !ok {
		if len(methods) == 0 {
			h.notFound(w, r, "")
			return
		}
		allow := make([]string, 0, len(methods))
		for m := range methods {
			allow = append(allow, m)
		}
		slices.Sort(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		bare(w, http.StatusMethodNotAllowed)
		return
	}
	c := &call{brandID: brandID}
	if !ep.public && !h.authenticate(w, r, c) {
		return
	}
	ep.serve(w, r, c)
}

// splitPath takes /a2a/{brandId}/{rest...} apart. Segments are split on
// the raw path, then percent-decoded one by one (so %3A is ':' and %2F
// stays inside its segment).
func splitPath(escaped string) (brandID string, rest []string, ok bool) {
	tail, found := strings.CutPrefix(escaped, "/a2a/")
	if !found {
		return "", nil, false
	}
	segs := strings.Split(tail, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			return "", nil, false
		}
		segs[i] = d
	}
	if len(segs) < 2 || segs[0] == "" {
		return "", nil, false
	}
	return segs[0], segs[1:], true
}

// routes returns the endpoints of a path under the interface URL, by
// method; nil when the path matches no route (PACT §4.3).
func (h *Handler) routes(p []string) map[string]endpoint {
	fixed := func(e a2aError) endpoint {
		return endpoint{serve: func(w http.ResponseWriter, _ *http.Request, _ *call) { e.write(w) }}
	}
	switch {
	case len(p) == 2 && p[0] == ".well-known" && p[1] == "agent-card.json":
		return map[string]endpoint{http.MethodGet: {public: true, serve: h.card}}
	case len(p) == 1 && p[0] == "message:send":
		return map[string]endpoint{http.MethodPost: {serve: h.send}}
	case len(p) == 1 && p[0] == "message:stream":
		return map[string]endpoint{http.MethodPost: fixed(unsupportedOperation("Streaming is not supported"))}
	case len(p) == 1 && p[0] == "extendedAgentCard":
		return map[string]endpoint{http.MethodGet: fixed(unsupportedOperation("The extended Agent Card is not supported"))}
	case len(p) == 1 && p[0] == "tasks":
		return map[string]endpoint{http.MethodGet: {serve: listTasks}}
	case p[0] == "oauth":
		return h.oauthRoutes(strings.Join(p[1:], "/"))
	case len(p) < 2 || p[0] != "tasks" || p[1] == "":
		return nil
	}
	task := p[1]
	switch {
	case len(p) == 2 && strings.HasSuffix(task, ":cancel") && task != ":cancel":
		return map[string]endpoint{http.MethodPost: fixed(taskNotFound("Task not found: " + strings.TrimSuffix(task, ":cancel")))}
	case len(p) == 2 && strings.HasSuffix(task, ":subscribe") && task != ":subscribe":
		return map[string]endpoint{http.MethodPost: fixed(unsupportedOperation("Subscribing to tasks is not supported"))}
	case len(p) == 2:
		return map[string]endpoint{http.MethodGet: fixed(taskNotFound("Task not found: " + task))}
	case len(p) == 3 && p[2] == "pushNotificationConfigs":
		return map[string]endpoint{http.MethodGet: fixed(pushNotSupported()), http.MethodPost: fixed(pushNotSupported())}
	case len(p) == 4 && p[2] == "pushNotificationConfigs" && p[3] != "":
		return map[string]endpoint{http.MethodGet: fixed(pushNotSupported()), http.MethodDelete: fixed(pushNotSupported())}
	}
	return nil
}

// authenticate asks pactd about the request's PA JWT (and delegation
// token) and the Brand. On a refusal it sends pactd's status and headers
// with no body and returns false.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request, c *call) bool {
	res, err := h.verify.VerifyAgentRequest(r.Context(), &pactv1.VerifyAgentRequestRequest{
		BrandId: c.brandID,
		// Repeated headers are joined, so pactd sees (and refuses) them.
		Authorization:  strings.Join(r.Header.Values("Authorization"), ", "),
		UserDelegation: strings.Join(r.Header.Values("X-A2A-User-Delegation"), ", "),
	})
	if err != nil {
		h.fail(w, r, "verify agent request", err)
		return false
	}
	if !res.GetAllowed() {
		if v := res.GetWwwAuthenticate(); v != "" {
			w.Header().Set("WWW-Authenticate", v)
		}
		if s := res.GetRetryAfterSeconds(); s > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(s)))
		}
		status := int(res.GetHttpStatus())
		if status < 400 || status > 599 {
			status = http.StatusUnauthorized // a refusal is never a success
		}
		bare(w, status)
		return false
	}
	c.caller, c.delegation = res.GetCaller(), res.GetDelegation()
	return true
}

// card serves the Brand's Agent Card, built by pactd (PACT §2.1).
func (h *Handler) card(w http.ResponseWriter, r *http.Request, c *call) {
	res, err := h.brands.GetAgentCard(r.Context(), &pactv1.GetAgentCardRequest{BrandId: c.brandID})
	if connect.CodeOf(err) == connect.CodeNotFound {
		h.notFound(w, r, c.brandID) // never application/a2a+json (PACT 1.0 §1.2)
		return
	}
	if err != nil {
		h.fail(w, r, "get agent card", err)
		return
	}
	w.Header().Set("Content-Type", res.GetContentType())
	w.Header().Set("Cache-Control", res.GetCacheControl())
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write([]byte(res.GetCardJson()))
}

// listTasks answers GET tasks: ordinary turns create no tasks, so the list
// is always empty; only pageSize is read (1 to 100, default 50).
func listTasks(w http.ResponseWriter, r *http.Request, _ *call) {
	size := 50
	if vals, ok := r.URL.Query()["pageSize"]; ok {
		n, err := strconv.Atoi(vals[0])
		if len(vals) != 1 || err != nil || n < 1 || n > 100 || strings.Trim(vals[0], "0123456789") != "" {
			invalidParams("pageSize must be an integer from 1 to 100").write(w)
			return
		}
		size = n
	}
	writeA2A(w, http.StatusOK, fmt.Appendf(nil, `{"tasks":[],"nextPageToken":"","pageSize":%d,"totalSize":0}`, size))
}

// fail answers INTERNAL after an unexpected failure; the cause goes to the
// log only.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, op string, err error) {
	h.cfg.Logger.ErrorContext(r.Context(), op, slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	internalError().write(w)
}

// BrandName is the Brand's display name (its Agent Card's name), or ""
// when pactd does not know the Brand or cannot answer: for pages outside
// this handler, such as a Brand's sign-in.
func (h *Handler) BrandName(ctx context.Context, brandID string) string {
	res, err := h.brands.GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: brandID})
	if err != nil {
		return ""
	}
	name, _ := cardFacts(res.GetCardJson())
	return name
}

// maxRootBrands bounds the Brands the root page lists.
const maxRootBrands = 200

// root serves GET /: the Brands pactd has, by display name, each with its
// Agent Card's link (and the connected page's, for a Brand whose Users sign
// in through this frontend).
func (h *Handler) root(w http.ResponseWriter, r *http.Request) {
	v := view{Title: "PACT Provider"}
	page := &pactv1.PageRequest{PageSize: 100}
	for len(v.Brands) < maxRootBrands {
		res, err := h.brands.ListBrands(r.Context(), &pactv1.ListBrandsRequest{Page: page})
		if err != nil {
			h.cfg.Logger.ErrorContext(r.Context(), "list brands", slog.String("error", err.Error()))
			v.Error, v.Brands = "The Brands cannot be listed right now. Try again later.", nil
			h.pages.render(w, http.StatusInternalServerError, "root", v)
			return
		}
		for _, b := range res.GetBrands() {
			base := "/a2a/" + url.PathEscape(b.GetBrandId())
			bv := brandView{ID: b.GetBrandId(), Name: b.GetDisplayName(), Description: b.GetDescription(),
				Card: base + "/.well-known/agent-card.json"}
			// Only a trusted-frontend Brand's Users can list their grants here.
			if d := b.GetDelegation(); d.GetEnabled() && d.GetLoginMode() == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND {
				bv.Connected = base + "/oauth/connected"
			}
			v.Brands = append(v.Brands, bv)
		}
		if res.GetNextPageToken() == "" {
			break
		}
		page = &pactv1.PageRequest{PageSize: 100, PageToken: res.GetNextPageToken()}
	}
	h.pages.render(w, http.StatusOK, "root", v)
}

// notFound answers 404. A browser (a GET that accepts text/html) gets a
// page saying what is missing and linking the root page; every other
// client gets the bare 404 PACT 1.0 §1.2 and §1.3 require, byte for byte.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, brandID string) {
	if r.Method != http.MethodGet || !acceptsHTML(r) {
		bare(w, http.StatusNotFound)
		return
	}
	v := view{Title: "Page not found", Error: "There is no page at this address."}
	if brandID != "" {
		v.Title, v.Error = "Brand not found", "This Provider serves no such Brand."
		if validBrandID(brandID) { // echo only what a Brand id can be
			v.Error = "This Provider serves no Brand named “" + brandID + "”."
		}
	}
	h.pages.render(w, http.StatusNotFound, "notfound", v)
}

// acceptsHTML reports whether the request's Accept header names text/html,
// as browsers' navigations do (API clients ask for JSON or nothing).
func acceptsHTML(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/html") && !refused(params) {
				return true
			}
		}
	}
	return false
}

// refused reports whether media-range parameters carry q=0 (RFC 9110
// §12.4.2: not acceptable).
func refused(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); strings.EqualFold(strings.TrimSpace(k), "q") && err == nil && q == 0 {
			return true
		}
	}
	return false
}

// validBrandID reports whether s has a Brand id's form: 1 to 64 of
// [A-Za-z0-9_-].
func validBrandID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

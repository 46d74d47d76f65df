package frontdoor

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/internal/brandid"
)

// call is one authenticated request under the interface URL.
type call struct {
	brandID    string
	caller     *pactv1.Caller
	delegation *pactv1.DelegationInfo
}

// endpoint serves one method of one route.
type endpoint struct {
	public bool // served without a PA JWT (the Agent Card, OAuth, pages)
	serve  func(w http.ResponseWriter, r *http.Request, x *exchange, c *call)
}

// RegistrationPath is where a frontend forwards self-service PA
// registration (the reference Provider's POST {public URL}/api/platforms).
const RegistrationPath = "/api/platforms"

// route matches the request and serves it (PACT 1.0 §4.3): the root page,
// self-registration, or a route under /a2a/{brandId}/; an unmatched method
// or path gets 405 or 404 before any authentication.
func (s *Service) route(w http.ResponseWriter, r *http.Request, x *exchange) {
	raw := r.RequestURI
	switch {
	case raw == "/" && r.Method == http.MethodGet:
		s.root(w, r)
		return
	case raw == RegistrationPath:
		s.register(w, r)
		return
	}
	brandID, rest, ok := splitPath(raw)
	if !ok {
		s.notFound(w, r, "")
		return
	}
	methods := s.routes(rest)
	ep, ok := methods[r.Method]
	if !ok {
		if len(methods) == 0 {
			s.notFound(w, r, "")
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
	if !ep.public && !s.authenticate(w, r, c) {
		return
	}
	ep.serve(w, r, x, c)
}

// splitPath takes /a2a/{brandId}/{rest...} apart. Segments are split on
// the raw path, then percent-decoded one by one (so %3A is ':' and %2F
// stays inside its segment). A segment that does not decode, or decodes
// to bytes that are not UTF-8 (no Brand id, route or task id is), matches
// nothing: a 404, never a failure.
func splitPath(escaped string) (brandID string, rest []string, ok bool) {
	tail, found := strings.CutPrefix(escaped, "/a2a/")
	if !found {
		return "", nil, false
	}
	segs := strings.Split(tail, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil || !utf8.ValidString(d) {
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
func (s *Service) routes(p []string) map[string]endpoint {
	fixed := func(reason a2aerr.Reason, msg string) endpoint {
		return endpoint{serve: func(w http.ResponseWriter, _ *http.Request, _ *exchange, _ *call) { writeError(w, reason, msg) }}
	}
	switch {
	case len(p) == 2 && p[0] == ".well-known" && p[1] == "agent-card.json":
		return map[string]endpoint{http.MethodGet: {public: true, serve: s.card}}
	case len(p) == 1 && p[0] == "message:send":
		return map[string]endpoint{http.MethodPost: {serve: s.send}}
	case len(p) == 1 && p[0] == "message:stream":
		return map[string]endpoint{http.MethodPost: fixed(a2aerr.UnsupportedOperation, "Streaming is not supported")}
	case len(p) == 1 && p[0] == "extendedAgentCard":
		return map[string]endpoint{http.MethodGet: fixed(a2aerr.UnsupportedOperation, "The extended Agent Card is not supported")}
	case len(p) == 1 && p[0] == "tasks":
		return map[string]endpoint{http.MethodGet: {serve: listTasks}}
	case p[0] == "oauth":
		return s.oauthRoutes(strings.Join(p[1:], "/"))
	case len(p) < 2 || p[0] != "tasks" || p[1] == "":
		return nil
	}
	task := p[1]
	push := fixed(a2aerr.PushNotificationNotSupported, "Push notifications are not supported")
	switch {
	case len(p) == 2 && strings.HasSuffix(task, ":cancel") && task != ":cancel":
		return map[string]endpoint{http.MethodPost: fixed(a2aerr.TaskNotFound, "Task not found: "+strings.TrimSuffix(task, ":cancel"))}
	case len(p) == 2 && strings.HasSuffix(task, ":subscribe") && task != ":subscribe":
		return map[string]endpoint{http.MethodPost: fixed(a2aerr.UnsupportedOperation, "Subscribing to tasks is not supported")}
	case len(p) == 2:
		return map[string]endpoint{http.MethodGet: fixed(a2aerr.TaskNotFound, "Task not found: "+task)}
	case len(p) == 3 && p[2] == "pushNotificationConfigs":
		return map[string]endpoint{http.MethodGet: push, http.MethodPost: push}
	case len(p) == 4 && p[2] == "pushNotificationConfigs" && p[3] != "":
		return map[string]endpoint{http.MethodGet: push, http.MethodDelete: push}
	}
	return nil
}

// authenticate verifies the request's PA JWT (and delegation token) for
// the Brand. On a refusal it answers the status and headers the
// verification decided, with no body, and returns false.
func (s *Service) authenticate(w http.ResponseWriter, r *http.Request, c *call) bool {
	res, err := s.d.Verify.VerifyAgentRequest(r.Context(), &pactv1.VerifyAgentRequestRequest{
		BrandId: c.brandID,
		// Repeated headers are joined, so the verification sees (and
		// refuses) them.
		Authorization:  strings.Join(r.Header.Values("Authorization"), ", "),
		UserDelegation: strings.Join(r.Header.Values("X-A2A-User-Delegation"), ", "),
	})
	if err != nil {
		s.fail(w, r, "verify agent request", err)
		return false
	}
	if !res.GetAllowed() {
		if v := res.GetWwwAuthenticate(); v != "" {
			w.Header().Set("WWW-Authenticate", v)
		}
		if sec := res.GetRetryAfterSeconds(); sec > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(sec)))
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

// card serves the Brand's Agent Card (PACT §2.1); an unknown Brand is a
// 404 that is never application/a2a+json (PACT 1.0 §1.2).
func (s *Service) card(w http.ResponseWriter, r *http.Request, _ *exchange, c *call) {
	res, err := s.d.Brands.GetAgentCard(r.Context(), &pactv1.GetAgentCardRequest{BrandId: c.brandID})
	if isNotFound(err) {
		s.notFound(w, r, c.brandID)
		return
	}
	if err != nil {
		s.fail(w, r, "get agent card", err)
		return
	}
	w.Header().Set("Content-Type", res.GetContentType())
	w.Header().Set("Cache-Control", res.GetCacheControl())
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write([]byte(res.GetCardJson()))
}

// listTasks answers GET tasks: ordinary turns create no tasks, so the list
// is always empty; only pageSize is read (1 to 100, default 50).
func listTasks(w http.ResponseWriter, r *http.Request, _ *exchange, _ *call) {
	size := 50
	if vals, ok := r.URL.Query()["pageSize"]; ok {
		n, err := strconv.Atoi(vals[0])
		if len(vals) != 1 || err != nil || n < 1 || n > 100 || strings.Trim(vals[0], "0123456789") != "" {
			writeError(w, a2aerr.InvalidParams, "pageSize must be an integer from 1 to 100")
			return
		}
		size = n
	}
	writeA2A(w, http.StatusOK, fmt.Appendf(nil, `{"tasks":[],"nextPageToken":"","pageSize":%d,"totalSize":0}`, size))
}

// maxRootBrands bounds the Brands the root page lists.
const maxRootBrands = 200

// root serves GET /: the Brands pactd has, by display name, each with its
// Agent Card's link (and the connected page's, for a Brand whose Users
// sign in through the frontend).
func (s *Service) root(w http.ResponseWriter, r *http.Request) {
	v := view{Title: "PACT Provider"}
	page := &pactv1.PageRequest{PageSize: 100}
	for len(v.Brands) < maxRootBrands {
		res, err := s.d.Brands.ListBrands(r.Context(), &pactv1.ListBrandsRequest{Page: page})
		if err != nil {
			s.d.Logger.ErrorContext(r.Context(), "list brands", slog.String("error", err.Error()))
			v.Error, v.Brands = "The Brands cannot be listed right now. Try again later.", nil
			s.pages.render(w, http.StatusInternalServerError, "root", v)
			return
		}
		for _, b := range res.GetBrands() {
			base := "/a2a/" + url.PathEscape(b.GetBrandId())
			bv := brandView{ID: b.GetBrandId(), Name: b.GetDisplayName(), Description: b.GetDescription(),
				Card: base + "/.well-known/agent-card.json"}
			// Only a trusted-frontend Brand's Users list their grants here.
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
	s.pages.render(w, http.StatusOK, "root", v)
}

// notFound answers 404. A browser (a GET that accepts text/html) gets a
// page saying what is missing and linking the root page; every other
// client gets the bare 404 PACT 1.0 §1.2 and §1.3 require, byte for byte.
func (s *Service) notFound(w http.ResponseWriter, r *http.Request, brandID string) {
	if r.Method != http.MethodGet || !acceptsHTML(r) {
		bare(w, http.StatusNotFound)
		return
	}
	v := view{Title: "Page not found", Error: "There is no page at this address."}
	if brandID != "" {
		v.Title, v.Error = "Brand not found", "This Provider serves no such Brand."
		if brandid.Valid(brandID) { // echo only what a Brand id can be
			v.Error = "This Provider serves no Brand named “" + brandID + "”."
		}
	}
	s.pages.render(w, http.StatusNotFound, "notfound", v)
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

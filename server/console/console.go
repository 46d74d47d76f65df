// Package console is pactd's operator web console: server-rendered pages
// on their own listener (PACT_CONSOLE_LISTEN, off unless set) for what
// operators do by eye — the overview (health, replicas, signing keys,
// counts), Brands, PAs, grants, the audit trail and credentials.
//
// Sign-in takes an admin credential, the one the admin RPCs take; it opens
// a server-side session (package comment of session.go: a random id in an
// HttpOnly, SameSite=Strict cookie, stored hashed, 15 minutes idle and 8
// hours at most, ended at sign-out or when its credential is revoked).
// Every POST carries the session's anti-forgery token and is refused when
// the browser says it came from another site (Sec-Fetch-Site, Origin).
// Pages load nothing but the console's own style sheet, run no script, and
// may not be framed.
//
// Every action calls the same service handlers the RPCs call, as an admin
// caller, so the same rules apply and a refusal shows the service's
// reason.
package console

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/ratelimit"
)

// Store is what the console reads and keeps itself: sessions, the
// overview's figures, and the names pending PAs registered under.
type Store interface {
	SessionStore
	GetCredentialByHash(ctx context.Context, hash []byte) (db.Credential, error)
	GetAgentRegistrationName(ctx context.Context, agentID string) (string, error)
	ListPendingAgentIDs(ctx context.Context, afterID string, limit int) ([]string, error)
	ConsoleCounts(ctx context.Context, now time.Time) (db.Counts, error)
	ListReplicas(ctx context.Context, since time.Time, limit int) ([]db.Replica, error)
	LatestChange(ctx context.Context) (db.Change, error)
	Ping(ctx context.Context) error
	Engine() string
}

// Authenticator checks the admin credential given at sign-in
// (auth.Authenticator).
type Authenticator interface {
	Authenticate(ctx context.Context, header string) (db.Role, error)
}

// Keys lists the signing keys and their states (provkeys.Ring).
type Keys interface {
	Keys(ctx context.Context) ([]provkeys.KeyInfo, error)
}

// Feed is this replica's change feed (changefeed.Feed).
type Feed interface {
	Position() int64
	Fresh(now time.Time) bool
	Bound() time.Duration
}

// Deps are what the console needs. Every field is required.
type Deps struct {
	Store  Store
	Authn  Authenticator
	Keys   Keys
	Feed   Feed
	Agents pactv1connect.AgentServiceHandler
	Brands pactv1connect.BrandServiceHandler
	// Delegation answers FindGrants and RevokeGrant.
	Delegation  pactv1connect.DelegationServiceHandler
	Audit       pactv1connect.AuditServiceHandler
	Credentials pactv1connect.CredentialServiceHandler
	// Tokens answers RotateSigningKey.
	Tokens pactv1connect.TokenServiceHandler
	// Webhooks answers ListWebhooks and RetryWebhookDeliveries.
	Webhooks pactv1connect.WebhookServiceHandler
	// Replica is this process's id and Version its build, for the overview.
	Replica, Version string
	// Secure is whether the console is served over TLS: its cookies are
	// then Secure and __Host- prefixed.
	Secure bool
	Now    func() time.Time
	Logger *slog.Logger
}

// maxBody bounds a form: the largest is a Brand's scopes and their words.
const maxBody = 64 << 10

// Login attempts per client address: a burst, then one a second.
const (
	loginRate  = 1
	loginBurst = 10
)

// Console serves the console's pages.
type Console struct {
	d        Deps
	t        *template.Template
	sessions sessions
	logins   *ratelimit.Limiter
	mux      *http.ServeMux
}

// New returns the console.
func New(d Deps) (*Console, error) {
	t, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{d: d, t: t, sessions: sessions{store: d.Store, now: d.Now}, logins: ratelimit.New(loginRate, loginBurst, d.Now)}
	c.routes()
	return c, nil
}

// csp lets the pages load their style sheet and nothing else, post forms
// only to the console, and sit in no frame.
const csp = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP sets the console's security headers on every answer, bounds
// the body, and serves the page.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if c.d.Secure {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	defer func() {
		if p := recover(); p != nil {
			c.d.Logger.ErrorContext(r.Context(), "panic in console handler", slog.String("path", r.URL.Path), slog.Any("panic", p))
			c.fail(w, r, http.StatusInternalServerError, "Internal error: the console could not answer. The log says why.")
		}
	}()
	c.mux.ServeHTTP(w, r)
}

// Cookie names; the __Host- prefix (served over TLS) pins a cookie to this
// host and path /, with Secure, so no sibling host can set or read it.
func (c *Console) sessionCookie() string { return c.cookieName("pactd_console") }
func (c *Console) loginCookie() string   { return c.cookieName("pactd_console_login") }

func (c *Console) cookieName(n string) string {
	if c.d.Secure {
		return "__Host-" + n
	}
	return n
}

func (c *Console) setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: c.d.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: maxAge})
}

// crossSite says why a state-changing request is refused as coming from
// another site, or "" when nothing says it did. A browser's
// Sec-Fetch-Site, which no page can set, decides when present: only
// same-origin passes. Without it (older browsers) the Origin must name
// this host; "null", which Referrer-Policy: no-referrer makes browsers
// send, tells nothing and is refused then. A request with neither header
// comes from no browser and still needs the anti-forgery token.
func crossSite(r *http.Request) string {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" {
		if s != "same-origin" {
			return "the browser says this form came from another site (Sec-Fetch-Site: " + s + ")"
		}
		return ""
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return "the form came from another origin"
		}
	}
	return ""
}

// session is a signed-in request: ctx carries the admin role the services
// check, and csrf is the token its forms carry.
type session struct {
	ctx  context.Context
	id   string
	csrf string
}

// signedIn returns the request's live session; ok is false when it has
// none (the answer is then written: to the sign-in page for a GET, a
// refusal for a POST).
func (c *Console) signedIn(w http.ResponseWriter, r *http.Request) (session, bool) {
	var id string
	if ck, err := r.Cookie(c.sessionCookie()); err == nil {
		id = ck.Value
	}
	_, err := c.sessions.check(r.Context(), id)
	if errors.Is(err, errNoSession) {
		if r.Method == http.MethodGet {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
		} else {
			c.refuse(w, r, http.StatusForbidden, "Refused: you are not signed in (your session ended or you signed out). Sign in again.")
		}
		return session{}, false
	}
	if err != nil {
		c.d.Logger.ErrorContext(r.Context(), "console session", slog.String("error", err.Error()))
		c.fail(w, r, http.StatusServiceUnavailable, "The console cannot read its sessions from the database; try again.")
		return session{}, false
	}
	return session{ctx: auth.WithRole(r.Context(), db.RoleAdmin), id: id, csrf: csrfToken(id)}, true
}

// page wraps a signed-in GET handler.
func (c *Console) page(h func(w http.ResponseWriter, r *http.Request, s session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s, ok := c.signedIn(w, r); ok {
			h(w, r, s)
		}
	}
}

// action wraps a signed-in POST handler: the request must come from the
// console's own pages (crossSite) and carry the session's anti-forgery
// token.
func (c *Console) action(h func(w http.ResponseWriter, r *http.Request, s session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if why := crossSite(r); why != "" {
			c.refuse(w, r, http.StatusForbidden, "Refused: "+why+".")
			return
		}
		s, ok := c.signedIn(w, r)
		if !ok {
			return
		}
		if err := r.ParseForm(); err != nil {
			c.refuse(w, r, http.StatusBadRequest, "Refused: the form could not be read (at most 64 KiB).")
			return
		}
		if !tokenEqual(r.PostForm.Get("csrf"), s.csrf) {
			c.refuse(w, r, http.StatusForbidden, "Refused: the form's anti-forgery token is missing or wrong. Reload the page and try again.")
			return
		}
		h(w, r, s)
	}
}

// loginPage shows the sign-in form with a fresh anti-forgery cookie.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.showLogin(w, r, http.StatusOK, "")
}

func (c *Console) showLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := newRandomID()
	c.setCookie(w, c.loginCookie(), tok, 600)
	c.render(w, r, status, "login", view{Title: "Sign in", CSRF: tok, Error: msg})
}

// login checks the admin credential and opens a session. A sign-in form
// must come from the console itself (crossSite, and its token equals the
// cookie the sign-in page set), so no other site can sign a browser in.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if why := crossSite(r); why != "" {
		c.showLogin(w, r, http.StatusForbidden, "Refused: "+why+".")
		return
	}
	if err := r.ParseForm(); err != nil {
		c.showLogin(w, r, http.StatusBadRequest, "Refused: the form could not be read.")
		return
	}
	ck, err := r.Cookie(c.loginCookie())
	if err != nil || !tokenEqual(r.PostForm.Get("csrf"), ck.Value) || len(ck.Value) != sessionIDLen {
		c.showLogin(w, r, http.StatusForbidden, "Refused: the sign-in form expired or did not come from this page. Try again.")
		return
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if ok, wait := c.logins.Allow(host); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(ratelimit.RetryAfterSeconds(wait))))
		c.showLogin(w, r, http.StatusTooManyRequests, "Refused: too many sign-in attempts from your address; wait a few seconds.")
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	if tok == "" || len(tok) > auth.MaxTokenLength {
		c.showLogin(w, r, http.StatusUnauthorized, "Refused: that is not a live pactd credential.")
		return
	}
	role, err := c.d.Authn.Authenticate(r.Context(), "Bearer "+tok)
	switch {
	case connect.CodeOf(err) == connect.CodeUnavailable:
		c.showLogin(w, r, http.StatusServiceUnavailable, "The credential store cannot be read; try again.")
		return
	case err != nil:
		c.showLogin(w, r, http.StatusUnauthorized, "Refused: that is not a live pactd credential.")
		return
	case role != db.RoleAdmin:
		c.showLogin(w, r, http.StatusForbidden, "Refused: that credential's role is "+string(role)+"; the console needs an admin credential.")
		return
	}
	cred, err := c.d.Store.GetCredentialByHash(r.Context(), auth.Hash(tok))
	if err != nil {
		c.d.Logger.ErrorContext(r.Context(), "console sign-in: load credential", slog.String("error", err.Error()))
		c.showLogin(w, r, http.StatusServiceUnavailable, "The credential store cannot be read; try again.")
		return
	}
	// A session this browser had is ended rather than left to expire.
	if old, err := r.Cookie(c.sessionCookie()); err == nil {
		if err := c.sessions.end(r.Context(), old.Value); err != nil {
			c.d.Logger.WarnContext(r.Context(), "console sign-in: end the previous session", slog.String("error", err.Error()))
		}
	}
	id, err := c.sessions.open(r.Context(), cred.ID)
	if err != nil {
		c.d.Logger.ErrorContext(r.Context(), "console sign-in", slog.String("error", err.Error()))
		c.showLogin(w, r, http.StatusServiceUnavailable, "The console cannot store its session; try again.")
		return
	}
	c.d.Logger.InfoContext(r.Context(), "console sign-in", slog.String("credential_id", cred.ID))
	c.setCookie(w, c.loginCookie(), "", -1)
	c.setCookie(w, c.sessionCookie(), id, 0)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the session in the store, so its cookie opens nothing on any
// replica, and clears the cookie.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, s session) {
	if err := c.sessions.end(r.Context(), s.id); err != nil {
		c.d.Logger.ErrorContext(r.Context(), "console sign-out", slog.String("error", err.Error()))
		c.fail(w, r, http.StatusServiceUnavailable, "The console could not end the session; try again.")
		return
	}
	c.setCookie(w, c.sessionCookie(), "", -1)
	c.showLogin(w, r, http.StatusOK, "")
}

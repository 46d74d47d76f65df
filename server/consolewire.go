package server

import (
	"fmt"
	"net/http"
	"time"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/server/buildinfo"
	"pactd.dev/pactd/server/console"
)

// newConsole builds the operator console over the same services the RPCs
// use (PACT_CONSOLE_LISTEN); Run serves it on its own port.
func (s *Server) newConsole(svc Services, authn *auth.Authenticator, keys *provkeys.Ring, now func() time.Time) error {
	c, err := console.New(console.Deps{
		Store: s.store, Authn: authn, Keys: keys, Feed: s.feed,
		Agents: svc.Agent, Brands: svc.Brand, Delegation: svc.Delegation, Audit: svc.Audit, Credentials: svc.Credential, Tokens: svc.Token,
		Webhooks: svc.Webhook,
		Replica:  s.replica, Version: buildinfo.Get().Version, Secure: s.tls != nil, Now: now, Logger: s.log,
	})
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	s.console = c
	return nil
}

// ConsoleHandler is the operator console, or nil when PACT_CONSOLE_LISTEN
// is off (for tests and embedding).
func (s *Server) ConsoleHandler() http.Handler {
	if s.console == nil {
		return nil
	}
	return s.console
}

// Package pacta2a puts PACT in front of a Provider's A2A frontend by
// delegating the whole front door to pactd (pact.v1.FrontDoorService):
// routing under /a2a/{brandId}/, the Agent Card, PA JWT and delegation
// checks, A2A errors, message:send's rules, step-up tasks, receipts, the
// OAuth endpoints and every page a User sees are pactd's answers, which
// this package writes byte for byte. What stays here is what belongs to
// the frontend: the routes it mounts, running the Brand's agent (an Agent,
// or an a2a-go server behind Wrap), the sign-in hook for trusted-frontend
// Brands (Sessions), the action guard, panic recovery and the body bound.
//
// It imports nothing of pactd but its generated Connect clients, so a
// Provider imports it from another module; docs/frontends.md gives the
// same contract for frontends in other languages.
package pacta2a

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// Config configures the frontend.
type Config struct {
	// PactdURL is pactd's base URL, e.g. http://127.0.0.1:7070.
	PactdURL string
	// Token is the frontend credential pactd knows (PACT_FRONTEND_TOKEN).
	Token string
	// HTTPClient calls pactd; a client with a 70 s timeout when nil (a
	// turn's FinishTurn may follow an agent run of up to a minute).
	HTTPClient connect.HTTPClient
	// Agent answers User turns; EchoAgent when nil.
	Agent Agent
	// Sessions tells pactd who the User is at a Brand in
	// BRAND_LOGIN_MODE_TRUSTED_FRONTEND; without it those Brands' pages
	// answer 404 (signed-assertion Brands need none).
	Sessions Sessions
	// Logger receives one line per failed call to pactd and one per panic
	// (with its stack); never a header value, token or body.
	Logger *slog.Logger
}

// clients are the frontend's connections to pactd.
type clients struct {
	door  pactv1connect.FrontDoorServiceClient
	deleg pactv1connect.DelegationServiceClient
	brand pactv1connect.BrandServiceClient
}

// newClients checks the configuration and dials pactd's services with the
// frontend credential on every call.
func newClients(cfg *Config) (clients, error) {
	if u, err := url.ParseRequestURI(cfg.PactdURL); err != nil || u.Host == "" || cfg.Token == "" {
		return clients{}, errors.New("pacta2a: need pactd's URL and a frontend token")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 70 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	auth := connect.WithInterceptors(bearer(cfg.Token))
	return clients{
		door:  pactv1connect.NewFrontDoorServiceClient(cfg.HTTPClient, cfg.PactdURL, auth, connect.WithSendMaxBytes(maxCallBytes)),
		deleg: pactv1connect.NewDelegationServiceClient(cfg.HTTPClient, cfg.PactdURL, auth),
		brand: pactv1connect.NewBrandServiceClient(cfg.HTTPClient, cfg.PactdURL, auth),
	}, nil
}

// maxCallBytes bounds a call to pactd: a whole body plus the rest.
const maxCallBytes = MaxBodyBytes + 128<<10

// bearer sets the frontend credential on every call.
func bearer(token string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}
}

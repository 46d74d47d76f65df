package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// demoState is what the running demo tells the PA commands, plus what the
// PA remembers between them. It lives in {dir}/demo.json (mode 0600: it
// holds the PA's private key and tokens).
type demoState struct {
	// Frontend is the Provider's public URL.
	Frontend string `json:"frontend"`
	// Brand is the demo Brand's id.
	Brand string `json:"brand"`
	// Audience is the aud of PA JWTs.
	Audience string `json:"audience"`
	// Issuer is the PA's issuer (its client_id).
	Issuer string `json:"issuer"`
	// KID names the PA's key in its JWKS.
	KID string `json:"kid"`
	// Key is the PA's private key, PKCS #8.
	Key []byte `json:"key"`
	// PA is the PA's memory.
	PA paMemory `json:"pa"`
}

// paMemory is the PA's conversation and delegation.
type paMemory struct {
	// Subject is the PA's id for its User (the PA JWT's sub).
	Subject string `json:"subject"`
	// ContextID is the conversation to continue.
	ContextID string `json:"contextId,omitempty"`
	// AccessToken is the delegation token.
	AccessToken string `json:"accessToken,omitempty"`
	// RefreshToken renews it.
	RefreshToken string `json:"refreshToken,omitempty"`
	// Scopes were granted with it.
	Scopes []string `json:"scopes,omitempty"`
	// Expires is when AccessToken expires (unix seconds).
	Expires int64 `json:"expires,omitempty"`
	// Details is the grant's authorization_details (JSON), if it has any.
	Details string `json:"details,omitempty"`
}

func statePath(dir string) string { return filepath.Join(dir, "demo.json") }

func loadState(dir string) (*demoState, error) {
	if dir == "" {
		return nil, errors.New("no running demo: start one with `go run ./cmd/pact-demo` (or pass its -dir)")
	}
	raw, err := os.ReadFile(statePath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no running demo in %s: start one with `go run ./cmd/pact-demo` (or pass its -dir)", dir)
	}
	if err != nil {
		return nil, err
	}
	var st demoState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(dir), err)
	}
	return &st, nil
}

// save writes the state atomically.
func (st *demoState) save(dir string) error {
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}

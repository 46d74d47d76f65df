package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// hydraToken creates an OAuth 2.0 client allowed the client_credentials
// grant through Hydra's admin API and returns an access token issued to it
// by the public token endpoint.
func hydraToken(ctx context.Context, c *http.Client, admin, public string) (string, error) {
	reqBody, _ := json.Marshal(map[string]any{
		"client_name":                "pactd-peerload",
		"grant_types":                []string{"client_credentials"},
		"response_types":             []string{"token"},
		"token_endpoint_auth_method": "client_secret_post",
	})
	var cl struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := postJSON(ctx, c, strings.TrimRight(admin, "/")+"/admin/clients", "application/json", reqBody, http.StatusCreated, &cl); err != nil {
		return "", fmt.Errorf("creating the OAuth client: %w", err)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {cl.ID}, "client_secret": {cl.Secret}}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := postJSON(ctx, c, strings.TrimRight(public, "/")+"/oauth2/token", "application/x-www-form-urlencoded", []byte(form.Encode()), http.StatusOK, &tok); err != nil {
		return "", fmt.Errorf("client_credentials token: %w", err)
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("client_credentials token: no access_token in the answer")
	}
	return tok.AccessToken, nil
}

// postJSON POSTs body and decodes a JSON answer with the wanted status.
func postJSON(ctx context.Context, c *http.Client, u, contentType string, body []byte, want int, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("%s: status %d: %.300s", u, resp.StatusCode, b)
	}
	return json.Unmarshal(b, v)
}

// checkIntrospection accepts only 200 with "active": true (RFC 7662).
func checkIntrospection(status int, body []byte) string {
	if status != 200 {
		return "status " + strconv.Itoa(status)
	}
	var r struct {
		Active *bool `json:"active"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "answer not JSON"
	}
	if r.Active == nil || !*r.Active {
		return "active=false"
	}
	return ""
}

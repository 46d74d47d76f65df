package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"pactd.dev/pactd/frontends/demo"
)

const paUsage = `usage: pact-demo pa [-dir DIR] COMMAND
  send [-new] TEXT...          send a message (-new: start a new conversation)
  connect [-as USER] [-details JSON] SCOPE...
                               ask the User for scopes and wait for a token
                               (-as: play the User's browser: sign in as USER, allow all;
                               -details: RFC 9396 authorization_details, a JSON array,
                               e.g. '[{"type":"` + demo.OrderCancelType + `","order_id":"1002","actions":["cancel"]}]')
  token                        print a fresh PA JWT
  -dir DIR                     the demo's directory (default: the newest demo still running)`

// paHelp is how to run the PA commands, for hints.
const paHelp = "go run ./cmd/pact-demo pa"

// paCommands are the PA commands, as a usage error lists them.
const paCommands = "send, connect or token"

// runPA runs one PA command against the running demo. The command line is
// checked whole (the command and its flags) before the demo's state is
// read, so a typo is named as one even when no demo runs.
func runPA(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := func() { fmt.Fprintln(stderr, paUsage) }
	fs := flag.NewFlagSet("pact-demo pa", flag.ContinueOnError)
	dir := fs.String("dir", defaultDir(), "the running demo's directory (default: the newest demo still running)")
	if err := parseFlags(fs, args, usage, paHelp); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return badUsage(paHelp, "pa: name a command: %s", paCommands)
	}
	sub, rest := fs.Arg(0), fs.Args()[1:]
	cmd := flag.NewFlagSet("pact-demo pa "+sub, flag.ContinueOnError)
	var do func(p *paClient) error
	switch sub {
	case "send":
		fresh := cmd.Bool("new", false, "start a new conversation")
		if err := parseFlags(cmd, rest, usage, paHelp); err != nil {
			return err
		}
		if cmd.NArg() == 0 {
			return errors.New("pa send: say something, e.g. pa send \"show my orders\"")
		}
		do = func(p *paClient) error { return p.send(ctx, strings.Join(cmd.Args(), " "), *fresh) }
	case "connect":
		as := cmd.String("as", "", "play the User's browser: sign in as this user and allow")
		details := cmd.String("details", "", `RFC 9396 authorization_details JSON array to send, e.g. '[{"type":"`+demo.OrderCancelType+`","order_id":"1002","actions":["cancel"]}]'`)
		if err := parseFlags(cmd, rest, usage, paHelp); err != nil {
			return err
		}
		do = func(p *paClient) error { return p.connect(ctx, cmd.Args(), *as, *details) }
	case "token":
		if err := parseFlags(cmd, rest, usage, paHelp); err != nil {
			return err
		}
		do = func(p *paClient) error { _, err := fmt.Fprintln(stdout, p.jwt()); return err }
	default:
		return badUsage(paHelp, "pa: unknown command %q (%s)", sub, paCommands)
	}
	st, err := loadState(*dir)
	if err != nil {
		return err
	}
	k, err := x509.ParsePKCS8PrivateKey(st.Key)
	if err != nil {
		return err
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return errors.New("the PA key is not an ECDSA key")
	}
	p := &paClient{st: st, key: key, http: &http.Client{Timeout: 15 * time.Second}, out: stdout, self: paHelp}
	if *dir != defaultDir() {
		p.self += " -dir " + *dir
	}
	err = do(p)
	if serr := st.save(*dir); err == nil {
		err = serr
	}
	return err
}

// paClient is the personal agent.
type paClient struct {
	st   *demoState
	key  *ecdsa.PrivateKey
	http *http.Client
	out  io.Writer
	self string // how to run this command, for hints
}

// jwt is a fresh PA JWT (ES256, 120 s).
func (p *paClient) jwt() string {
	now := time.Now().Unix()
	return p.sign(map[string]any{"alg": "ES256", "typ": "JWT", "kid": p.st.KID}, map[string]any{
		"iss": p.st.Issuer, "sub": p.st.PA.Subject, "aud": p.st.Audience, "iat": now, "exp": now + 120, "jti": rand.Text(),
	})
}

func (p *paClient) sign(header, claims map[string]any) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	d := sha256.Sum256([]byte(input))
	r, s, _ := ecdsa.Sign(rand.Reader, p.key, d[:]) // fails only if crypto/rand does
	return input + "." + base64.RawURLEncoding.EncodeToString(append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...))
}

// card is what the PA reads from the Brand's Agent Card.
type card struct {
	interfaceURL, deviceURL, tokenURL, metadataURL string
	// scopes are the Brand's scopes with their descriptions, in the card's
	// order (the device-code flow's scopes object).
	scopes []scopeInfo
}

// scopeInfo is one of a Brand's scopes.
type scopeInfo struct{ id, description string }

func (p *paClient) card(ctx context.Context) (card, error) {
	var c struct {
		SupportedInterfaces []struct {
			URL string `json:"url"`
		} `json:"supportedInterfaces"`
		SecuritySchemes map[string]struct {
			OAuth2 *struct {
				Flows struct {
					DeviceCode struct {
						DeviceAuthorizationURL string          `json:"deviceAuthorizationUrl"`
						TokenURL               string          `json:"tokenUrl"`
						Scopes                 json.RawMessage `json:"scopes"`
					} `json:"deviceCode"`
				} `json:"flows"`
				MetadataURL string `json:"oauth2MetadataUrl"`
			} `json:"oauth2SecurityScheme"`
		} `json:"securitySchemes"`
	}
	if err := p.getJSON(ctx, p.st.Frontend+"/a2a/"+p.st.Brand+"/.well-known/agent-card.json", &c); err != nil {
		return card{}, err
	}
	o := c.SecuritySchemes["userDelegation"].OAuth2
	if len(c.SupportedInterfaces) == 0 || o == nil {
		return card{}, errors.New("the Agent Card offers no delegation")
	}
	return card{c.SupportedInterfaces[0].URL, o.Flows.DeviceCode.DeviceAuthorizationURL, o.Flows.DeviceCode.TokenURL, o.MetadataURL,
		orderedScopes(o.Flows.DeviceCode.Scopes)}, nil
}

// orderedScopes reads a JSON object of scope ids and descriptions in its
// own order (a Go map would lose it); nil if it is not such an object.
func orderedScopes(raw json.RawMessage) []scopeInfo {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []scopeInfo
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		var desc string
		if err := dec.Decode(&desc); err != nil {
			return nil
		}
		id, _ := k.(string)
		out = append(out, scopeInfo{id, desc})
	}
	return out
}

func (p *paClient) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	res, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, res.Status)
	}
	return json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(v)
}

// oauth posts a form to an OAuth endpoint as the PA (its JWT is the client
// authentication); it returns the status and the JSON body.
func (p *paClient) oauth(ctx context.Context, endpoint string, form url.Values) (int, map[string]any, error) {
	form.Set("client_id", p.st.Issuer)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+p.jwt())
	res, err := p.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&body)
	return res.StatusCode, body, nil
}

// keep stores a token response.
func (p *paClient) keep(body map[string]any) {
	p.st.PA.AccessToken, _ = body["access_token"].(string)
	p.st.PA.RefreshToken, _ = body["refresh_token"].(string)
	scope, _ := body["scope"].(string)
	p.st.PA.Scopes = strings.Fields(scope)
	exp, _ := body["expires_in"].(float64)
	p.st.PA.Expires = time.Now().Unix() + int64(exp)
	p.st.PA.Details = ""
	if ad, ok := body["authorization_details"]; ok {
		raw, _ := json.Marshal(ad)
		p.st.PA.Details = string(raw)
	}
}

func (p *paClient) forget() {
	p.st.PA = paMemory{Subject: p.st.PA.Subject, ContextID: p.st.PA.ContextID}
}

// send sends one message:send, with the delegation token if the PA has one.
func (p *paClient) send(ctx context.Context, text string, fresh bool) error {
	if fresh {
		p.st.PA.ContextID = ""
	}
	c, err := p.card(ctx)
	if err != nil {
		return err
	}
	if p.st.PA.RefreshToken != "" && time.Now().Unix() > p.st.PA.Expires-30 {
		status, body, err := p.oauth(ctx, c.tokenURL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {p.st.PA.RefreshToken}})
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			fmt.Fprintf(p.out, "pa: refresh refused (%d %v); dropping the delegation\n", status, body["error"])
			p.forget()
		} else {
			p.keep(body)
			fmt.Fprintln(p.out, "pa: refreshed the delegation token (the refresh token rotated)")
		}
	}
	msg := map[string]any{"messageId": "m-" + rand.Text()[:12], "role": "ROLE_USER", "parts": []any{map[string]string{"text": text}}}
	if p.st.PA.ContextID != "" {
		msg["contextId"] = p.st.PA.ContextID
	}
	b, _ := json.Marshal(map[string]any{"message": msg})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.interfaceURL+"/message:send", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+p.jwt())
	if p.st.PA.AccessToken != "" {
		req.Header.Set("X-A2A-User-Delegation", "Bearer "+p.st.PA.AccessToken)
		fmt.Fprintf(p.out, "pa → %s (delegated: %s)\n", text, strings.Join(p.st.PA.Scopes, " "))
	} else {
		fmt.Fprintf(p.out, "pa → %s\n", text)
	}
	res, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode == http.StatusUnauthorized && strings.Contains(res.Header.Get("WWW-Authenticate"), "invalid_token") {
		p.forget()
		return errors.New("401 invalid_token: the delegation token was refused (revoked?); the PA dropped it, send again to continue without it")
	}
	var out struct {
		Message *struct {
			ContextID string `json:"contextId"`
			Parts     []struct {
				Text string `json:"text"`
			} `json:"parts"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		} `json:"message"`
		Task *struct {
			ContextID string `json:"contextId"`
			Status    struct {
				State   string `json:"state"`
				Message struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"status"`
			Metadata struct {
				MissingScopes []string `json:"pact.missingScopes"`
				Link          string   `json:"pact.verificationUriComplete"`
			} `json:"metadata"`
		} `json:"task"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil {
		return fmt.Errorf("%s: %s", res.Status, raw)
	}
	switch {
	case out.Message != nil:
		p.st.PA.ContextID = out.Message.ContextID
		for _, part := range out.Message.Parts {
			fmt.Fprintf(p.out, "agent ← %s\n", part.Text)
		}
		if r, ok := out.Message.Metadata["pact.receipt"]; ok {
			claims, err := p.verifyReceipt(ctx, c, r)
			if err != nil {
				return fmt.Errorf("the reply's receipt does NOT verify: %w", err)
			}
			fmt.Fprintf(p.out, "receipt ✔ signed by the Provider (its JWKS): user %s, grant %s, scopes used %v, actions %s, at %s\n",
				claims.User, claims.GrantID, claims.ScopesUsed, claims.actions(), claims.TS)
		}
	case out.Task != nil:
		p.st.PA.ContextID = out.Task.ContextID
		for _, part := range out.Task.Status.Message.Parts {
			fmt.Fprintf(p.out, "agent ← %s\n", part.Text)
		}
		fmt.Fprintf(p.out, "task %s: needs %v; the User's link: %s\n", out.Task.Status.State, out.Task.Metadata.MissingScopes, out.Task.Metadata.Link)
		fmt.Fprintf(p.out, "next: %s %s\n", p.self, stepUpCommand(p.st.PA.Scopes, out.Task.Metadata.MissingScopes, text))
	default:
		return fmt.Errorf("unexpected answer: %s", raw)
	}
	return nil
}

// stepUpCommand is the pa command that asks for what a step-up task
// needs: each scope once (those held, then the missing ones not held), and,
// when a missing scope is one the grant already holds, the
// authorization_details the request needs. A held scope that is still
// missing means the grant restricts it to certain resources (PACT §5.7):
// for the demo Brand's orders:cancel, an entry for the order the message
// names. The new grant replaces the PA's current one.
func stepUpCommand(held, missing []string, text string) string {
	scopes := slices.Clone(held)
	restricted := false
	for _, s := range missing {
		if slices.Contains(held, s) {
			restricted = true
		} else if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	cmd := "connect "
	if order := orderRE.FindString(text); restricted && order != "" && slices.Contains(missing, demo.ScopeOrdersCancel) {
		entry, _ := json.Marshal(struct {
			Type    string   `json:"type"`
			OrderID string   `json:"order_id"`
			Actions []string `json:"actions"`
		}{demo.OrderCancelType, order, []string{"cancel"}})
		cmd += "-details '[" + string(entry) + "]' "
	}
	return cmd + strings.Join(scopes, " ")
}

// orderRE finds an order number in a message (the demo Brand's pattern).
var orderRE = regexp.MustCompile(`\b[0-9]{4}\b`)

// connect runs the device grant for the scopes (plus those the PA holds).
// details, when not empty, is sent as authorization_details (PACT §5.7).
func (p *paClient) connect(ctx context.Context, scopes []string, as, details string) error {
	scopes = slices.Compact(slices.Sorted(slices.Values(slices.Concat(scopes, p.st.PA.Scopes))))
	if len(scopes) == 0 {
		return errors.New("pa connect: name the scopes, e.g. pa connect orders:read")
	}
	c, err := p.card(ctx)
	if err != nil {
		return err
	}
	form := url.Values{"scope": {strings.Join(scopes, " ")}}
	if details != "" {
		form.Set("authorization_details", details)
	}
	status, da, err := p.oauth(ctx, c.deviceURL, form)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return deviceRefusal(p.st.Brand, c, scopes, status, da)
	}
	code, _ := da["user_code"].(string)
	link, _ := da["verification_uri_complete"].(string)
	deviceCode, _ := da["device_code"].(string)
	fmt.Fprintf(p.out, "pa: asking the User for %s\n\n  Open:  %s\n  Code:  %s\n\n", strings.Join(scopes, " "), link, code)
	if as != "" {
		fmt.Fprintf(p.out, "pa: -as %s: playing the User's browser (sign in, compare the code, Allow)\n", as)
		if err := playUser(ctx, link, as, code, scopes); err != nil {
			return err
		}
	}
	interval := 3 * time.Second
	if n, ok := da["interval"].(float64); ok && n > 0 {
		interval = time.Duration(n) * time.Second
	}
	deadline := time.Now().Add(10 * time.Minute)
	fmt.Fprintln(p.out, "pa: waiting for the User's decision ...")
	for time.Now().Before(deadline) {
		status, body, err := p.oauth(ctx, c.tokenURL, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {deviceCode}})
		if err != nil {
			return err
		}
		switch e, _ := body["error"].(string); {
		case status == http.StatusOK:
			p.keep(body)
			fmt.Fprintf(p.out, "pa: connected; granted: %s (the User may grant less than asked)\n", strings.Join(p.st.PA.Scopes, " "))
			if ad, ok := body["authorization_details"]; ok {
				raw, _ := json.Marshal(ad)
				fmt.Fprintf(p.out, "pa: limited to authorization_details %s\n", raw)
			}
			return nil
		case e == "slow_down":
			interval += 5 * time.Second
		case e != "authorization_pending":
			return fmt.Errorf("no token: %d %s", status, e)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return errors.New("the User did not decide in time")
}

// deviceRefusal says in words why the device authorization endpoint
// refused: for invalid_scope, which of the scopes asked the Brand does not
// define, then the Brand's scopes (from its Agent Card) to pick from;
// otherwise the OAuth error and its description.
func deviceRefusal(brand string, c card, asked []string, status int, body map[string]any) error {
	code, _ := body["error"].(string)
	desc, _ := body["error_description"].(string)
	refused := fmt.Sprintf("%d %s", status, cmp.Or(code, "without an OAuth error"))
	if desc != "" {
		refused += ": " + desc
	}
	var unknown []string
	for _, s := range asked {
		if !slices.ContainsFunc(c.scopes, func(d scopeInfo) bool { return d.id == s }) {
			unknown = append(unknown, strconv.Quote(s))
		}
	}
	if code != "invalid_scope" || len(c.scopes) == 0 || len(unknown) == 0 {
		return fmt.Errorf("pa connect: device authorization refused: %s", refused)
	}
	var b strings.Builder
	what := "the scope " + unknown[0]
	if len(unknown) > 1 {
		what = "the scopes " + strings.Join(unknown, ", ")
	}
	fmt.Fprintf(&b, "pa connect: the Brand %s does not define %s (device authorization refused: %s)\nits scopes:", brand, what, refused)
	width := 0
	for _, d := range c.scopes {
		width = max(width, len(d.id))
	}
	for _, d := range c.scopes {
		fmt.Fprintf(&b, "\n  %-*s  %s", width, d.id, d.description)
	}
	return errors.New(b.String())
}

// hiddenField finds a hidden form field's value in a page.
func hiddenField(page []byte, name string) string {
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindSubmatch(page)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// playUser does what the User does in a browser: open the link, sign in
// at the Brand, check that the page shows the code, and allow every scope.
func playUser(ctx context.Context, link, user, code string, scopes []string) error {
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Timeout: 15 * time.Second}
	post := func(u string, form url.Values) (*http.Response, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := b.Do(req) // follows the 303 to the next page
		if err != nil {
			return nil, nil, err
		}
		defer res.Body.Close()
		page, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return res, page, err
	}
	u, err := url.Parse(link)
	if err != nil {
		return err
	}
	res, page, err := post(link, url.Values{"username": {user}, "return_to": {u.Query().Get("return_to")}})
	if err != nil {
		return err
	}
	csrf := hiddenField(page, "csrf")
	if res.StatusCode != http.StatusOK || csrf == "" {
		return fmt.Errorf("sign-in did not lead to the consent page: %s", res.Status)
	}
	// Allow only when the page shows the code the PA printed (RFC 8628 §5.4).
	if !strings.Contains(string(page), `<strong class="usercode">`+code+`</strong>`) {
		return fmt.Errorf("the consent page does not show the code %s: deny it", code)
	}
	decision := res.Request.URL.ResolveReference(&url.URL{Path: "consent/decision"}).String()
	res, _, err = post(decision, url.Values{"csrf": {csrf}, "user_code": {hiddenField(page, "user_code")},
		"scope": scopes, "decision": {"allow"}})
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK || res.Request.URL.Query().Get("status") != "approved" {
		return fmt.Errorf("the consent page did not approve: %s %s", res.Status, res.Request.URL)
	}
	return nil
}

// receiptClaims are the claims of a receipt (PACT §5.6).
type receiptClaims struct {
	GrantID    string   `json:"grantId"`
	User       string   `json:"user"`
	PA         string   `json:"pa"`
	Brand      string   `json:"brand"`
	ScopesUsed []string `json:"scopesUsed"`
	Actions    []struct {
		Tool     string `json:"tool"`
		ArgsHash string `json:"argsHash"`
	} `json:"actions"`
	TS string `json:"ts"`
}

func (c receiptClaims) actions() string {
	var tools []string
	for _, a := range c.Actions {
		tools = append(tools, a.Tool)
	}
	return fmt.Sprint(tools)
}

// verifyReceipt checks a receipt as a PA does: the compact JWS (ES256,
// typ pact-receipt+jws) verifies with a key from the jwks_uri of the
// Brand's metadata, its payload equals the claims as canonical JSON, and
// pa and brand name this PA and this Brand.
func (p *paClient) verifyReceipt(ctx context.Context, c card, raw json.RawMessage) (receiptClaims, error) {
	var r struct {
		JWS    string          `json:"jws"`
		Claims json.RawMessage `json:"claims"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return receiptClaims{}, err
	}
	var md struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.getJSON(ctx, c.metadataURL, &md); err != nil {
		return receiptClaims{}, err
	}
	var set struct {
		Keys []struct{ Kid, Kty, Crv, X, Y string } `json:"keys"`
	}
	if err := p.getJSON(ctx, md.JWKSURI, &set); err != nil {
		return receiptClaims{}, err
	}
	payload, err := verifyES256(r.JWS, "pact-receipt+jws", func(kid string) *ecdsa.PublicKey {
		for _, k := range set.Keys {
			if k.Kid == kid && k.Kty == "EC" && k.Crv == "P-256" {
				x, _ := base64.RawURLEncoding.DecodeString(k.X)
				y, _ := base64.RawURLEncoding.DecodeString(k.Y)
				pub, _ := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), slices.Concat([]byte{4}, x, y))
				return pub
			}
		}
		return nil
	})
	if err != nil {
		return receiptClaims{}, err
	}
	if !bytes.Equal(canonical(payload), canonical(r.Claims)) {
		return receiptClaims{}, errors.New("claims differ from the signed payload")
	}
	var claims receiptClaims
	if err := json.Unmarshal(payload, &claims); err != nil {
		return receiptClaims{}, err
	}
	if claims.PA != p.st.Issuer || claims.Brand != c.interfaceURL {
		return receiptClaims{}, fmt.Errorf("receipt names pa %q and brand %q", claims.PA, claims.Brand)
	}
	return claims, nil
}

// verifyES256 checks a compact JWS and returns its payload.
func verifyES256(jws, typ string, key func(kid string) *ecdsa.PublicKey) ([]byte, error) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a compact JWS")
	}
	var h struct{ Alg, Kid, Typ string }
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(hb, &h) != nil || h.Alg != "ES256" || h.Typ != typ {
		return nil, fmt.Errorf("header %s is not an ES256 %s", hb, typ)
	}
	pub := key(h.Kid)
	if pub == nil {
		return nil, fmt.Errorf("kid %q is not in the Provider's JWKS", h.Kid)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, errors.New("malformed signature")
	}
	d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, errors.New("bad signature")
	}
	return base64.RawURLEncoding.DecodeString(parts[1])
}

// canonical re-encodes JSON with sorted keys (encoding/json sorts map keys).
func canonical(raw []byte) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	out, _ := json.Marshal(v)
	return out
}

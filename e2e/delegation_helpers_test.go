package e2e_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/url"
	"slices"
	"strings"
	"testing"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// The PA's side of PACT Delegated: the OAuth endpoints on the frontend (a
// reverse proxy to pactd), token responses, step-up tasks and receipts,
// checked as strictly as a PA client reads them.

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

// oauthPost posts a form to {interfaceUrl}/oauth/{endpoint} of a Brand; auth
// is the Authorization header value ("" for none).
func (w *world) oauthPost(t *testing.T, brand, endpoint, auth string, form url.Values) response {
	t.Helper()
	hdrs := []string{"Content-Type: application/x-www-form-urlencoded"}
	if auth != "" {
		hdrs = append(hdrs, "Authorization: "+auth)
	}
	return w.do(t, "POST", "/a2a/"+brand+"/oauth/"+endpoint, form.Encode(), hdrs...)
}

// paForm is a form with the PA's client_id and the given pairs.
func (w *world) paForm(kv ...string) url.Values {
	f := url.Values{"client_id": {w.issuer}}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Set(kv[i], kv[i+1])
	}
	return f
}

// deviceAuthorization is an RFC 8628 §3.2 response.
type deviceAuthorization struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// tokenResponse is an RFC 6749 §5.1 response.
type tokenResponse struct {
	TokenType    string `json:"token_type"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
}

// strict decodes a JSON body with no unknown members.
func strict(t *testing.T, body string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

// wantOAuthJSON checks a 200 OAuth answer and decodes it.
func wantOAuthJSON(t *testing.T, name string, r response, v any) {
	t.Helper()
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" ||
		r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
		t.Fatalf("%s: %d %v %s; want 200 JSON, no-store", name, r.status, r.header, r.body)
	}
	strict(t, r.body, v)
}

// wantOAuthError checks an OAuth error answer: status and error code.
func wantOAuthError(t *testing.T, name string, r response, status int, code string) {
	t.Helper()
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if r.status != status || json.Unmarshal([]byte(r.body), &e) != nil || e.Error != code || r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: %d %q %s; want %d error %q", name, r.status, r.header.Get("Cache-Control"), r.body, status, code)
	}
	if status == 401 && r.header.Get("WWW-Authenticate") != `Bearer realm="a2a"` {
		t.Errorf("%s: WWW-Authenticate = %q", name, r.header.Get("WWW-Authenticate"))
	}
}

// wantInvalidToken checks the 401 of a refused delegation token.
func wantInvalidToken(t *testing.T, name string, r response) {
	t.Helper()
	wantBare(t, name, r, 401)
	if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="a2a", error="invalid_token"` {
		t.Errorf("%s: WWW-Authenticate = %q", name, got)
	}
}

// startDevice asks for scope as sub and checks the response shape.
func (w *world) startDevice(t *testing.T, sub, scope string) deviceAuthorization {
	t.Helper()
	var d deviceAuthorization
	wantOAuthJSON(t, "device authorization", w.oauthPost(t, shop, "device_authorization", "Bearer "+w.token(t, sub), w.paForm("scope", scope)), &d)
	consent := w.feURL + "/a2a/" + shop + "/oauth/consent"
	login := w.feURL + "/demo/" + shop + "/login?return_to="
	if !strings.HasPrefix(d.DeviceCode, "dc_") || len(d.UserCode) != 9 || d.UserCode[4] != '-' ||
		strings.Trim(strings.ReplaceAll(d.UserCode, "-", ""), "BCDFGHJKLMNPQRSTVWXZ") != "" ||
		d.VerificationURI != login+url.QueryEscape(consent) ||
		d.VerificationURIComplete != login+url.QueryEscape(consent+"?user_code="+d.UserCode) ||
		d.ExpiresIn != 600 || d.Interval != 3 {
		t.Fatalf("device authorization %+v", d)
	}
	return d
}

// poll is one token request for a device code.
func (w *world) poll(t *testing.T, sub, deviceCode string) response {
	t.Helper()
	return w.oauthPost(t, shop, "token", "Bearer "+w.token(t, sub), w.paForm("grant_type", deviceGrant, "device_code", deviceCode))
}

// refresh is one refresh-grant token request.
func (w *world) refresh(t *testing.T, sub, refreshToken string) response {
	t.Helper()
	return w.oauthPost(t, shop, "token", "Bearer "+w.token(t, sub), w.paForm("grant_type", "refresh_token", "refresh_token", refreshToken))
}

// approve gives consent as the frontend does, through the RPCs.
func (w *world) approve(t *testing.T, userCode, brandUser string, scopes ...string) *pactv1.ApproveConsentResponse {
	t.Helper()
	res, err := w.deleg.ApproveConsent(t.Context(), &pactv1.ApproveConsentRequest{BrandId: shop, UserCode: userCode, BrandUser: brandUser, Scopes: scopes})
	if err != nil {
		t.Fatalf("ApproveConsent: %v", err)
	}
	return res
}

// connect runs the whole device grant for sub: request, consent by
// brandUser for the approved scopes, token.
func (w *world) connect(t *testing.T, sub, brandUser, request string, approved ...string) tokenResponse {
	t.Helper()
	d := w.startDevice(t, sub, request)
	w.approve(t, d.UserCode, brandUser, approved...)
	var tok tokenResponse
	wantOAuthJSON(t, "token", w.poll(t, sub, d.DeviceCode), &tok)
	return tok
}

// delegated sends message:send with a delegation token.
func (w *world) delegated(t *testing.T, sub, access string, msg map[string]any) response {
	t.Helper()
	return w.send(t, shop, w.token(t, sub), msg, "X-A2A-User-Delegation: Bearer "+access)
}

// stepUpTask is the strict shape of a step-up answer (PACT §5.5).
type stepUpTask struct {
	Task struct {
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State   string `json:"state"`
			Message struct {
				MessageID string `json:"messageId"`
				ContextID string `json:"contextId"`
				Role      string `json:"role"`
				Parts     []struct {
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

// decodeStepUp checks a step-up task for the missing scopes.
func decodeStepUp(t *testing.T, r response, missing ...string) stepUpTask {
	t.Helper()
	if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" {
		t.Fatalf("step-up: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var s stepUpTask
	strict(t, r.body, &s)
	k := s.Task
	if !strings.HasPrefix(k.ID, "t-") || k.ContextID == "" || k.Status.State != "TASK_STATE_AUTH_REQUIRED" ||
		k.Status.Message.Role != "ROLE_AGENT" || k.Status.Message.ContextID != k.ContextID || k.Status.Message.MessageID == "" ||
		len(k.Status.Message.Parts) != 1 || k.Status.Message.Parts[0].Text == "" ||
		!slices.Equal(k.Metadata.MissingScopes, missing) || !strings.Contains(k.Metadata.Link, "/login?return_to=") {
		t.Fatalf("step-up task %s; want missing %v", r.body, missing)
	}
	return s
}

// receiptReply is the strict shape of a delegated reply.
type receiptReply struct {
	Message struct {
		MessageID string `json:"messageId"`
		ContextID string `json:"contextId"`
		Role      string `json:"role"`
		Parts     []struct {
			Text string `json:"text"`
		} `json:"parts"`
		Metadata struct {
			Receipt struct {
				JWS    string          `json:"jws"`
				Claims json.RawMessage `json:"claims"`
			} `json:"pact.receipt"`
		} `json:"metadata"`
	} `json:"message"`
}

// receipt is the claims of a receipt (PACT §5.6).
type receipt struct {
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

// verifyReceipt checks a delegated reply as a PA's verifyReceipt does:
// jwks_uri from the metadata the card names, the compact JWS (ES256,
// pact-receipt+jws) against it, canonical JSON of payload and claims equal,
// pa and brand this PA and Brand. It returns the reply and the claims.
func (w *world) verifyReceipt(t *testing.T, r response) (receiptReply, receipt) {
	t.Helper()
	return w.verifyReceiptAt(t, shop, r)
}

// verifyReceiptAt is verifyReceipt for a reply of brand.
func (w *world) verifyReceiptAt(t *testing.T, brand string, r response) (receiptReply, receipt) {
	t.Helper()
	if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" {
		t.Fatalf("delegated reply: %d %s", r.status, r.body)
	}
	var rep receiptReply
	strict(t, r.body, &rep)
	jws := rep.Message.Metadata.Receipt.JWS
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		t.Fatalf("receipt jws %q is not compact", jws)
	}
	var hdr struct{ Alg, Kid, Typ string }
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if json.Unmarshal(hb, &hdr) != nil || hdr.Alg != "ES256" || hdr.Typ != "pact-receipt+jws" || hdr.Kid == "" {
		t.Fatalf("receipt header %s", hb)
	}
	pub := w.providerKeyAt(t, brand, hdr.Kid)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || len(sig) != 64 || !ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatalf("receipt signature does not verify")
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if a, b := canonicalJSON(t, payload), canonicalJSON(t, rep.Message.Metadata.Receipt.Claims); !bytes.Equal(a, b) {
		t.Fatalf("receipt claims %s differ from the payload %s", b, a)
	}
	var c receipt
	strict(t, string(payload), &c)
	if c.PA != w.issuer || c.Brand != w.feURL+"/a2a/"+brand || c.ScopesUsed == nil || c.Actions == nil {
		t.Fatalf("receipt claims %s", payload)
	}
	return rep, c
}

// providerKeyAt finds kid in the JWKS the metadata of brand's card points to.
func (w *world) providerKeyAt(t *testing.T, brand, kid string) *ecdsa.PublicKey {
	t.Helper()
	var c struct {
		SecuritySchemes map[string]struct {
			OAuth2 struct {
				MetadataURL string `json:"oauth2MetadataUrl"`
			} `json:"oauth2SecurityScheme"`
		} `json:"securitySchemes"`
	}
	w.getJSON(t, w.feURL+"/a2a/"+brand+"/.well-known/agent-card.json", &c)
	var md struct {
		JWKSURI string `json:"jwks_uri"`
	}
	w.getJSON(t, c.SecuritySchemes["userDelegation"].OAuth2.MetadataURL, &md)
	var set struct {
		Keys []struct{ Kty, Crv, Kid, Alg, Use, X, Y string } `json:"keys"`
	}
	w.getJSON(t, md.JWKSURI, &set)
	for _, k := range set.Keys {
		if k.Kid != kid {
			continue
		}
		x, _ := base64.RawURLEncoding.DecodeString(k.X)
		y, _ := base64.RawURLEncoding.DecodeString(k.Y)
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), slices.Concat([]byte{4}, x, y))
		if err != nil || k.Kty != "EC" || k.Crv != "P-256" {
			t.Fatalf("JWKS key %+v: %v", k, err)
		}
		return pub
	}
	t.Fatalf("kid %s is not in the JWKS at %s", kid, md.JWKSURI)
	return nil
}

// getJSON fetches an absolute URL (which must be on the frontend) and
// decodes it.
func (w *world) getJSON(t *testing.T, u string, v any) response {
	t.Helper()
	path, ok := strings.CutPrefix(u, w.feURL)
	if !ok {
		t.Fatalf("%s is not on the frontend %s", u, w.feURL)
	}
	r := w.do(t, "GET", path, "")
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", u, r.status, r.body)
	}
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return r
}

// canonicalJSON re-encodes JSON with sorted keys.
func canonicalJSON(t *testing.T, raw []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("canonical JSON of %s: %v", raw, err)
	}
	out, _ := json.Marshal(v)
	return out
}

// jwtPart decodes one segment of a compact JWS.
func jwtPart(t *testing.T, tok string, i int, v any) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%d-part token", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil || json.Unmarshal(b, v) != nil {
		t.Fatalf("token segment %d: %s", i, b)
	}
}

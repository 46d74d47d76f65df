package delegation_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/services/delegation"
	"pactd.dev/pactd/services/delegation/codes"
	"pactd.dev/pactd/token/jose"
)

// The signed-login Brands of these tests: "signed" (seeded by newEnv) and
// "signed2", a second Brand with its own issuer and keys, whose consent URL
// is the wrong aud at "signed".
const (
	signedJWKS   = loginURL + "/jwks.json"
	signed2Login = "https://login.two.example"
	signed2JWKS  = signed2Login + "/jwks.json"
)

// testRSAKey is one 2048-bit key for the whole test binary (generating one
// is slow).
var testRSAKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// brandLogin plays the Brands' logins: it holds their signing keys and
// serves their key sets through a fake key source (the network edge).
type brandLogin struct {
	ec, other, ec2 *ecdsa.PrivateKey
	refreshes      atomic.Int32
	// fail, when set, is the error every key fetch returns.
	fail atomic.Pointer[error]
	sets map[string]*jose.KeySet
	seq  atomic.Int64
}

func newBrandLogin(t *testing.T) *brandLogin {
	t.Helper()
	gen := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	l := &brandLogin{ec: gen(), other: gen(), ec2: gen()}
	ec, err := jose.NewECKey("k-ec", &l.ec.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := jose.NewRSAKey("k-rsa", &testRSAKey().PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	ec2, err := jose.NewECKey("k-two", &l.ec2.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	one, err := jose.NewKeySet(ec, rs)
	if err != nil {
		t.Fatal(err)
	}
	two, err := jose.NewKeySet(ec2)
	if err != nil {
		t.Fatal(err)
	}
	l.sets = map[string]*jose.KeySet{signedJWKS: one, signed2JWKS: two}
	return l
}

// Keys and Refresh make brandLogin a delegation.BrandKeys.
func (l *brandLogin) Keys(_ context.Context, uri string) (*jose.KeySet, error) {
	if p := l.fail.Load(); p != nil {
		return nil, *p
	}
	ks, ok := l.sets[uri]
	if !ok {
		return nil, &jose.StatusError{Code: 404}
	}
	return ks, nil
}

func (l *brandLogin) Refresh(ctx context.Context, uri string) (*jose.KeySet, error) {
	l.refreshes.Add(1)
	return l.Keys(ctx, uri)
}

// jti returns a fresh assertion id.
func (l *brandLogin) jti() string { return fmt.Sprintf("jti-%d", l.seq.Add(1)) }

// claims are the claims of a valid assertion of Brand "signed" for code.
func (l *brandLogin) claims(now time.Time, code string) map[string]any {
	return map[string]any{
		"iss": loginURL, "aud": publicURL + "/a2a/signed/oauth/consent", "sub": "user-42", "jti": l.jti(),
		"iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix(), "user_code": code, "email": "user@acme.example",
	}
}

// es256 signs claims with the "signed" Brand's EC key.
func (l *brandLogin) es256(t *testing.T, claims map[string]any) string {
	t.Helper()
	return signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec", "typ": "JWT"}, claims, l.ec)
}

// mustJSON marshals v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// signJWS signs header and claims (maps or raw JSON strings) with key: an
// *ecdsa.PrivateKey (ES256, raw R||S), an *rsa.PrivateKey (RS256), a
// []byte (HS256) or nil (no signature, for alg none).
func signJWS(t *testing.T, header, claims any, key any) string {
	t.Helper()
	raw := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		return mustJSON(t, v)
	}
	input := base64.RawURLEncoding.EncodeToString([]byte(raw(header))) + "." + base64.RawURLEncoding.EncodeToString([]byte(raw(claims)))
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:]); err != nil {
			t.Fatal(err)
		}
	case []byte:
		m := hmac.New(sha256.New, k)
		m.Write([]byte(input))
		sig = m.Sum(nil)
	case nil:
	default:
		t.Fatalf("unknown key type %T", key)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// with returns a copy of claims with the changes; a nil value deletes.
func with(claims map[string]any, changes map[string]any) map[string]any {
	out := make(map[string]any, len(claims))
	for k, v := range claims {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// signedEnv is a delegation service whose signed-login Brands verify
// assertions against login's keys.
func signedEnv(t *testing.T, s db.Store, opts ...envOption) (*env, *brandLogin) {
	t.Helper()
	login := newBrandLogin(t)
	e := newEnv(t, s, append([]envOption{func(d *delegation.Deps) { d.BrandKeys = login }}, opts...)...)
	b := db.Brand{ID: "signed2", DisplayName: "Signed Two", CreateTime: start, UpdateTime: start,
		Delegation: db.Delegation{Enabled: true, LoginURL: signed2Login, LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION.String(),
			AssertionIssuer: signed2Login, AssertionJWKSURI: signed2JWKS, Scopes: []db.Scope{{ID: "orders:read", Description: "See your orders"}}}}
	if _, err := s.CreateBrand(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	return e, login
}

// pendingCode starts a device authorization at Brand "signed" and returns
// its user and device codes.
func (e *env) pendingCode() (userCode, deviceCode string) {
	e.t.Helper()
	d := e.startDevice("signed", paAuth, paIssuer, "orders:read")
	return d["user_code"].(string), d["device_code"].(string)
}

// approveSigned approves code at "signed" with an assertion.
func (e *env) approveSigned(ctx context.Context, code, assertion string, scopes ...string) (*pactv1.ApproveConsentResponse, error) {
	return e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", UserCode: code, BrandAssertion: assertion, Scopes: scopes})
}

// wantRefusal checks an RPC error's code and ErrorInfo reason (and, for
// InvalidArgument, the BadRequest naming the field).
func wantRefusal(t *testing.T, err error, code connect.Code, reason string) {
	t.Helper()
	if connect.CodeOf(err) != code || rpcerr.Reason(err) != reason {
		t.Fatalf("err = %v (reason %q), want %v %s", err, rpcerr.Reason(err), code, reason)
	}
	if code == connect.CodeInvalidArgument && len(rpcerr.FieldViolations(err)) == 0 {
		t.Fatalf("InvalidArgument %v without a BadRequest detail", err)
	}
	var ce *connect.Error
	if errors.As(err, &ce) && strings.Contains(ce.Message(), "eyJ") {
		t.Fatalf("the error echoes an assertion: %q", ce.Message())
	}
}

// wantGrant checks the positive control: the approval made a grant of the
// Brand user with exactly the scopes.
func (e *env) wantGrant(ap *pactv1.ApproveConsentResponse, err error, user string, scopes ...string) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("positive control: %v", err)
	}
	g, gerr := e.store.GetGrant(e.t.Context(), ap.GetGrantId())
	if gerr != nil || g.BrandID != "signed" || g.BrandUser != user || !slices.Equal(g.Scopes, scopes) || !slices.Equal(ap.GetScopes(), scopes) {
		e.t.Fatalf("positive control: grant %+v, %v (response %v); want %s with %v", g, gerr, ap, user, scopes)
	}
}

const (
	rMalformed       = "BRAND_ASSERTION_REFUSAL_MALFORMED"
	rAlgorithm       = "BRAND_ASSERTION_REFUSAL_ALGORITHM"
	rForbiddenHeader = "BRAND_ASSERTION_REFUSAL_FORBIDDEN_HEADER"
	rUnknownKey      = "BRAND_ASSERTION_REFUSAL_UNKNOWN_KEY"
	rSignature       = "BRAND_ASSERTION_REFUSAL_SIGNATURE"
	rIssuer          = "BRAND_ASSERTION_REFUSAL_ISSUER"
	rAudience        = "BRAND_ASSERTION_REFUSAL_AUDIENCE"
	rSubject         = "BRAND_ASSERTION_REFUSAL_SUBJECT"
	rNotYetValid     = "BRAND_ASSERTION_REFUSAL_NOT_YET_VALID"
	rExpired         = "BRAND_ASSERTION_REFUSAL_EXPIRED"
	rLifetime        = "BRAND_ASSERTION_REFUSAL_LIFETIME"
	rTooOld          = "BRAND_ASSERTION_REFUSAL_TOO_OLD"
	rClaims          = "BRAND_ASSERTION_REFUSAL_CLAIMS"
	rUserCodeMissing = "BRAND_ASSERTION_REFUSAL_USER_CODE_MISSING"
	rUserCodeOther   = "BRAND_ASSERTION_REFUSAL_USER_CODE_MISMATCH"
	rReplayed        = "BRAND_ASSERTION_REFUSAL_REPLAYED"
	rNotPending      = "BRAND_ASSERTION_REFUSAL_NOT_PENDING"
	rKeysUnavailable = "BRAND_ASSERTION_REFUSAL_KEYS_UNAVAILABLE"
)

// Spec §6 item 33 (and §2.5): every refused Brand assertion, each with its
// exact code and reason, grouped; each refusal changes nothing, and each
// group ends with a positive control on the same user code — a valid
// assertion (reusing the jti of the refused ones, which a refusal does not
// use up) approves, and the grant exists with the granted scopes.
func TestSignedAssertionRefusals(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		now := e.clk.Now()
		type refusal struct {
			name   string
			token  func(code, jti string) string
			code   connect.Code
			reason string
		}
		fp, ia := connect.CodeFailedPrecondition, connect.CodeInvalidArgument
		claims := func(code, jti string, changes map[string]any) map[string]any {
			return with(with(login.claims(now, code), map[string]any{"jti": jti}), changes)
		}
		es := func(changes map[string]any) func(code, jti string) string {
			return func(code, jti string) string { return login.es256(t, claims(code, jti, changes)) }
		}
		hdr := func(h any, key any) func(code, jti string) string {
			return func(code, jti string) string { return signJWS(t, h, claims(code, jti, nil), key) }
		}
		rawClaims := func(tmpl string) func(code, jti string) string {
			return func(code, jti string) string {
				return signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec"}, fmt.Sprintf(tmpl, code, jti), login.ec)
			}
		}
		base := `"iss":"` + loginURL + `","aud":"` + publicURL + `/a2a/signed/oauth/consent","iat":` + fmt.Sprint(now.Unix()) +
			`,"exp":` + fmt.Sprint(now.Unix()+120) + `,"user_code":%q,"jti":%q`
		rsaPub := testRSAKey().PublicKey
		groups := []struct {
			name     string
			refusals []refusal
		}{
			{"expired", []refusal{
				{"exp-31s-ago", es(map[string]any{"iat": now.Unix() - 200, "exp": now.Unix() - 31}), fp, rExpired},
				{"exp-missing", es(map[string]any{"exp": nil}), fp, rExpired},
				{"exp-string", es(map[string]any{"exp": fmt.Sprint(now.Unix() + 60)}), fp, rExpired},
				{"exp-zero", es(map[string]any{"exp": 0}), fp, rExpired},
			}},
			{"too-old-and-lifetime", []refusal{
				{"301s-old-within-exp-skew", es(map[string]any{"iat": now.Unix() - 301, "exp": now.Unix() - 1}), fp, rTooOld},
				{"lifetime-301s", es(map[string]any{"exp": now.Unix() + 301}), fp, rLifetime},
				{"exp-equals-iat", es(map[string]any{"exp": now.Unix()}), fp, rLifetime},
				{"exp-before-iat", es(map[string]any{"iat": now.Unix() + 10, "exp": now.Unix() + 5}), fp, rLifetime},
			}},
			{"not-yet-valid", []refusal{
				{"iat-31s-ahead", es(map[string]any{"iat": now.Unix() + 31, "exp": now.Unix() + 90}), fp, rNotYetValid},
				{"iat-missing", es(map[string]any{"iat": nil}), fp, rNotYetValid},
				{"iat-string", es(map[string]any{"iat": "now"}), fp, rNotYetValid},
				{"nbf-31s-ahead", es(map[string]any{"nbf": now.Unix() + 31}), fp, rNotYetValid},
				{"nbf-not-a-number", es(map[string]any{"nbf": "soon"}), fp, rClaims},
			}},
			{"wrong-aud", []refusal{
				{"another-brands-consent-url", es(map[string]any{"aud": publicURL + "/a2a/signed2/oauth/consent"}), fp, rAudience},
				{"acme-consent-url", es(map[string]any{"aud": publicURL + "/a2a/acme/oauth/consent"}), fp, rAudience},
				{"interface-url", es(map[string]any{"aud": publicURL + "/a2a/signed"}), fp, rAudience},
				{"decision-url", es(map[string]any{"aud": publicURL + "/a2a/signed/oauth/consent/decision"}), fp, rAudience},
				{"trailing-slash", es(map[string]any{"aud": publicURL + "/a2a/signed/oauth/consent/"}), fp, rAudience},
				{"array-with-the-right-value", es(map[string]any{"aud": []string{publicURL + "/a2a/signed/oauth/consent"}}), fp, rAudience},
				{"empty", es(map[string]any{"aud": ""}), fp, rAudience},
				{"missing", es(map[string]any{"aud": nil}), fp, rAudience},
			}},
			{"wrong-key", []refusal{
				{"another-key-same-kid", hdr(map[string]any{"alg": "ES256", "kid": "k-ec"}, login.other), fp, rSignature},
				{"rsa-kid-es256-signature", hdr(map[string]any{"alg": "RS256", "kid": "k-rsa"}, login.ec), fp, rSignature},
				{"unknown-kid", hdr(map[string]any{"alg": "ES256", "kid": "k-unknown"}, login.ec), fp, rUnknownKey},
				{"no-kid", hdr(map[string]any{"alg": "ES256"}, login.ec), fp, rUnknownKey},
				{"another-brands-key", hdr(map[string]any{"alg": "ES256", "kid": "k-two"}, login.ec2), fp, rUnknownKey},
				{"ec-kid-with-rs256", hdr(map[string]any{"alg": "RS256", "kid": "k-ec"}, testRSAKey()), fp, rUnknownKey},
				{"truncated-signature", func(code, jti string) string {
					parts := strings.Split(login.es256(t, claims(code, jti, nil)), ".")
					sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
					return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig[:63])
				}, fp, rSignature},
				{"der-signature", func(code, jti string) string {
					parts := strings.Split(login.es256(t, claims(code, jti, nil)), ".")
					digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
					der, err := ecdsa.SignASN1(rand.Reader, login.ec, digest[:])
					if err != nil {
						t.Fatal(err)
					}
					return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(der)
				}, fp, rSignature},
				{"tampered-claims", func(code, jti string) string {
					good := strings.Split(login.es256(t, claims(code, jti, nil)), ".")
					evil := base64.RawURLEncoding.EncodeToString([]byte(mustJSON(t, claims(code, jti, map[string]any{"sub": "admin"}))))
					return good[0] + "." + evil + "." + good[2]
				}, fp, rSignature},
			}},
			{"wrong-iss", []refusal{
				{"another-brands-issuer", es(map[string]any{"iss": signed2Login}), fp, rIssuer},
				{"trailing-slash", es(map[string]any{"iss": loginURL + "/"}), fp, rIssuer},
				{"case", es(map[string]any{"iss": "https://LOGIN.acme.example"}), fp, rIssuer},
				{"missing", es(map[string]any{"iss": nil}), fp, rIssuer},
				{"array", es(map[string]any{"iss": []string{loginURL}}), fp, rIssuer},
			}},
			{"user-code-missing", []refusal{
				{"absent", es(map[string]any{"user_code": nil}), fp, rUserCodeMissing},
				{"empty", es(map[string]any{"user_code": ""}), fp, rUserCodeMissing},
				{"number", es(map[string]any{"user_code": 12345678}), fp, rUserCodeMissing},
				{"garbage", es(map[string]any{"user_code": "not a code"}), fp, rUserCodeOther},
			}},
			{"alg", []refusal{
				{"none", hdr(map[string]any{"alg": "none", "kid": "k-ec"}, nil), ia, rAlgorithm},
				{"none-without-kid", hdr(map[string]any{"alg": "none"}, nil), ia, rAlgorithm},
				{"HS256-keyed-with-a-public-key", hdr(map[string]any{"alg": "HS256", "kid": "k-rsa"}, rsaPub.N.Bytes()), ia, rAlgorithm},
				{"HS256", hdr(map[string]any{"alg": "HS256", "kid": "k-ec"}, []byte("secret")), ia, rAlgorithm},
				{"ES384", hdr(map[string]any{"alg": "ES384", "kid": "k-ec"}, login.ec), ia, rAlgorithm},
				{"PS256", hdr(map[string]any{"alg": "PS256", "kid": "k-rsa"}, testRSAKey()), ia, rAlgorithm},
				{"lower-case", hdr(map[string]any{"alg": "es256", "kid": "k-ec"}, login.ec), ia, rAlgorithm},
				{"missing", hdr(map[string]any{"kid": "k-ec"}, login.ec), ia, rAlgorithm},
				{"array", hdr(map[string]any{"alg": []string{"ES256"}, "kid": "k-ec"}, login.ec), ia, rAlgorithm},
			}},
			{"forbidden-header", []refusal{
				{"jwk", hdr(map[string]any{"alg": "ES256", "kid": "k-ec", "jwk": map[string]any{"kty": "EC"}}, login.ec), ia, rForbiddenHeader},
				{"jku", hdr(map[string]any{"alg": "ES256", "kid": "k-ec", "jku": "https://evil.example/jwks"}, login.ec), ia, rForbiddenHeader},
				{"x5u", hdr(map[string]any{"alg": "ES256", "kid": "k-ec", "x5u": "https://evil.example/c"}, login.ec), ia, rForbiddenHeader},
				{"x5c", hdr(map[string]any{"alg": "ES256", "kid": "k-ec", "x5c": []string{"MII"}}, login.ec), ia, rForbiddenHeader},
				{"crit", hdr(map[string]any{"alg": "ES256", "kid": "k-ec", "crit": []string{"exp"}}, login.ec), ia, rForbiddenHeader},
			}},
			{"malformed", []refusal{
				{"larger-than-8KiB", es(map[string]any{"pad": strings.Repeat("x", 8<<10)}), ia, rMalformed},
				{"two-segments", func(code, jti string) string {
					tok := login.es256(t, claims(code, jti, nil))
					return tok[:strings.LastIndexByte(tok, '.')]
				}, ia, rMalformed},
				{"four-segments", func(code, jti string) string { return login.es256(t, claims(code, jti, nil)) + ".x" }, ia, rMalformed},
				{"padding", func(code, jti string) string { return login.es256(t, claims(code, jti, nil)) + "==" }, ia, rMalformed},
				{"newline-in-segment", func(code, jti string) string {
					tok := login.es256(t, claims(code, jti, nil))
					return tok[:10] + "\n" + tok[10:]
				}, ia, rMalformed},
				{"duplicate-claim", rawClaims(`{` + base + `,"sub":"user-42","sub":"admin"}`), ia, rMalformed},
				{"duplicate-header", hdr(`{"alg":"ES256","kid":"k-ec","alg":"none"}`, login.ec), ia, rMalformed},
				{"claims-not-an-object", func(_, _ string) string {
					return signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec"}, `["sub"]`, login.ec)
				}, ia, rMalformed},
				{"kid-number", hdr(map[string]any{"alg": "ES256", "kid": 7}, login.ec), ia, rMalformed},
				{"trailing-garbage", rawClaims(`{` + base + `,"sub":"user-42"}x`), ia, rMalformed},
			}},
			{"subject-and-claims", []refusal{
				{"sub-missing", es(map[string]any{"sub": nil}), fp, rSubject},
				{"sub-empty", es(map[string]any{"sub": ""}), fp, rSubject},
				{"sub-257-bytes", es(map[string]any{"sub": strings.Repeat("u", 257)}), fp, rSubject},
				{"sub-control", es(map[string]any{"sub": "user\n42"}), fp, rSubject},
				{"sub-number", es(map[string]any{"sub": 42}), fp, rSubject},
				{"jti-missing", es(map[string]any{"jti": nil}), fp, rClaims},
				{"jti-empty", es(map[string]any{"jti": ""}), fp, rClaims},
				{"jti-257-bytes", es(map[string]any{"jti": strings.Repeat("j", 257)}), fp, rClaims},
				{"email-number", es(map[string]any{"email": 7}), fp, rClaims},
			}},
		}
		for _, g := range groups {
			t.Run(g.name, func(t *testing.T) {
				code, dc := e.pendingCode()
				jti := login.jti()
				for _, r := range g.refusals {
					_, err := e.approveSigned(t.Context(), code, r.token(code, jti), "orders:read")
					if connect.CodeOf(err) != r.code || rpcerr.Reason(err) != r.reason {
						t.Errorf("%s: err = %v (reason %q), want %v %s", r.name, err, rpcerr.Reason(err), r.code, r.reason)
						continue
					}
					wantRefusal(t, err, r.code, r.reason)
				}
				// Refusals change nothing: the code is still pending, the
				// PA still waits, the jti is not used up.
				wantOAuthError(t, e.post("signed", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "authorization_pending")
				ap, err := e.approveSigned(t.Context(), code, login.es256(t, claims(code, jti, nil)), "orders:read", "orders:write")
				e.wantGrant(ap, err, "user-42", "orders:read")
			})
		}
		t.Run("ok/positive-controls", func(t *testing.T) {
			for name, tok := range map[string]func(code string) string{
				"rs256": func(code string) string {
					return signJWS(t, map[string]any{"alg": "RS256", "kid": "k-rsa"}, login.claims(e.clk.Now(), code), testRSAKey())
				},
				"typ-absent": func(code string) string {
					return signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec"}, login.claims(e.clk.Now(), code), login.ec)
				},
				"typ-irrelevant-at+jwt": func(code string) string {
					return signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec", "typ": "at+jwt"}, login.claims(e.clk.Now(), code), login.ec)
				},
				"typ-irrelevant-consent-session": func(code string) string {
					return signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec", "typ": "pact-consent+jwt"}, login.claims(e.clk.Now(), code), login.ec)
				},
				"typ-irrelevant-number": func(code string) string {
					return signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec", "typ": 1}, login.claims(e.clk.Now(), code), login.ec)
				},
				"user-code-lower-case-without-dash": func(code string) string {
					return login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"user_code": strings.ToLower(strings.ReplaceAll(code, "-", ""))}))
				},
				"email-absent": func(code string) string {
					return login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"email": nil}))
				},
				"sub-256-bytes-of-utf8": func(code string) string {
					return login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"sub": strings.Repeat("ü", 128)}))
				},
				"fractional-times": func(code string) string {
					n := float64(e.clk.Now().Unix())
					return login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"iat": n - 0.5, "exp": n + 119.5}))
				},
				"expired-within-skew": func(code string) string {
					n := e.clk.Now().Unix()
					return login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"iat": n - 200, "exp": n - 30}))
				},
				"exactly-300s-old": func(code string) string {
					n := e.clk.Now().Unix()
					return login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"iat": n - 300, "exp": n}))
				},
				"iat-30s-ahead": func(code string) string {
					n := e.clk.Now().Unix()
					return login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"iat": n + 30, "exp": n + 90}))
				},
				"unknown-claims-ignored": func(code string) string {
					return login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"amr": []string{"pwd"}, "nonce": "n"}))
				},
			} {
				code, _ := e.pendingCode()
				ap, err := e.approveSigned(t.Context(), code, tok(code), "orders:read")
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want := "user-42"
				if name == "sub-256-bytes-of-utf8" {
					want = strings.Repeat("ü", 128)
				}
				e.wantGrant(ap, err, want, "orders:read")
			}
		})
		t.Run("unknown-kid-refetches-once", func(t *testing.T) {
			code, _ := e.pendingCode()
			before := login.refreshes.Load()
			tok := signJWS(t, map[string]any{"alg": "ES256", "kid": "k-new"}, login.claims(e.clk.Now(), code), login.ec)
			_, err := e.approveSigned(t.Context(), code, tok, "orders:read")
			wantRefusal(t, err, connect.CodeFailedPrecondition, rUnknownKey)
			if n := login.refreshes.Load() - before; n != 1 {
				t.Fatalf("%d refetches for an unknown kid, want 1", n)
			}
			ap, err := e.approveSigned(t.Context(), code, login.es256(t, login.claims(e.clk.Now(), code)), "orders:read")
			e.wantGrant(ap, err, "user-42", "orders:read")
		})
	})
}

// Spec §6 item 33 and §2.5: single use, the user code binding and the
// pending state, each with a positive control.
func TestSignedAssertionSingleUseAndBinding(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		ctx := t.Context()
		t.Run("replayed-jti", func(t *testing.T) {
			code, dc := e.pendingCode()
			c := login.claims(e.clk.Now(), code)
			a := login.es256(t, c)
			ap, err := e.approveSigned(ctx, code, a, "orders:read")
			e.wantGrant(ap, err, "user-42", "orders:read") // positive control
			_, err = e.approveSigned(ctx, code, a, "orders:read")
			wantRefusal(t, err, connect.CodeFailedPrecondition, rReplayed)
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", UserCode: code, BrandAssertion: a})
			wantRefusal(t, err, connect.CodeFailedPrecondition, rReplayed)
			// Another assertion with the same jti, for another pending code.
			code2, _ := e.pendingCode()
			_, err = e.approveSigned(ctx, code2, login.es256(t, with(login.claims(e.clk.Now(), code2), map[string]any{"jti": c["jti"]})), "orders:read")
			wantRefusal(t, err, connect.CodeFailedPrecondition, rReplayed)
			// Nothing changed: the first grant only, code2 still pending.
			if list, _ := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "signed", BrandUser: "user-42"}); len(list.GetGrants()) != 1 {
				t.Fatalf("grants after replays = %v; want the one", list)
			}
			if tok := e.post("signed", "token", paAuth, deviceGrant(dc, paIssuer)); tok.status != 200 {
				t.Fatalf("redeem after replays: %d %s", tok.status, tok.body)
			}
			// The same jti at another Brand is another assertion.
			d2 := e.startDevice("signed2", paAuth, paIssuer, "orders:read")
			code3 := d2["user_code"].(string)
			other := signJWS(t, map[string]any{"alg": "ES256", "kid": "k-two"}, with(login.claims(e.clk.Now(), code3),
				map[string]any{"iss": signed2Login, "aud": publicURL + "/a2a/signed2/oauth/consent", "jti": c["jti"]}), login.ec2)
			if _, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed2", UserCode: code3, BrandAssertion: other, Scopes: []string{"orders:read"}}); err != nil {
				t.Fatalf("same jti at another Brand: %v", err)
			}
			// Positive control: a fresh assertion still approves code2.
			ap, err = e.approveSigned(ctx, code2, login.es256(t, login.claims(e.clk.Now(), code2)), "orders:read")
			e.wantGrant(ap, err, "user-42", "orders:read")
		})
		t.Run("user-code-of-another-pending-authorization", func(t *testing.T) {
			code1, _ := e.pendingCode()
			code2, _ := e.pendingCode()
			for2 := login.es256(t, login.claims(e.clk.Now(), code2))
			_, err := e.approveSigned(ctx, code1, for2, "orders:read")
			wantRefusal(t, err, connect.CodeFailedPrecondition, rUserCodeOther)
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", UserCode: code1, BrandAssertion: for2})
			wantRefusal(t, err, connect.CodeFailedPrecondition, rUserCodeOther)
			// Both still pending; the assertion still decides its own code.
			ap, err := e.approveSigned(ctx, code2, for2, "orders:read")
			e.wantGrant(ap, err, "user-42", "orders:read")
			ap, err = e.approveSigned(ctx, code1, login.es256(t, login.claims(e.clk.Now(), code1)), "orders:read")
			e.wantGrant(ap, err, "user-42", "orders:read")
		})
		t.Run("not-pending-user-code", func(t *testing.T) {
			denied, ddc := e.pendingCode()
			if _, err := e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", UserCode: denied,
				BrandAssertion: login.es256(t, login.claims(e.clk.Now(), denied))}); err != nil {
				t.Fatalf("deny with a valid assertion (positive control): %v", err)
			}
			wantOAuthError(t, e.post("signed", "token", paAuth, deviceGrant(ddc, paIssuer)), 400, "access_denied")
			_, err := e.approveSigned(ctx, denied, login.es256(t, login.claims(e.clk.Now(), denied)), "orders:read")
			wantRefusal(t, err, connect.CodeFailedPrecondition, rNotPending)
			approved, _ := e.pendingCode()
			ap, err := e.approveSigned(ctx, approved, login.es256(t, login.claims(e.clk.Now(), approved)), "orders:read")
			e.wantGrant(ap, err, "user-42", "orders:read")
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", UserCode: approved,
				BrandAssertion: login.es256(t, login.claims(e.clk.Now(), approved))})
			wantRefusal(t, err, connect.CodeFailedPrecondition, rNotPending)
			if list, _ := e.rpc.ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "signed", BrandUser: "user-42"}); len(list.GetGrants()) == 0 {
				t.Fatal("positive control made no grant")
			}
			// A code that does not exist at all is NotFound, as everywhere.
			_, err = e.approveSigned(ctx, "BBBB-BBBB", login.es256(t, login.claims(e.clk.Now(), "BBBB-BBBB")), "orders:read")
			if connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("unknown code: %v, want NotFound", err)
			}
		})
		t.Run("nothing-granted-uses-the-assertion-for-a-deny", func(t *testing.T) {
			code, dc := e.pendingCode()
			a := login.es256(t, login.claims(e.clk.Now(), code))
			ap, err := e.approveSigned(ctx, code, a, "orders:write")
			if err != nil || ap.GetGrantId() != "" || len(ap.GetScopes()) != 0 {
				t.Fatalf("approve of nothing = %v, %v; want a deny", ap, err)
			}
			wantOAuthError(t, e.post("signed", "token", paAuth, deviceGrant(dc, paIssuer)), 400, "access_denied")
			_, err = e.approveSigned(ctx, code, a, "orders:read")
			wantRefusal(t, err, connect.CodeFailedPrecondition, rReplayed)
		})
		t.Run("bad-calls", func(t *testing.T) {
			code, _ := e.pendingCode()
			a := login.es256(t, login.claims(e.clk.Now(), code))
			_, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", UserCode: code, BrandUser: "user-42", BrandAssertion: a, Scopes: []string{"orders:read"}})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), []string{"brand_user"}) {
				t.Fatalf("brand_user in signed mode: %v (%v)", err, rpcerr.FieldViolations(err))
			}
			_, err = e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "signed", UserCode: code, BrandUser: "user-42", Scopes: []string{"orders:read"}})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), []string{"brand_user", "brand_assertion"}) {
				t.Fatalf("trusted-style call in signed mode: %v (%v)", err, rpcerr.FieldViolations(err))
			}
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", UserCode: code})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), []string{"brand_assertion"}) {
				t.Fatalf("deny without an assertion: %v", err)
			}
			// A forged deny (another key) changes nothing either.
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "signed", UserCode: code,
				BrandAssertion: signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec"}, login.claims(e.clk.Now(), code), login.other)})
			wantRefusal(t, err, connect.CodeFailedPrecondition, rSignature)
			// An assertion at a trusted-frontend Brand is refused too.
			d := e.startDevice("acme", paAuth, paIssuer, "orders:read")
			_, err = e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "acme", UserCode: d["user_code"].(string), BrandAssertion: a})
			if connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("assertion at a trusted-frontend Brand: %v", err)
			}
			// Describe needs no assertion in either mode.
			if _, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "signed", UserCode: code}); err != nil {
				t.Fatal(err)
			}
			ap, err := e.approveSigned(ctx, code, a, "orders:read")
			e.wantGrant(ap, err, "user-42", "orders:read")
		})
		t.Run("keys-unavailable", func(t *testing.T) {
			code, _ := e.pendingCode()
			a := login.es256(t, login.claims(e.clk.Now(), code))
			for _, tc := range []struct {
				err  error
				code connect.Code
			}{
				{fmt.Errorf("jose: JWKS %s: %w", signedJWKS, jose.ErrTimeout), connect.CodeUnavailable},
				{&jose.StatusError{Code: 503}, connect.CodeUnavailable},
				{fmt.Errorf("jose: JWKS %s: %w", signedJWKS, jose.ErrMalformedDocument), connect.CodeUnavailable},
				{fmt.Errorf("%w: plain http", jose.ErrInvalidURI), connect.CodeFailedPrecondition},
			} {
				login.fail.Store(&tc.err)
				_, err := e.approveSigned(ctx, code, a, "orders:read")
				wantRefusal(t, err, tc.code, rKeysUnavailable)
			}
			login.fail.Store(nil)
			ap, err := e.approveSigned(ctx, code, a, "orders:read")
			e.wantGrant(ap, err, "user-42", "orders:read")
		})
	})
}

// A signed-login Brand without a key source, or without its assertion
// settings, refuses decisions (and changes nothing).
func TestSignedAssertionNotConfigured(t *testing.T) {
	e := newEnv(t, openSQLite(t)) // no BrandKeys
	login := newBrandLogin(t)
	d := e.startDevice("signed", paAuth, paIssuer, "orders:read")
	code := d["user_code"].(string)
	_, err := e.approveSigned(t.Context(), code, login.es256(t, login.claims(e.clk.Now(), code)), "orders:read")
	wantRefusal(t, err, connect.CodeUnavailable, rKeysUnavailable)
	b, _ := e.store.GetBrand(t.Context(), "signed")
	b.Delegation.AssertionJWKSURI = ""
	if _, err := e.store.UpdateBrand(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	_, err = e.approveSigned(t.Context(), code, login.es256(t, login.claims(e.clk.Now(), code)), "orders:read")
	wantRefusal(t, err, connect.CodeFailedPrecondition, rKeysUnavailable)
	if _, err := e.rpc.DescribeConsent(t.Context(), &pactv1.DescribeConsentRequest{BrandId: "signed", UserCode: code}); err != nil {
		t.Fatalf("the code is no longer pending: %v", err)
	}
}

// The same assertion posted concurrently approves exactly once; every
// other attempt is REPLAYED, and exactly one grant exists.
func TestSignedAssertionConcurrentReplay(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e, login := signedEnv(t, newStore(t))
		for _, n := range []int{2, 10} {
			code, _ := e.pendingCode()
			a := login.es256(t, with(login.claims(e.clk.Now(), code), map[string]any{"sub": fmt.Sprintf("racer-%d", n)}))
			var mu sync.Mutex
			reasons := map[string]int{}
			race(n, func() int {
				_, err := e.approveSigned(t.Context(), code, a, "orders:read")
				r := "ok"
				if err != nil {
					r = rpcerr.Reason(err)
				}
				mu.Lock()
				reasons[r]++
				mu.Unlock()
				return 0
			})
			if reasons["ok"] != 1 || reasons[rReplayed] != n-1 {
				t.Fatalf("%d concurrent posts of one assertion: %v; want 1 ok and %d %s", n, reasons, n-1, rReplayed)
			}
			list, err := e.rpc.ListGrants(t.Context(), &pactv1.ListGrantsRequest{BrandId: "signed", BrandUser: fmt.Sprintf("racer-%d", n)})
			if err != nil || len(list.GetGrants()) != 1 {
				t.Fatalf("grants = %v, %v; want exactly one", list, err)
			}
		}
	})
}

// Wiring: the server's hardened JWKS client satisfies BrandKeys, and a
// signed login works end to end against a Brand JWKS served over HTTP
// (loopback, the client's development allowance).
func TestSignedAssertionWithJWKSClient(t *testing.T) {
	login := newBrandLogin(t)
	ec, err := jose.NewECKey("k-ec", &login.ec.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	point, err := ec.ECDSA().Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	jwk := map[string]any{"kty": "EC", "crv": "P-256", "kid": "k-ec", "use": "sig", "alg": "ES256",
		"x": base64.RawURLEncoding.EncodeToString(point[1:33]), "y": base64.RawURLEncoding.EncodeToString(point[33:])}
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{jwk}})
	}))
	t.Cleanup(srv.Close)
	client, err := jose.NewJWKSClient(jose.Config{AllowLoopbackHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	var keys delegation.BrandKeys = client
	s := openSQLite(t)
	e := newEnv(t, s, func(d *delegation.Deps) { d.BrandKeys = keys })
	b, _ := s.GetBrand(t.Context(), "signed")
	b.Delegation.AssertionJWKSURI = srv.URL + "/jwks.json"
	if _, err := s.UpdateBrand(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	code, dc := e.pendingCode()
	_, err = e.approveSigned(t.Context(), code, signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec"}, login.claims(e.clk.Now(), code), login.other), "orders:read")
	wantRefusal(t, err, connect.CodeFailedPrecondition, rSignature)
	ap, err := e.approveSigned(t.Context(), code, login.es256(t, login.claims(e.clk.Now(), code)), "orders:read")
	e.wantGrant(ap, err, "user-42", "orders:read")
	if r := e.post("signed", "token", paAuth, deviceGrant(dc, paIssuer)); r.status != 200 {
		t.Fatalf("redeem: %d %s", r.status, r.body)
	}
	if fetches.Load() != 1 {
		t.Fatalf("%d JWKS fetches, want 1 (cached)", fetches.Load())
	}
}

// User-code guessing is limited per (Brand, source) as well as per Brand:
// one source cannot use up the Brand's budget, other sources and calls
// without a source go on, and the Brand limit still holds for all.
func TestUserCodeGuessingPerSource(t *testing.T) {
	dbtest.Stores(t, func(t *testing.T, newStore func(t *testing.T) db.Store) {
		e := newEnv(t, newStore(t), func(d *delegation.Deps) {
			d.GuessLimit, d.SourceGuessLimit, d.GuessWindow = 8, 3, time.Minute
		})
		ctx := t.Context()
		real := e.startDevice("acme", paAuth, paIssuer, "orders:read")["user_code"].(string)
		guess := func(i int) string {
			return fmt.Sprintf("BBBB-BB%c%c", codes.UserCodeAlphabet[i/20], codes.UserCodeAlphabet[i%20])
		}
		for i := range 12 {
			if guess(i) == real {
				t.Skip("the drawn code is one of the guesses (p ≈ 1e-9)")
			}
		}
		describe := func(code, source string) error {
			_, err := e.rpc.DescribeConsent(ctx, &pactv1.DescribeConsentRequest{BrandId: "acme", UserCode: code, Source: source})
			return err
		}
		const attacker, user, other = "203.0.113.7", "198.51.100.20", "2001:db8::1"
		for i := range 3 {
			if err := describe(guess(i), attacker); connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("guess %d: %v, want NotFound", i, err)
			}
		}
		// The attacker's source is over its limit: even the real code is
		// refused for it, with RetryInfo, and the store is not asked.
		err := describe(real, attacker)
		if connect.CodeOf(err) != connect.CodeResourceExhausted || !hasRetryInfo(err) {
			t.Fatalf("attacker over the source limit: %v, want ResourceExhausted with RetryInfo", err)
		}
		for _, op := range []func() error{
			func() error { return describe(guess(3), attacker) },
			func() error {
				_, err := e.rpc.ApproveConsent(ctx, &pactv1.ApproveConsentRequest{BrandId: "acme", UserCode: real, BrandUser: "u", Scopes: []string{"orders:read"}, Source: attacker})
				return err
			},
			func() error {
				_, err := e.rpc.DenyConsent(ctx, &pactv1.DenyConsentRequest{BrandId: "acme", UserCode: real, Source: attacker})
				return err
			},
		} {
			if err := op(); connect.CodeOf(err) != connect.CodeResourceExhausted {
				t.Fatalf("attacker's source: %v, want ResourceExhausted", err)
			}
		}
		// Other sources, and calls without a source, are not affected.
		if err := describe(real, user); err != nil {
			t.Fatalf("another source: %v", err)
		}
		if err := describe(real, ""); err != nil {
			t.Fatalf("no source: %v", err)
		}
		// The attacker's failures counted for the Brand too (3 of 8); five
		// more from other sources exhaust the Brand for everyone.
		for i := 3; i < 8; i++ {
			src := fmt.Sprintf("192.0.2.%d", i)
			if err := describe(guess(i), src); connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("guess %d from %s: %v", i, src, err)
			}
		}
		// With the Brand over its limit, a lookup without a source is
		// refused, but a source that has not failed is never locked out by
		// the others: the User with the right code goes on.
		if err := describe(real, ""); connect.CodeOf(err) != connect.CodeResourceExhausted || !hasRetryInfo(err) {
			t.Fatalf("no source with the Brand over its limit: %v, want ResourceExhausted with RetryInfo", err)
		}
		for _, src := range []string{user, other} {
			if err := describe(real, src); err != nil {
				t.Fatalf("source %q (no failures) with the Brand over its limit: %v, want the consent", src, err)
			}
		}
		// A fresh source gets its one lookup; once it has failed, the
		// Brand's limit applies to it too.
		const fresh = "192.0.2.200"
		if err := describe(guess(8), fresh); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("fresh source's first guess: %v, want NotFound", err)
		}
		if err := describe(real, fresh); connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("the source after its failure, Brand over: %v, want ResourceExhausted", err)
		}
		// The next window starts every count afresh, the attacker's too.
		e.clk.Advance(time.Minute)
		if err := describe(real, attacker); err != nil {
			t.Fatalf("attacker's source in the next window: %v", err)
		}
		if err := describe(real, ""); err != nil {
			t.Fatalf("no source in the next window: %v", err)
		}
		// Bad sources are refused before anything else.
		for _, src := range []string{"has space", strings.Repeat("s", 129), "tab\t", "ü"} {
			if err := describe(real, src); connect.CodeOf(err) != connect.CodeInvalidArgument || !slices.Equal(rpcerr.FieldViolations(err), []string{"source"}) {
				t.Fatalf("source %q: %v, want InvalidArgument on source", src, err)
			}
		}
		// The audit: one line per failed lookup, with the source, never a
		// code.
		logs := e.logs.String()
		if n := strings.Count(logs, "user code lookup failed"); n != 9 {
			t.Fatalf("%d audit lines for 9 failed lookups:\n%s", n, logs)
		}
		if !strings.Contains(logs, "source="+attacker) || !strings.Contains(logs, "guessing limit of the source") {
			t.Fatalf("the source is not in the audit:\n%s", logs)
		}
		for i := range 12 {
			for _, form := range []string{guess(i), strings.ReplaceAll(guess(i), "-", ""), real, strings.ReplaceAll(real, "-", "")} {
				if strings.Contains(logs, form) {
					t.Fatalf("a user code appears in the log:\n%s", logs)
				}
			}
		}
	})
}

func hasRetryInfo(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return false
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if _, ok := v.(*errdetails.RetryInfo); ok {
				return true
			}
		}
	}
	return false
}

// No assertion, code or user id ever reaches the log in the signed flow;
// its audit names the kid and jti instead.
func TestSignedAssertionNoSecretsInLogs(t *testing.T) {
	e, login := signedEnv(t, openSQLite(t))
	code, _ := e.pendingCode()
	c := login.claims(e.clk.Now(), code)
	good := login.es256(t, c)
	bad := signJWS(t, map[string]any{"alg": "ES256", "kid": "k-ec"}, c, login.other)
	_, _ = e.approveSigned(t.Context(), code, bad, "orders:read")
	if _, err := e.approveSigned(t.Context(), code, good, "orders:read"); err != nil {
		t.Fatal(err)
	}
	_, _ = e.approveSigned(t.Context(), code, good, "orders:read")
	logs := e.logs.String()
	if !strings.Contains(logs, "consent approved") || !strings.Contains(logs, "jti="+c["jti"].(string)) || !strings.Contains(logs, "kid=k-ec") ||
		!strings.Contains(logs, "reason=BRAND_ASSERTION_REFUSAL_SIGNATURE") || !strings.Contains(logs, "brand assertion replayed") {
		t.Fatalf("control: the flow was not audited:\n%s", logs)
	}
	for _, s := range append(strings.Split(good, "."), append(strings.Split(bad, "."), code, strings.ReplaceAll(code, "-", ""))...) {
		if len(s) >= 8 && strings.Contains(logs, s) {
			t.Fatalf("a secret (%.6s…) is in the log:\n%s", s, logs)
		}
	}
	if regexp.MustCompile(`eyJ[A-Za-z0-9_-]{10}`).MatchString(logs) {
		t.Fatalf("a JWS shape in the log:\n%s", logs)
	}
}

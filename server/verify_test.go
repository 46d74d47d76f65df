package server_test

import (
	"crypto/ecdsa"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/testkit/testsigner"
)

// testPA is a personal agent with an ES256 key and a JWKS on loopback
// (testsigner's PA), under the names these tests use.
type testPA struct {
	issuer string
	key    *ecdsa.PrivateKey
	kid    string
	jwks   struct{ URL string }
	signer *testsigner.PA
}

func newTestPA(t *testing.T) *testPA {
	t.Helper()
	pa := testsigner.NewPA(t, "k1")
	p := &testPA{issuer: pa.URL, key: pa.Key, kid: pa.KID, signer: pa}
	p.jwks.URL = pa.URL
	return p
}

// token signs claims with a header; header and claims are JSON objects.
func (pa *testPA) token(t *testing.T, header, claims map[string]any) string {
	t.Helper()
	return pa.signer.JWT(t, header, claims)
}

func (pa *testPA) claims(aud string, now time.Time) map[string]any {
	return map[string]any{"iss": pa.issuer, "sub": "user-1", "aud": aud, "iat": now.Unix(), "exp": now.Add(120 * time.Second).Unix()}
}

func TestVerifyAgentRequestThroughTheWire(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir(), "PACT_RATE_SUBJECT=2"))
		ctx := t.Context()
		pa := newTestPA(t)
		ac := agents(inst, adminToken)
		reg, err := ac.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "Test PA"})
		if err != nil {
			t.Fatal(err)
		}
		bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken))
		for _, id := range []string{"acme", "beta"} {
			if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: id, DisplayName: id}); err != nil {
				t.Fatal(err)
			}
		}
		vc := pactv1connect.NewVerificationServiceClient(h2c(), inst.url, withToken(frontendToken))
		aud := "https://provider.example/a2a"
		now := time.Now()
		hdr := map[string]any{"alg": "ES256", "kid": pa.kid, "typ": "JWT"}
		good := pa.token(t, hdr, pa.claims(aud, now))

		verify := func(brand, authz, deleg string) *pactv1.VerifyAgentRequestResponse {
			t.Helper()
			r, err := vc.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: brand, Authorization: authz, UserDelegation: deleg})
			if err != nil {
				t.Fatalf("VerifyAgentRequest: %v", err)
			}
			return r
		}
		// Positive control, reused across two Brands (PAs reuse tokens).
		for _, b := range []string{"acme", "beta"} {
			r := verify(b, "Bearer "+good, "")
			if !r.GetAllowed() || r.GetHttpStatus() != 200 || r.GetCaller().GetAgentId() != reg.GetAgent().GetId() ||
				r.GetCaller().GetSubject() != "user-1" || r.GetCaller().GetIssuer() != pa.issuer {
				t.Fatalf("ok/%s: %v", b, r)
			}
		}

		arrayAud := pa.claims(aud, now)
		arrayAud["aud"] = []string{aud}
		otherSub := func(sub string) map[string]any { c := pa.claims(aud, now); c["sub"] = sub; return c }
		tampered := []byte(good)
		tampered[len(tampered)/2] ^= 1
		cases := []struct {
			name, brand, authz, deleg string
			status                    int32
			www                       string
			reason                    pactv1.DenyReason
		}{
			{"fail/no-header", "acme", "", "", 401, `Bearer realm="a2a"`, pactv1.DenyReason_DENY_REASON_MALFORMED},
			{"fail/one-byte-changed", "acme", "Bearer " + string(tampered), "", 401, `Bearer realm="a2a"`, pactv1.DenyReason_DENY_REASON_MALFORMED},
			{"fail/alg-none", "acme", "Bearer " + pa.token(t, map[string]any{"alg": "none", "kid": pa.kid}, pa.claims(aud, now)), "", 401, `Bearer realm="a2a"`, pactv1.DenyReason_DENY_REASON_ALGORITHM},
			{"fail/hs256", "acme", "Bearer " + pa.token(t, map[string]any{"alg": "HS256", "kid": pa.kid}, pa.claims(aud, now)), "", 401, `Bearer realm="a2a"`, pactv1.DenyReason_DENY_REASON_ALGORITHM},
			{"fail/aud-array", "acme", "Bearer " + pa.token(t, hdr, arrayAud), "", 401, `Bearer realm="a2a"`, pactv1.DenyReason_DENY_REASON_AUDIENCE},
			{"fail/aud-interface-url", "acme", "Bearer " + pa.token(t, hdr, pa.claims(aud+"/acme", now)), "", 401, `Bearer realm="a2a"`, pactv1.DenyReason_DENY_REASON_AUDIENCE},
			{"fail/oversized", "acme", "Bearer " + strings.Repeat("a", 17<<10), "", 401, `Bearer realm="a2a"`, pactv1.DenyReason_DENY_REASON_TOO_LARGE},
			{"fail/unknown-brand", "nope", "Bearer " + pa.token(t, hdr, otherSub("user-2")), "", 404, "", pactv1.DenyReason_DENY_REASON_UNKNOWN_BRAND},
			{"fail/delegation-to-identity-brand", "acme", "Bearer " + pa.token(t, hdr, otherSub("user-3")), "Bearer x.y.z", 401, `Bearer realm="a2a", error="invalid_token"`, pactv1.DenyReason_DENY_REASON_DELEGATION_DISABLED},
		}
		for _, tc := range cases {
			r := verify(tc.brand, tc.authz, tc.deleg)
			if r.GetAllowed() || r.GetHttpStatus() != tc.status || r.GetWwwAuthenticate() != tc.www || r.GetReason() != tc.reason || r.GetCaller() != nil {
				t.Errorf("%s: got allowed=%v status=%d www=%q reason=%v caller=%v; want %d %q %v",
					tc.name, r.GetAllowed(), r.GetHttpStatus(), r.GetWwwAuthenticate(), r.GetReason(), r.GetCaller(), tc.status, tc.www, tc.reason)
			}
		}
		// A well-formed signature over other claims is a signature failure.
		other := pa.token(t, hdr, otherSub("user-9"))
		swapped := good[:strings.LastIndex(good, ".")] + other[strings.LastIndex(other, "."):]
		if r := verify("acme", "Bearer "+swapped, ""); r.GetAllowed() || r.GetReason() != pactv1.DenyReason_DENY_REASON_SIGNATURE {
			t.Errorf("fail/signature-of-other-claims: %v", r)
		}

		// Rate limit per (agent, sub) at 2/s with a burst of 2: the third
		// request at once is 429, and Retry-After rounds 0.5 s up to 1.
		limited := pa.token(t, hdr, otherSub("user-limited"))
		for i := range 2 {
			if r := verify("acme", "Bearer "+limited, ""); !r.GetAllowed() {
				t.Fatalf("ok/within-limit %d: %v", i, r)
			}
		}
		r := verify("acme", "Bearer "+limited, "")
		if r.GetAllowed() || r.GetHttpStatus() != 429 || r.GetRetryAfterSeconds() != 1 || r.GetReason() != pactv1.DenyReason_DENY_REASON_RATE_LIMITED {
			t.Fatalf("fail/rate-limited: %v", r)
		}

		// Disabling the agent takes effect on the very next call, even for
		// a token that verified before.
		if _, err := ac.UpdateAgent(ctx, &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: reg.GetAgent().GetId(), Enabled: false},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled"}}}); err != nil {
			t.Fatal(err)
		}
		if r := verify("beta", "Bearer "+good, ""); r.GetAllowed() || r.GetReason() != pactv1.DenyReason_DENY_REASON_AGENT_DISABLED || r.GetWwwAuthenticate() != `Bearer realm="a2a"` {
			t.Fatalf("fail/disabled-agent: %v", r)
		}
	})
}

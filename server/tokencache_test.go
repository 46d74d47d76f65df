package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// cacheEntries reads pactd_pa_token_cache_entries from a scrape.
func cacheEntries(t *testing.T, url string) string {
	t.Helper()
	for line := range strings.Lines(scrapeBody(t, url)) {
		if v, ok := strings.CutPrefix(line, "pactd_pa_token_cache_entries "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("the scrape lacks pactd_pa_token_cache_entries")
	return ""
}

// TestTokenCacheSizeReachesTheVerifier: PACT_TOKEN_CACHE_SIZE bounds the PA
// repeat-token cache (it fills to the bound and stays there as more
// distinct tokens verify), and 0 turns it off. Every token is allowed, so
// the entries counted are the accepted tokens the cache remembers.
func TestTokenCacheSizeReachesTheVerifier(t *testing.T) {
	for _, tc := range []struct {
		size string
		want []string // entries after each of five distinct tokens
	}{
		{"3", []string{"1", "2", "3", "3", "3"}},
		{"0", []string{"0", "0", "0", "0", "0"}},
	} {
		t.Run("size-"+tc.size, func(t *testing.T) {
			t.Parallel()
			inst := start(t, testConfig(t, "", t.TempDir(), "PACT_TOKEN_CACHE_SIZE="+tc.size))
			ctx := t.Context()
			pa, vc := paAndBrand(t, inst)
			hdr := map[string]any{"alg": "ES256", "kid": pa.kid, "typ": "JWT"}
			now := time.Now()
			if got := cacheEntries(t, inst.url); got != "0" {
				t.Fatalf("entries before any token = %s, want 0", got)
			}
			for i, want := range tc.want {
				c := pa.claims("https://provider.example/a2a", now)
				c["sub"] = fmt.Sprintf("user-%d", i)
				r, err := vc.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer " + pa.token(t, hdr, c)})
				if err != nil || !r.GetAllowed() {
					t.Fatalf("token %d: %v, %v; want allowed", i, r, err)
				}
				if got := cacheEntries(t, inst.url); got != want {
					t.Fatalf("entries after token %d = %s, want %s", i, got, want)
				}
			}
		})
	}
}

// paAndBrand registers a test PA and creates the Brand "acme" on inst, and
// returns the PA and a frontend's VerificationService client.
func paAndBrand(t *testing.T, inst *instance) (*testPA, pactv1connect.VerificationServiceClient) {
	t.Helper()
	ctx := t.Context()
	pa := newTestPA(t)
	if _, err := agents(inst, adminToken).RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: pa.issuer, JwksUri: pa.jwks.URL + "/jwks.json", DisplayName: "PA"}); err != nil {
		t.Fatal(err)
	}
	bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken))
	if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
		t.Fatal(err)
	}
	return pa, pactv1connect.NewVerificationServiceClient(h2c(), inst.url, withToken(frontendToken))
}

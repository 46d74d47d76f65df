package server_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/es256"
)

// metricValue reads one sample ("name" or `name{label="v"}`) from a scrape,
// or "" when the scrape lacks it.
func metricValue(body, sample string) string {
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestES256TablesThroughTheServer: with PACT_ES256_TABLES on (the default)
// a PA key earns its table after es256.DefaultBuildAfter new tokens, the
// tokens after it verify through the table, and the metrics say so; with
// it off every token is still allowed and no table metric is exported.
func TestES256TablesThroughTheServer(t *testing.T) {
	for _, tc := range []struct {
		setting string
		tables  bool
	}{{"on", true}, {"off", false}} {
		t.Run(tc.setting, func(t *testing.T) {
			t.Parallel()
			inst := start(t, testConfig(t, "", t.TempDir(), "PACT_ES256_TABLES="+tc.setting))
			ctx := t.Context()
			pa, vc := paAndBrand(t, inst)
			hdr := map[string]any{"alg": "ES256", "kid": pa.kid, "typ": "JWT"}
			now := time.Now()
			const after = 8
			for i := range es256.DefaultBuildAfter + after {
				c := pa.claims("https://provider.example/a2a", now)
				c["sub"] = fmt.Sprintf("user-%d", i)
				r, err := vc.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer " + pa.token(t, hdr, c)})
				if err != nil || !r.GetAllowed() {
					t.Fatalf("token %d: %v, %v; want allowed", i, r, err)
				}
			}
			// A token signed by nobody is refused on either path.
			c := pa.claims("https://provider.example/a2a", now)
			tok := pa.token(t, hdr, c)
			dot := strings.LastIndexByte(tok, '.')
			sig, err := base64.RawURLEncoding.DecodeString(tok[dot+1:])
			if err != nil {
				t.Fatal(err)
			}
			sig[20] ^= 1
			tok = tok[:dot+1] + base64.RawURLEncoding.EncodeToString(sig)
			if r, err := vc.VerifyAgentRequest(ctx, &pactv1.VerifyAgentRequestRequest{BrandId: "acme", Authorization: "Bearer " + tok}); err != nil || r.GetAllowed() ||
				r.GetReason() != pactv1.DenyReason_DENY_REASON_SIGNATURE {
				t.Fatalf("a forged signature: %v, %v; want refused for its signature", r, err)
			}
			body := scrapeBody(t, inst.url)
			want := map[string]string{
				"pactd_es256_tables":                            "1",
				"pactd_es256_table_builds_total":                "1",
				"pactd_es256_table_bytes":                       fmt.Sprint(es256.TableBytes),
				`pactd_es256_verifications_total{path="stock"}`: fmt.Sprint(es256.DefaultBuildAfter),
				`pactd_es256_verifications_total{path="table"}`: fmt.Sprint(after + 1),
			}
			for sample, v := range want {
				got := metricValue(body, sample)
				if !tc.tables {
					v = ""
				}
				if got != v {
					t.Errorf("%s = %q, want %q", sample, got, v)
				}
			}
		})
	}
}

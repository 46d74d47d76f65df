package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTokensVerifyAgainstTheServedJWKS checks the tokens the load runs send:
// ES256 over the served key, exp - iat = 300 s, and a distinct sub and jti
// for every token of a pool.
func TestTokensVerifyAgainstTheServedJWKS(t *testing.T) {
	pa, err := startPA("127.0.0.1:0", "", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pa.Close)
	resp, err := http.Get(pa.jwksURI)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []struct{ Kty, Crv, X, Y, Kid, Alg string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || set.Keys[0].Kid != ecKID || set.Keys[0].Alg != "ES256" || set.Keys[0].Crv != "P-256" {
		t.Fatalf("JWKS: %+v", set.Keys)
	}
	x, _ := base64.RawURLEncoding.DecodeString(set.Keys[0].X)
	y, _ := base64.RawURLEncoding.DecodeString(set.Keys[0].Y)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatal(err)
	}

	s, err := pa.signer("ES256")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := signPool(s, pa.issuer, "https://provider.example/a2a", "user", 50)
	if err != nil {
		t.Fatal(err)
	}
	subs := map[string]bool{}
	for _, authz := range ts.authz {
		tok, ok := strings.CutPrefix(authz, "Bearer ")
		parts := strings.Split(tok, ".")
		if !ok || len(parts) != 3 {
			t.Fatalf("not a bearer JWS: %q", authz)
		}
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if len(sig) != 64 || !ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatalf("signature does not verify: %q", tok)
		}
		var hdr map[string]string
		hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
		if err := json.Unmarshal(hb, &hdr); err != nil || hdr["alg"] != "ES256" || hdr["kid"] != ecKID {
			t.Fatalf("header %s: %v", hb, err)
		}
		var c struct {
			Iss, Sub, Aud, Jti string
			Iat, Exp           int64
		}
		cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
		if err := json.Unmarshal(cb, &c); err != nil {
			t.Fatal(err)
		}
		if c.Iss != pa.issuer || c.Aud != "https://provider.example/a2a" || c.Exp-c.Iat != 300 || c.Iat != ts.signedAt.Unix() {
			t.Fatalf("claims %s", cb)
		}
		if subs[c.Sub] || subs[c.Jti] {
			t.Fatalf("sub or jti repeated: %s", cb)
		}
		subs[c.Sub], subs[c.Jti] = true, true
	}
}

// TestOpenLoopCountsFromTheDueTime: one worker whose calls take 5 ms cannot
// keep up with 500/s, so later requests leave late and their latency, taken
// from the due time, grows well past the 5 ms a call takes.
func TestOpenLoopCountsFromTheDueTime(t *testing.T) {
	slow := func(context.Context, string) string { time.Sleep(5 * time.Millisecond); return "" }
	r := drive(t.Context(), loadSpec{workers: 1, duration: 100 * time.Millisecond, rate: 500, grace: 5 * time.Second},
		[]verifyFunc{slow}, []string{"t"})
	if r.requests != 50 || r.failures != 0 {
		t.Fatalf("requests %d failures %d; want 50, 0", r.requests, r.failures)
	}
	if r.quantile(1) < 100*time.Millisecond || r.late == 0 {
		t.Fatalf("max latency %s, %d late: queueing behind a busy worker was not counted", r.quantile(1), r.late)
	}
}

// TestClosedLoopCountsFailures: a denied answer is a failure.
func TestClosedLoopCountsFailures(t *testing.T) {
	n := 0
	deny := func(context.Context, string) string {
		n++
		if n%2 == 0 {
			return "denied 401 DENY_REASON_SIGNATURE"
		}
		return ""
	}
	r := drive(t.Context(), loadSpec{workers: 1, duration: time.Second, maxReqs: 10, grace: time.Second},
		[]verifyFunc{deny}, []string{"a", "b"})
	if r.requests != 10 || r.failures != 5 || r.failSet["denied 401 DENY_REASON_SIGNATURE"] != 5 {
		t.Fatalf("requests %d failures %d %v", r.requests, r.failures, r.failSet)
	}
}

func TestQuantile(t *testing.T) {
	r := &loadResult{}
	for i := 1; i <= 100; i++ {
		r.lat = append(r.lat, int64(i))
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50}, {0.9, 90}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := r.quantile(c.q); got != c.want {
			t.Errorf("quantile(%v) = %d, want %d", c.q, got, c.want)
		}
	}
}

// -mode floor counts pactd's refusal of the non-JWT as the expected answer,
// and anything else (an allow included) as a failure.
func TestExpectFloorRefusal(t *testing.T) {
	for answer, want := range map[string]string{
		floorRefusal:                     "",
		"":                               "allowed (a floor request must be refused)",
		"denied 401 DENY_REASON_EXPIRED": "denied 401 DENY_REASON_EXPIRED",
		"rpc unavailable: down":          "rpc unavailable: down",
	} {
		f := expectFloorRefusal(func(context.Context, string) string { return answer })
		if got := f(t.Context(), floorAuthorization); got != want {
			t.Errorf("answer %q: outcome %q, want %q", answer, got, want)
		}
	}
}

// Every wire the benchmark measures reaches a VerificationService and
// decodes its answer: the bare floor's fixed refusal is what -mode floor
// expects, over grpc-go, and connect-go's gRPC, Connect binary and Connect
// JSON, on HTTP/2 and (Connect only) HTTP/1.1. The control: a verifier that
// expects an allow reports the refusal as a failure. h2grpc reaches both
// gRPC servers, grpc-go's and connect-go's.
func TestEveryWireReachesTheBareFloor(t *testing.T) {
	b, err := startBare("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	mainURL, grpcURL := "http://"+b.main.Addr().String(), "http://"+b.grpc.Addr().String()
	for _, c := range []struct {
		name, base, client, protocol string
		w                            wire
	}{
		{"grpc-go", grpcURL, "grpc-go", "grpc", wire{http: "2", codec: "proto"}},
		{"h2grpc", grpcURL, "h2grpc", "grpc", wire{http: "2", codec: "proto"}},
		{"h2grpc to connect-go's gRPC", mainURL, "h2grpc", "grpc", wire{http: "2", codec: "proto"}},
		{"connect-go gRPC", mainURL, "connect-go", "grpc", wire{http: "2", codec: "proto"}},
		{"Connect binary HTTP/2", mainURL, "connect-go", "connect", wire{http: "2", codec: "proto"}},
		{"Connect JSON HTTP/2", mainURL, "connect-go", "connect", wire{http: "2", codec: "json"}},
		{"Connect binary HTTP/1.1", mainURL, "connect-go", "connect", wire{http: "1.1", codec: "proto", workers: 2}},
		{"Connect JSON HTTP/1.1", mainURL, "connect-go", "connect", wire{http: "1.1", codec: "json", workers: 2}},
		{"http1 Connect binary HTTP/1.1", mainURL, "http1", "connect", wire{http: "1.1", codec: "proto", workers: 2}},
		{"http1 Connect JSON HTTP/1.1", mainURL, "http1", "connect", wire{http: "1.1", codec: "json", workers: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fns, closeFns, err := newVerifiers(c.base, c.client, c.protocol, c.w, 1, true, "fe", "loadgen")
			if err != nil {
				t.Fatal(err)
			}
			defer closeFns()
			if got := expectFloorRefusal(fns[0])(t.Context(), floorAuthorization); got != "" {
				t.Fatalf("floor outcome %q, want the expected refusal", got)
			}
			if got := fns[0](t.Context(), "Bearer x.y.z"); got != floorRefusal {
				t.Fatalf("plain outcome %q, want %q", got, floorRefusal)
			}
		})
	}
}

// -mode mixed sends, of every 8 requests, 5 distinct new tokens, 2 the
// repeated token and 1 the floor value; its check wants the floor refused
// and every token allowed.
func TestMixed(t *testing.T) {
	pool := &tokenSet{}
	for i := range 11 {
		pool.authz = append(pool.authz, fmt.Sprintf("Bearer t%d", i))
	}
	m := mixed(pool)
	counts := map[string]int{}
	for _, a := range m.authz {
		counts[a]++
	}
	// 10 fresh tokens fill two rounds of 5: 16 requests.
	if len(m.authz) != 16 || counts["Bearer t10"] != 4 || counts[floorAuthorization] != 2 {
		t.Fatalf("mixed: %d requests, %d repeats, %d floors: %q", len(m.authz), counts["Bearer t10"], counts[floorAuthorization], m.authz)
	}
	for i := range 10 {
		if counts[fmt.Sprintf("Bearer t%d", i)] != 1 {
			t.Fatalf("new token t%d sent %d times", i, counts[fmt.Sprintf("Bearer t%d", i)])
		}
	}
	allowAll := expectMixed(func(context.Context, string) string { return "" })
	refuseAll := expectMixed(func(context.Context, string) string { return floorRefusal })
	if got := allowAll(t.Context(), "Bearer t1"); got != "" {
		t.Errorf("allowed token: %q", got)
	}
	if got := allowAll(t.Context(), floorAuthorization); got == "" {
		t.Error("an allowed floor value passed")
	}
	if got := refuseAll(t.Context(), floorAuthorization); got != "" {
		t.Errorf("refused floor value: %q", got)
	}
	if got := refuseAll(t.Context(), "Bearer t1"); got != floorRefusal {
		t.Errorf("refused token: %q, want the refusal reported", got)
	}
}

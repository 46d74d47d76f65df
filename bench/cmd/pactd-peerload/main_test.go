package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/bench/internal/loadstat"
)

func TestQuantileNearestRank(t *testing.T) {
	var recs []*recorder
	for w := range 4 { // four workers, latencies 1..100 ms spread across them
		r := &recorder{}
		for i := w + 1; i <= 100; i += 4 {
			r.add(time.Duration(i)*time.Millisecond, "")
		}
		recs = append(recs, r)
	}
	res := merge(recs, time.Second)
	if res.requests != 100 || res.failures != 0 {
		t.Fatalf("requests %d failures %d, want 100 and 0", res.requests, res.failures)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := res.quantile(c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := (&result{}).quantile(0.5); got != 0 {
		t.Errorf("empty quantile = %v, want 0", got)
	}
}

func TestCheckOPA(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{200, `{"result":true}`, ""}, // positive control
		{200, `{"decision_id":"x","result":true}`, ""},
		{200, `{"result":false}`, "allow=false"},
		{200, `{}`, "no result (policy undefined)"},
		{200, `not json`, "answer not JSON"},
		{500, `{"result":true}`, "status 500"},
	} {
		if got := checkOPA(c.status, []byte(c.body)); got != c.want {
			t.Errorf("checkOPA(%d, %s) = %q, want %q", c.status, c.body, got, c.want)
		}
	}
}

func TestCheckIntrospection(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{200, `{"active":true,"client_id":"c"}`, ""}, // positive control
		{200, `{"active":false}`, "active=false"},
		{200, `{}`, "active=false"},
		{401, `{"active":true}`, "status 401"},
	} {
		if got := checkIntrospection(c.status, []byte(c.body)); got != c.want {
			t.Errorf("checkIntrospection(%d, %s) = %q, want %q", c.status, c.body, got, c.want)
		}
	}
}

// TestDriveCountsEveryAnswer runs a bounded load against a server that
// refuses every seventh request: each request and each refusal is counted,
// and every body of the pool is sent once per cycle.
func TestDriveCountsEveryAnswer(t *testing.T) {
	var n atomic.Int64
	seen := make([]atomic.Int64, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Input struct{ Token string } `json:"input"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &in)
		var i int
		_, _ = fmtSscan(in.Input.Token, &i)
		seen[i].Add(1)
		if n.Add(1)%7 == 0 {
			_, _ = w.Write([]byte(`{"result":false}`))
			return
		}
		_, _ = w.Write([]byte(`{"result":true}`))
	}))
	defer srv.Close()
	var bodies [][]byte
	for i := range 10 {
		b, _ := json.Marshal(map[string]any{"input": map[string]string{"token": string(rune('0' + i))}})
		bodies = append(bodies, b)
	}
	send := httpSender(loadstat.HTTP1Client(5), srv.URL, "application/json", nil, checkOPA)
	res := drive(context.Background(), 5, 10*time.Second, 700, send, bodies)
	if res.requests != 700 || n.Load() != 700 {
		t.Fatalf("requests %d (server saw %d), want 700", res.requests, n.Load())
	}
	if res.failures != 100 || res.failSet["allow=false"] != 100 {
		t.Fatalf("failures %d (%v), want 100 allow=false", res.failures, res.failSet)
	}
	for i := range seen {
		if got := seen[i].Load(); got != 70 {
			t.Errorf("body %d sent %d times, want 70", i, got)
		}
	}
}

func fmtSscan(s string, i *int) (int, error) {
	if len(s) != 1 || s[0] < '0' || s[0] > '9' {
		return 0, io.EOF
	}
	*i = int(s[0] - '0')
	return 1, nil
}

func TestCPUDeltaCountsNewProcessesFromZero(t *testing.T) {
	before := map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: time.Second}
	after := map[int]time.Duration{1: 3 * time.Second, 2: 2 * time.Second, 3: 500 * time.Millisecond}
	if got, exited := cpuDelta(before, after); got != 2500*time.Millisecond || exited != 1 {
		t.Fatalf("cpuDelta = %v, %d exited; want 2.5s, 1 exited (pid 4)", got, exited)
	}
	if _, exited := cpuDelta(after, after); exited != 0 {
		t.Fatalf("no process gone: %d exited, want 0", exited)
	}
}

// TestTokensVerifyAgainstJWKS checks that a signed token verifies with the
// key the JWKS (the policy's "cert") publishes, and a altered one does not.
func TestTokensVerifyAgainstJWKS(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "k.pem")
	k, err := loadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := loadOrCreateKey(keyFile) // read back, not created again
	if err != nil || !k2.Equal(k) {
		t.Fatalf("key read back differs (%v)", err)
	}
	jwks, err := publicJWKS(k)
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct{ X, Y string } `json:"keys"`
	}
	if err := json.Unmarshal(jwks, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", jwks, err)
	}
	x, _ := b64.DecodeString(set.Keys[0].X)
	y, _ := b64.DecodeString(set.Keys[0].Y)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatalf("JWKS key: %v", err)
	}

	bodies, err := opaBodies(k, 3, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]bool{}
	for _, b := range bodies {
		var in struct {
			Input struct{ Token string } `json:"input"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		tokens[in.Input.Token] = true
		verify := func(tok string) bool {
			i := strings.LastIndexByte(tok, '.')
			sig, _ := b64.DecodeString(tok[i+1:])
			sum := sha256.Sum256([]byte(tok[:i]))
			return len(sig) == 64 && ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
		}
		if !verify(in.Input.Token) { // positive control
			t.Fatalf("token does not verify with the JWKS key")
		}
		parts := strings.Split(in.Input.Token, ".")
		claims, _ := b64.DecodeString(parts[1])
		altered := parts[0] + "." + b64.EncodeToString([]byte(strings.Replace(string(claims), opaAudience, "https://other.invalid", 1))) + "." + parts[2]
		if verify(altered) {
			t.Fatalf("altered token verifies")
		}
		var c map[string]any
		if err := json.Unmarshal(claims, &c); err != nil || c["iss"] != opaIssuer || c["aud"] != opaAudience {
			t.Fatalf("claims %s: %v", claims, err)
		}
	}
	if len(tokens) != 3 {
		t.Fatalf("%d distinct tokens, want 3", len(tokens))
	}
}

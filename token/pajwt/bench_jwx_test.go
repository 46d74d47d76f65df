package pajwt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// BenchmarkInterleavedES256JWX measures lestrrat-go/jwx/v3 beside pactd in
// the same loop, as BenchmarkInterleavedES256 does: chunks of raw
// ecdsa.VerifyASN1, new-token pajwt Verify (every check, agent lookup and
// JWKS included), jwx's jws.Verify (signature only, exact key and alg,
// compact only) and jwx's jwt.Parse (signature, then iss, aud, exp, iat and
// nbf validated) over the same new tokens, each chunk's process CPU charged
// to its path. Ratios are throughput relative to raw (higher is faster).
func BenchmarkInterleavedES256JWX(b *testing.B) {
	s := newESSigner(b, "es-1")
	w := newBenchWorld(b, mustKeySet(b, s.key(b)), 1024)
	toks := w.pool(b, s, 4096)
	bufs := make([][]byte, len(toks))
	for i, t := range toks {
		bufs[i] = []byte(strings.TrimPrefix(t, "Bearer ")) // jwx takes the bare token
	}
	digest := sha256.Sum256([]byte(w.rawToken(b, s)))
	der, err := ecdsa.SignASN1(rand.Reader, s.ec, digest[:])
	if err != nil {
		b.Fatal(err)
	}
	pub := &s.ec.PublicKey
	clock := jwt.ClockFunc(func() time.Time { return time.Unix(w.now, 0) })
	jwtOpts := []jwt.ParseOption{
		jwt.WithKey(jwa.ES256(), pub), jwt.WithClock(clock),
		jwt.WithIssuer(testIssuer), jwt.WithAudience(testAudience), jwt.WithAcceptableSkew(30 * time.Second),
	}
	jwsKey := jwxjws.WithKey(jwa.ES256(), pub)
	if _, err := jwt.Parse(bufs[0], jwtOpts...); err != nil {
		b.Fatalf("control: jwx refuses a pool token: %v", err)
	}
	const chunk = 16
	ctx := context.Background()
	var rawD, newD, jwsD, jwtD time.Duration
	n, i := 0, 0
	for b.Loop() {
		t0 := processCPU()
		for range chunk {
			if !ecdsa.VerifyASN1(pub, digest[:], der) {
				b.Fatal("raw verify failed")
			}
		}
		t1 := processCPU()
		for k := range chunk {
			if res, err := w.v.Verify(ctx, toks[(i+k)%len(toks)], w.lookup); err != nil || res.Cached {
				b.Fatalf("new: %v cached %v", err, res.Cached)
			}
		}
		t2 := processCPU()
		for k := range chunk {
			if _, err := jwxjws.Verify(bufs[(i+k)%len(bufs)], jwsKey, jwxjws.WithCompact()); err != nil {
				b.Fatalf("jwx jws.Verify: %v", err)
			}
		}
		t3 := processCPU()
		for k := range chunk {
			if _, err := jwt.Parse(bufs[(i+k)%len(bufs)], jwtOpts...); err != nil {
				b.Fatalf("jwx jwt.Parse: %v", err)
			}
		}
		t4 := processCPU()
		i += chunk
		n += chunk
		rawD, newD, jwsD, jwtD = rawD+t1-t0, newD+t2-t1, jwsD+t3-t2, jwtD+t4-t3
	}
	rawOp := float64(rawD) / float64(n)
	newOp := float64(newD) / float64(n)
	jwsOp := float64(jwsD) / float64(n)
	jwtOp := float64(jwtD) / float64(n)
	b.ReportMetric(rawOp, "raw-cpu-ns/op")
	b.ReportMetric(newOp, "new-cpu-ns/op")
	b.ReportMetric(jwsOp, "jwxjws-cpu-ns/op")
	b.ReportMetric(jwtOp, "jwxjwt-cpu-ns/op")
	b.ReportMetric(rawOp/newOp, "new/raw")
	b.ReportMetric(rawOp/jwsOp, "jwxjws/raw")
	b.ReportMetric(rawOp/jwtOp, "jwxjwt/raw")
}

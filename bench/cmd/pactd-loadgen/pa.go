package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Key ids the test PA publishes.
const (
	ecKID  = "es-1"
	rsaKID = "rs-1"
)

// tokenLifetime is exp - iat of every token; pactd accepts at most 300 s.
const tokenLifetime = 300 * time.Second

// testPA is a personal agent: an ES256 key (and optionally an RS256-2048
// key) whose JWKS it serves on loopback, and a signer of PACT JWTs.
type testPA struct {
	ec      *ecdsa.PrivateKey
	rsa     *rsa.PrivateKey // nil unless RS256 was asked for
	srv     *http.Server
	issuer  string
	jwksURI string
	fetches atomic.Int64 // JWKS requests served
	// shards are the JWKS documents of the -pa-keys agents (manyKeys).
	shards atomic.Pointer[[][]byte]
}

// startPA loads or creates the PA's keys and serves its JWKS on addr
// (host:port, port 0 for a free one). With keyFile set the keys persist in
// that PEM file, so a rerun with the same addr registers the same agent.
func startPA(addr, keyFile string, withRSA bool) (*testPA, error) {
	pa := &testPA{}
	if err := pa.loadKeys(keyFile, withRSA); err != nil {
		return nil, err
	}
	body, err := pa.jwks()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("JWKS listener: %w", err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		_ = ln.Close()
		return nil, fmt.Errorf("JWKS address %s is not loopback", ln.Addr())
	}
	pa.issuer = "http://" + ln.Addr().String()
	pa.jwksURI = pa.issuer + "/jwks.json"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		pa.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(body)
	})
	mux.HandleFunc("GET /pa/{shard}/jwks.json", pa.serveShard)
	pa.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = pa.srv.Serve(ln) }()
	return pa, nil
}

// Close stops the JWKS server.
func (pa *testPA) Close() { _ = pa.srv.Close() }

func (pa *testPA) loadKeys(keyFile string, withRSA bool) error {
	if keyFile != "" {
		b, err := os.ReadFile(keyFile)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for rest := b; ; {
			var blk *pem.Block
			blk, rest = pem.Decode(rest)
			if blk == nil {
				break
			}
			k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				return fmt.Errorf("%s: %w", keyFile, err)
			}
			switch k := k.(type) {
			case *ecdsa.PrivateKey:
				if k.Curve == elliptic.P256() {
					pa.ec = k
				}
			case *rsa.PrivateKey:
				if k.N.BitLen() == 2048 {
					pa.rsa = k
				}
			}
		}
	}
	changed := false
	if pa.ec == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		pa.ec, changed = k, true
	}
	if withRSA && pa.rsa == nil {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return err
		}
		pa.rsa, changed = k, true
	}
	if keyFile == "" || !changed {
		return nil
	}
	keys := []any{pa.ec}
	if pa.rsa != nil {
		keys = append(keys, pa.rsa)
	}
	var out []byte
	for _, k := range keys {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return err
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})...)
	}
	return os.WriteFile(keyFile, out, 0o600)
}

// jwks returns the JWKS document: the EC key, and the RSA key when present.
func (pa *testPA) jwks() ([]byte, error) {
	b64 := base64.RawURLEncoding.EncodeToString
	pub, err := pa.ec.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return nil, err
	}
	keys := []map[string]string{{
		"kty": "EC", "crv": "P-256", "x": b64(pub[1:33]), "y": b64(pub[33:65]),
		"kid": ecKID, "alg": "ES256", "use": "sig",
	}}
	if pa.rsa != nil {
		keys = append(keys, map[string]string{
			"kty": "RSA", "n": b64(pa.rsa.N.Bytes()), "e": b64(big.NewInt(int64(pa.rsa.E)).Bytes()),
			"kid": rsaKID, "alg": "RS256", "use": "sig",
		})
	}
	return json.Marshal(map[string]any{"keys": keys})
}

// signer makes compact JWS tokens with one algorithm and key.
type signer struct {
	alg       string // "ES256" or "RS256"
	headerB64 string
	ec        *ecdsa.PrivateKey
	rsa       *rsa.PrivateKey
}

func (pa *testPA) signer(alg string) (*signer, error) {
	s := &signer{alg: alg, ec: pa.ec, rsa: pa.rsa}
	kid := ecKID
	switch alg {
	case "ES256":
	case "RS256":
		if pa.rsa == nil {
			return nil, errors.New("RS256 needs the RSA key")
		}
		kid = rsaKID
	default:
		return nil, fmt.Errorf("unknown alg %q", alg)
	}
	h, err := json.Marshal(map[string]string{"alg": alg, "typ": "JWT", "kid": kid})
	if err != nil {
		return nil, err
	}
	s.headerB64 = base64.RawURLEncoding.EncodeToString(h)
	return s, nil
}

// claims returns the JSON claims of one token. sub and jti make it unique.
func claims(iss, aud, sub, jti string, iat time.Time) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"iss":`...)
	b = strconv.AppendQuote(b, iss)
	b = append(b, `,"sub":`...)
	b = strconv.AppendQuote(b, sub)
	b = append(b, `,"aud":`...)
	b = strconv.AppendQuote(b, aud)
	b = append(b, `,"iat":`...)
	b = strconv.AppendInt(b, iat.Unix(), 10)
	b = append(b, `,"exp":`...)
	b = strconv.AppendInt(b, iat.Add(tokenLifetime).Unix(), 10)
	b = append(b, `,"jti":`...)
	b = strconv.AppendQuote(b, jti)
	return append(b, '}')
}

// signingInput returns base64url(header) "." base64url(claims).
func (s *signer) signingInput(claims []byte) []byte {
	b := make([]byte, 0, 512)
	b = append(b, s.headerB64...)
	b = append(b, '.')
	return base64.RawURLEncoding.AppendEncode(b, claims)
}

// sign returns the compact JWS of claims.
func (s *signer) sign(claims []byte) (string, error) {
	in := s.signingInput(claims)
	d := sha256.Sum256(in)
	var sig []byte
	switch s.alg {
	case "ES256":
		r, ss, err := ecdsa.Sign(rand.Reader, s.ec, d[:])
		if err != nil {
			return "", err
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
	case "RS256":
		var err error
		if sig, err = rsa.SignPKCS1v15(nil, s.rsa, crypto.SHA256, d[:]); err != nil {
			return "", err
		}
	}
	in = append(in, '.')
	return string(base64.RawURLEncoding.AppendEncode(in, sig)), nil
}

// tokenSet is a pool of "Bearer <jwt>" values signed at one moment.
type tokenSet struct {
	authz    []string
	signedAt time.Time // the tokens' iat; they expire tokenLifetime later
}

// signPool signs n distinct tokens (sub and jti differ) with the given
// prefix, in parallel over GOMAXPROCS goroutines.
func signPool(s *signer, iss, aud, prefix string, n int) (*tokenSet, error) {
	return signPoolMany([]*signer{s}, []string{iss}, aud, prefix, n)
}

// signPoolMany is signPool with several keys: token i is signed by
// signers[i % len] as issuers[i % len].
func signPoolMany(signers []*signer, issuers []string, aud, prefix string, n int) (*tokenSet, error) {
	ts := &tokenSet{authz: make([]string, n), signedAt: time.Now()}
	workers := min(runtime.GOMAXPROCS(0), max(n, 1))
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				k := i % len(signers)
				tok, err := signers[k].sign(claims(issuers[k], aud, fmt.Sprintf("%s-%08d", prefix, i), fmt.Sprintf("%s%016x", prefix, i), ts.signedAt))
				if err != nil {
					errs[w] = err
					return
				}
				ts.authz[i] = "Bearer " + tok
			}
		})
	}
	wg.Wait()
	packTokens(ts.authz)
	return ts, errors.Join(errs...)
}

// packTokens copies the tokens into one string and points each element at
// its part, so a pool of 200,000 tokens is one object for the collector
// rather than 200,000: sweeping after each cycle visits every span that
// holds a live object, and on the load generator's one core a long sweep
// delays the network poller (see gcpace.go), which would show as pactd's
// latency.
func packTokens(toks []string) {
	n := 0
	for _, t := range toks {
		n += len(t)
	}
	var b strings.Builder
	b.Grow(n)
	for _, t := range toks {
		b.WriteString(t)
	}
	all := b.String()
	off := 0
	for i, t := range toks {
		toks[i] = all[off : off+len(t)]
		off += len(t)
	}
}

// mixed interleaves a pool of distinct tokens with a repeated token (the
// pool's last) and the floor value: of every 8 requests 5 are new tokens,
// 2 the repeated one and 1 refused, a load that exercises every path
// pactd keeps state for (the repeat-token cache fills with the new ones).
func mixed(pool *tokenSet) *tokenSet {
	n := len(pool.authz)
	if n < 2 {
		return pool
	}
	repeat, fresh := pool.authz[n-1], pool.authz[:n-1]
	out := &tokenSet{signedAt: pool.signedAt, authz: make([]string, 0, len(fresh)*8/5+8)}
	next := 0
	for next < len(fresh) {
		for slot := range 8 {
			switch slot {
			case 1, 6:
				out.authz = append(out.authz, repeat)
			case 3:
				out.authz = append(out.authz, floorAuthorization)
			default:
				out.authz = append(out.authz, fresh[next%len(fresh)])
				next++
			}
		}
	}
	return out
}

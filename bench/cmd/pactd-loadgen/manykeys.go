package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// Bounds of -pa-keys.
const (
	// maxPAKeys bounds -pa-keys.
	maxPAKeys = 10_000
	// keysPerAgent is the most keys one agent publishes: pactd accepts at
	// most 100 keys in one JWKS (jose.DefaultMaxKeys).
	keysPerAgent = 100
)

// manyKeys makes the PA sign with n ES256 keys (-pa-keys), for runs that
// measure pactd with many active PA keys (its per-key ES256 tables): key 0
// is the PA's own key, the others are derived from it (so a rerun with the
// same -key-file publishes the same keys), and they are spread over agents
// of at most keysPerAgent keys, agent s with issuer {PA}/pa/s and its JWKS
// at {PA}/pa/s/jwks.json, each registered with the admin token. It returns
// one signer per key and the issuer that key signs as.
func (pa *testPA) manyKeys(ctx context.Context, base, admin string, n int) ([]*signer, []string, error) {
	d0, err := pa.ec.Bytes()
	if err != nil {
		return nil, nil, err
	}
	order := elliptic.P256().Params().N
	keys := []*ecdsa.PrivateKey{pa.ec}
	for i := 1; i < n; i++ {
		var idx [4]byte
		binary.BigEndian.PutUint32(idx[:], uint32(i))
		h := sha256.Sum256(append(append([]byte("pactd-loadgen PA key "), d0...), idx[:]...))
		d := new(big.Int).SetBytes(h[:])
		d.Mod(d, new(big.Int).Sub(order, big.NewInt(1))).Add(d, big.NewInt(1))
		k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d.FillBytes(make([]byte, 32)))
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
	}
	var bodies [][]byte
	signers := make([]*signer, n)
	issuers := make([]string, n)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	hc := bearerClient{h2cClient(), "Bearer " + admin}
	defer hc.c.CloseIdleConnections()
	ac := pactv1connect.NewAgentServiceClient(hc, base)
	for s := 0; s*keysPerAgent < n; s++ {
		iss := pa.issuer + "/pa/" + strconv.Itoa(s)
		var jwks []map[string]string
		for i := s * keysPerAgent; i < min(n, (s+1)*keysPerAgent); i++ {
			kid := "es-" + strconv.Itoa(i+1)
			pub, err := keys[i].PublicKey.Bytes()
			if err != nil {
				return nil, nil, err
			}
			jwks = append(jwks, map[string]string{"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
				"x": base64.RawURLEncoding.EncodeToString(pub[1:33]), "y": base64.RawURLEncoding.EncodeToString(pub[33:])})
			if signers[i], err = ecSigner(keys[i], kid); err != nil {
				return nil, nil, err
			}
			issuers[i] = iss
		}
		body, err := json.Marshal(map[string]any{"keys": jwks})
		if err != nil {
			return nil, nil, err
		}
		bodies = append(bodies, body)
		// The JWKS must be served before pactd is told where it is.
		pa.shards.Store(&bodies)
		reg, err := ac.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: iss, JwksUri: iss + "/jwks.json", DisplayName: fmt.Sprintf("pactd-loadgen PA %d", s)})
		if err != nil {
			return nil, nil, fmt.Errorf("RegisterAgent %s: %w", iss, err)
		}
		if !reg.GetAgent().GetEnabled() {
			return nil, nil, fmt.Errorf("agent %s is disabled", reg.GetAgent().GetId())
		}
	}
	return signers, issuers, nil
}

// serveShard serves the JWKS of one -pa-keys agent.
func (pa *testPA) serveShard(w http.ResponseWriter, r *http.Request) {
	s, err := strconv.Atoi(r.PathValue("shard"))
	bodies := pa.shards.Load()
	if err != nil || bodies == nil || s < 0 || s >= len(*bodies) {
		http.NotFound(w, r)
		return
	}
	pa.fetches.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write((*bodies)[s])
}

// ecSigner is an ES256 signer with key k under kid.
func ecSigner(k *ecdsa.PrivateKey, kid string) (*signer, error) {
	h, err := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT", "kid": kid})
	if err != nil {
		return nil, err
	}
	return &signer{alg: "ES256", headerB64: base64.RawURLEncoding.EncodeToString(h), ec: k}, nil
}

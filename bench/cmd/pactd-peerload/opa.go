package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// OPA's benchmark policy checks these claims (bench/scripts/bench-peers.sh writes
// the same values into it).
const (
	opaIssuer   = "https://pa.bench.invalid"
	opaAudience = "https://brand.bench.invalid"
	// tokenLifetime outlasts signing, warm-up and any allowed run.
	tokenLifetime = 15 * time.Minute
)

// loadOrCreateKey reads a P-256 key from a PEM file, creating the file
// with a new key when it is missing, so that the policy (written before OPA
// starts) and the load run share the key.
func loadOrCreateKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return nil, err
		}
		return k, nil
	}
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%s: not a P-256 key", path)
	}
	return ek, nil
}

var b64 = base64.RawURLEncoding

// publicJWKS is the JWKS of k's public key, as io.jwt.decode_verify's
// "cert" constraint takes it.
func publicJWKS(k *ecdsa.PrivateKey) ([]byte, error) {
	// Bytes gives the uncompressed point 0x04 || X || Y, 32 bytes each.
	pt, err := k.PublicKey.Bytes()
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "bench",
		"x": b64.EncodeToString(pt[1:33]), "y": b64.EncodeToString(pt[33:65]),
	}}})
}

// signES256 signs claims as a compact JWS.
func signES256(k *ecdsa.PrivateKey, claims map[string]any) (string, error) {
	hdr := b64.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT","kid":"bench"}`))
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := hdr + "." + b64.EncodeToString(body)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig), nil
}

// opaBodies signs n distinct tokens (sub and jti differ) and wraps each
// in OPA's data API input document.
func opaBodies(k *ecdsa.PrivateKey, n int, now time.Time) ([][]byte, error) {
	out := make([][]byte, n)
	for i := range n {
		tok, err := signES256(k, map[string]any{
			"iss": opaIssuer, "aud": opaAudience,
			"sub": "user-" + strconv.Itoa(i), "jti": strconv.Itoa(i) + "-" + strconv.FormatInt(now.UnixNano(), 36),
			"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(tokenLifetime).Unix(),
		})
		if err != nil {
			return nil, err
		}
		out[i], err = json.Marshal(map[string]any{"input": map[string]string{"token": tok}})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkOPA accepts only 200 with {"result": true}: the policy's allow.
func checkOPA(status int, body []byte) string {
	if status != 200 {
		return "status " + strconv.Itoa(status)
	}
	var r struct {
		Result *bool `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "answer not JSON"
	}
	switch {
	case r.Result == nil:
		return "no result (policy undefined)"
	case !*r.Result:
		return "allow=false"
	}
	return ""
}

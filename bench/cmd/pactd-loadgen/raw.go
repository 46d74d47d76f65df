package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"runtime"
	"time"
)

// rawResult is the raw signature-verification limit on one core.
type rawResult struct {
	alg     string
	ops     int64
	elapsed time.Duration
	cpu     time.Duration // CPU time the process used meanwhile
}

func (r rawResult) perSecond() float64 { return float64(r.ops) / r.elapsed.Seconds() }

// perCPUSecond is verifications per second of CPU actually received: on a
// shared machine it is steadier than perSecond.
func (r rawResult) perCPUSecond() float64 { return float64(r.ops) / r.cpu.Seconds() }

// runRaw measures single-threaded signature verifications per second for d:
// crypto/ecdsa.VerifyASN1 (P-256) or rsa.VerifyPKCS1v15 (2048-bit) over a
// precomputed SHA-256 digest of a signing input the size of the tokens the
// load runs send. It is the limit pactd's per-request cost is compared with.
func runRaw(alg string, d time.Duration) (rawResult, error) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)

	pa := &testPA{}
	if err := pa.loadKeys("", alg == "RS256"); err != nil {
		return rawResult{}, err
	}
	s, err := pa.signer(alg)
	if err != nil {
		return rawResult{}, err
	}
	// The same claim shapes as signPool's tokens, with a typical issuer.
	in := s.signingInput(claims("http://127.0.0.1:40000", "http://localhost:3000/a2a",
		"user-00000000", "user0000000000000000", time.Now()))
	digest := sha256.Sum256(in)
	var verify func() bool
	switch alg {
	case "ES256":
		sig, err := ecdsa.SignASN1(rand.Reader, pa.ec, digest[:])
		if err != nil {
			return rawResult{}, err
		}
		pub := &pa.ec.PublicKey
		verify = func() bool { return ecdsa.VerifyASN1(pub, digest[:], sig) }
	case "RS256":
		sig, err := rsa.SignPKCS1v15(nil, pa.rsa, crypto.SHA256, digest[:])
		if err != nil {
			return rawResult{}, err
		}
		pub := &pa.rsa.PublicKey
		verify = func() bool { return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) == nil }
	}
	for range 200 { // warm caches and the CPU's frequency governor
		if !verify() {
			return rawResult{}, errors.New("raw verify failed")
		}
	}
	r := rawResult{alg: alg}
	cpu0 := cpuTime()
	start := time.Now()
	for {
		for range 16 {
			if !verify() {
				return rawResult{}, errors.New("raw verify failed")
			}
		}
		r.ops += 16
		if r.elapsed = time.Since(start); r.elapsed >= d {
			r.cpu = cpuTime() - cpu0
			return r, nil
		}
	}
}

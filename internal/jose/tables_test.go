package jose_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"net/http"
	"testing"
	"time"

	"pactd.dev/pactd/internal/es256"
	"pactd.dev/pactd/internal/jose"
	"pactd.dev/pactd/internal/jws"
)

// esSig signs digest with k as raw R||S.
func esSig(t *testing.T, k *ecdsa.PrivateKey, digest [32]byte) []byte {
	t.Helper()
	r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return sig
}

// TestTablesFollowTheKeySet: a key earns a table by verifying; a refetch
// that still publishes the key keeps it (no rebuild), one that drops the
// key frees it, and a 404 frees every table of the URI. Every verification
// answers as crypto/ecdsa does, before and after.
func TestTablesFollowTheKeySet(t *testing.T) {
	t.Parallel()
	a, b, c := newECKey(t), newECKey(t), newECKey(t)
	srv := newJWKSServer(t, jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil), ecJWK(t, &b.PublicKey, "b", nil)))
	clock := newFakeClock()
	tables := es256.NewCache(es256.Config{BuildAfter: 2, Now: clock.Now})
	cl := newDevClient(t, clock, func(cfg *jose.Config) { cfg.Tables = tables })
	digest := sha256.Sum256([]byte("signing input"))

	verify := func(set *jose.KeySet, kid string, priv *ecdsa.PrivateKey) {
		t.Helper()
		k, ok := set.Lookup(kid)
		if !ok {
			t.Fatalf("kid %s not in the set", kid)
		}
		sig := esSig(t, priv, digest)
		if !k.VerifyES256(&digest, sig, jws.ThirdParty) {
			t.Fatalf("ok/%s: a genuine signature is refused", kid)
		}
		sig[10] ^= 1
		if k.VerifyES256(&digest, sig, jws.ThirdParty) {
			t.Fatalf("fail/%s-flipped-bit: accepted", kid)
		}
	}
	set := mustKeys(t, cl, srv.URL)
	for range 2 {
		verify(set, "a", a)
		verify(set, "b", b)
	}
	if st := tables.Stats(); st.Tables != 2 || st.Builds != 2 {
		t.Fatalf("after two successes each: %+v", st)
	}

	// The PA rotates b out and c in: a keeps its table, b's is freed.
	srv.set(jwksDoc(t, ecJWK(t, &a.PublicKey, "a", nil), ecJWK(t, &c.PublicKey, "c", nil)), http.StatusOK, nil)
	clock.Advance(11 * time.Minute)
	set = mustKeys(t, cl, srv.URL)
	if st := tables.Stats(); st.Tables != 1 || st.Released != 1 || st.Builds != 2 {
		t.Fatalf("after the rotation: %+v", st)
	}
	verify(set, "a", a) // through a's kept table
	verify(set, "c", c)
	if st := tables.Stats(); st.Builds != 2 || st.ViaTable < 2 {
		t.Fatalf("a was rebuilt or not used: %+v", st)
	}

	// The document is withdrawn: every table of the URI goes.
	srv.set(nil, http.StatusNotFound, nil)
	clock.Advance(11 * time.Minute)
	if _, err := cl.Keys(t.Context(), srv.URL); err == nil {
		t.Fatal("a withdrawn JWKS still served")
	}
	if st := tables.Stats(); st.Tables != 0 || st.Bytes != 0 || st.Released != 2 {
		t.Fatalf("after the 404: %+v", st)
	}
	// The old set, still held by a caller, verifies stock.
	verify(set, "a", a)
}

// TestVerifyES256WithoutTables: keys of a client without Tables, and keys
// built by hand, verify stock under the low-S rule; an RSA key never
// verifies ES256.
func TestVerifyES256WithoutTables(t *testing.T) {
	t.Parallel()
	a := newECKey(t)
	k, err := jose.NewECKey("a", &a.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte("x"))
	sig := esSig(t, a, digest)
	if !k.VerifyES256(&digest, sig, jws.ThirdParty) {
		t.Fatal("ok/stock: refused")
	}
	// The twin (r, n-s): one of the two has a high S, which only a third
	// party's key may carry.
	n := elliptic.P256().Params().N
	twin := append([]byte{}, sig[:32]...)
	twin = append(twin, new(big.Int).Sub(n, new(big.Int).SetBytes(sig[32:])).FillBytes(make([]byte, 32))...)
	high := sig
	if jws.HighS(twin) {
		high = twin
	}
	if !k.VerifyES256(&digest, high, jws.ThirdParty) || k.VerifyES256(&digest, high, jws.Own) {
		t.Fatal("the low-S rule is not applied: high S must pass for a third party and fail for Own")
	}
	r, err := jose.NewRSAKey("r", &newRSAKey(t, 2048).PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if r.VerifyES256(&digest, sig, jws.ThirdParty) {
		t.Fatal("fail/rsa-key: verified ES256")
	}
}

package provkeys_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/internal/testkit/testclock"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// newClock is the tests' clock, at their fixed start.
func newClock() *testclock.Clock { return testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)) }

// engine opens stores on one database: the same database for every call
// within a test, so several rings can act as replicas.
type engine func(t *testing.T) db.Store

// sharedStores runs f once per store engine (dbtest.Engines), open opening
// stores on the engine's one database.
func sharedStores(t *testing.T, f func(t *testing.T, open engine)) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		dir := t.TempDir()
		f(t, func(t *testing.T) db.Store { return dbtest.Open(t, dbURL, dir) })
	})
}

var testKEK = bytes.Repeat([]byte{0x42}, 32)

func openRing(t *testing.T, s provkeys.Store, c *testclock.Clock, mod ...func(*provkeys.Config)) *provkeys.Ring {
	t.Helper()
	cfg := provkeys.Config{Store: s, KEK: testKEK, Now: c.Now}
	for _, m := range mod {
		m(&cfg)
	}
	r, err := provkeys.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("provkeys.Open: %v", err)
	}
	return r
}

// parsedJWS is a compact JWS split for checks.
type parsedJWS struct {
	header map[string]any
	input  []byte
	sig    []byte
}

func splitJWS(t *testing.T, tok string) parsedJWS {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("JWS has %d parts", len(parts))
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	var h map[string]any
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatalf("header: %v", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature: %d bytes, %v; want 64 raw R||S", len(sig), err)
	}
	return parsedJWS{header: h, input: []byte(parts[0] + "." + parts[1]), sig: sig}
}

// verifyWith checks a JWS with crypto/ecdsa directly, independent of the
// package's own code.
func verifyWith(pub *ecdsa.PublicKey, j parsedJWS) bool {
	d := sha256.Sum256(j.input)
	return ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(j.sig[:32]), new(big.Int).SetBytes(j.sig[32:]))
}

func jwksOf(t *testing.T, r *provkeys.Ring) (map[string]*ecdsa.PublicKey, []string) {
	t.Helper()
	doc, err := r.JWKS(t.Context())
	if err != nil {
		t.Fatalf("JWKS: %v", err)
	}
	keys, err := provkeys.ParseJWKS(doc)
	if err != nil {
		t.Fatalf("ParseJWKS(%s): %v", doc, err)
	}
	var raw struct {
		Keys []map[string]any `json:"keys"`
	}
	_ = json.Unmarshal(doc, &raw)
	var order []string
	for _, k := range raw.Keys {
		if len(k) != 7 {
			t.Fatalf("JWK %v: want exactly kty,crv,x,y,kid,alg,use", k)
		}
		order = append(order, k["kid"].(string))
	}
	return keys, order
}

func signedKID(t *testing.T, r *provkeys.Ring) string {
	t.Helper()
	tok, err := r.Sign(t.Context(), "at+jwt", []byte(`{"x":1}`))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return splitJWS(t, tok).header["kid"].(string)
}

func TestThumbprintIsRFC7638(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := priv.PublicKey.Bytes()
	// The canonical form by another route: a map marshals with sorted keys.
	canon, _ := json.Marshal(map[string]string{
		"kty": "EC", "crv": "P-256",
		"x": base64.RawURLEncoding.EncodeToString(raw[1:33]), "y": base64.RawURLEncoding.EncodeToString(raw[33:]),
	})
	sum := sha256.Sum256(canon)
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	got, err := provkeys.Thumbprint(&priv.PublicKey)
	if err != nil || got != want {
		t.Fatalf("Thumbprint = %q, %v; want %q", got, err, want)
	}
	jwk, err := provkeys.PublicJWK(&priv.PublicKey)
	if err != nil || jwk.Kid != want || jwk.Alg != "ES256" || jwk.Use != "sig" {
		t.Fatalf("PublicJWK = %+v, %v", jwk, err)
	}
}

func TestSignPublishAndKeysAtRest(t *testing.T) {
	sharedStores(t, func(t *testing.T, open engine) {
		ctx := t.Context()
		c := newClock()
		s := open(t)
		r := openRing(t, s, c)

		tok, err := r.Sign(ctx, "pact-receipt+jws", []byte(`{"grantId":"g"}`))
		if err != nil {
			t.Fatalf("Sign: %v", err)
		}
		j := splitJWS(t, tok)
		if j.header["alg"] != "ES256" || j.header["typ"] != "pact-receipt+jws" || len(j.header) != 3 {
			t.Fatalf("header = %v, want exactly alg ES256, kid, typ", j.header)
		}
		kid := j.header["kid"].(string)
		keys, order := jwksOf(t, r)
		if len(order) != 1 || order[0] != kid {
			t.Fatalf("JWKS kids = %v, want [%s]", order, kid)
		}
		if !verifyWith(keys[kid], j) {
			t.Fatal("signature does not verify with the published key")
		}
		pub, found, err := r.PublicKey(ctx, kid)
		if err != nil || !found || !pub.Equal(keys[kid]) {
			t.Fatalf("PublicKey(%s) = %v, %v, %v", kid, pub, found, err)
		}
		if _, found, err := r.PublicKey(ctx, "nope"); found || err != nil {
			t.Fatalf("PublicKey(unknown) = %v, %v", found, err)
		}
		for _, typ := range []string{"", "a b", "x\"y", strings.Repeat("t", 65)} {
			if _, err := r.Sign(ctx, typ, []byte("{}")); err == nil {
				t.Errorf("Sign(typ %q) succeeded", typ)
			}
		}

		// Low S only, so a signature has one encoding.
		half := new(big.Int).Rsh(elliptic.P256().Params().N, 1)
		for range 40 {
			tok, _ := r.Sign(ctx, "at+jwt", []byte("{}"))
			if sig := splitJWS(t, tok).sig; new(big.Int).SetBytes(sig[32:]).Cmp(half) > 0 {
				t.Fatal("signature with a high S")
			}
		}

		// At rest: the private scalar appears in no form.
		rows, err := s.ListPublishedSigningKeys(ctx, c.Now())
		if err != nil || len(rows) != 1 {
			t.Fatalf("stored keys = %v, %v", rows, err)
		}
		row := rows[0]
		if row.KID != kid || row.Alg != "ES256" || row.Seq != 1 || strings.Contains(row.PublicJWK, `"d"`) {
			t.Fatalf("stored row = %+v", row)
		}
		priv := privateKeyOf(t, s, c, kid)
		d, _ := priv.Bytes()
		der, _ := x509.MarshalECPrivateKey(priv)
		pkcs8, _ := x509.MarshalPKCS8PrivateKey(priv)
		for name, secret := range map[string][]byte{
			"raw scalar": d, "SEC1 DER": der, "PKCS#8 DER": pkcs8,
			"PEM":         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
			"base64url d": []byte(base64.RawURLEncoding.EncodeToString(d)),
			"base64 d":    []byte(base64.StdEncoding.EncodeToString(d)),
		} {
			if bytes.Contains(row.SealedPrivateKey, secret) || strings.Contains(row.PublicJWK, string(secret)) {
				t.Errorf("stored key contains the %s of the private key", name)
			}
		}
		if bytes.Contains(row.SealedPrivateKey, testKEK) {
			t.Error("stored key contains the KEK")
		}
		if len(row.SealedPrivateKey) != 1+12+32+16 {
			t.Errorf("sealed key is %d bytes, want version+nonce+32+tag", len(row.SealedPrivateKey))
		}

		// A restart with the same KEK keeps the key; another KEK refuses.
		if got := signedKID(t, openRing(t, open(t), c)); got != kid {
			t.Fatalf("after restart signing kid = %s, want %s", got, kid)
		}
		_, err = provkeys.Open(ctx, provkeys.Config{Store: open(t), KEK: bytes.Repeat([]byte{1}, 32), Now: c.Now})
		if err == nil || !strings.Contains(err.Error(), "does not open with this key-encryption key") {
			t.Fatalf("Open with another KEK: err = %v", err)
		}
		// A sealed key moved to another kid does not open (kid is bound).
		moved := row
		moved.KID, moved.Seq = "other-kid", 99
		moved.ActivateTime = c.Now()
		if err := s.AddSigningKey(ctx, moved, c.Now().Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := provkeys.Open(ctx, provkeys.Config{Store: open(t), KEK: testKEK, Now: c.Now}); err == nil {
			t.Fatal("Open accepted a sealed key stored under another kid")
		}
	})
}

// privateKeyOf recovers a private key the test way: Sign with a ring over
// a store that holds only that key would not expose it, so open the sealed
// bytes with the KEK exactly as the format is documented.
func privateKeyOf(t *testing.T, s db.Store, c *testclock.Clock, kid string) *ecdsa.PrivateKey {
	t.Helper()
	rows, err := s.ListPublishedSigningKeys(t.Context(), c.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.KID == kid {
			priv, err := provkeys.OpenSealedForTest(testKEK, row.KID, row.SealedPrivateKey)
			if err != nil {
				t.Fatal(err)
			}
			return priv
		}
	}
	t.Fatalf("no stored key %s", kid)
	return nil
}

func TestRotation(t *testing.T) {
	sharedStores(t, func(t *testing.T, open engine) {
		ctx := t.Context()
		c := newClock()
		r := openRing(t, open(t), c)
		// Another replica on the same store.
		r2 := openRing(t, open(t), c)
		a := signedKID(t, r)
		if signedKID(t, r2) != a {
			t.Fatal("replicas sign with different keys")
		}
		oldTok, err := r.Sign(ctx, "at+jwt", []byte(`{"old":true}`))
		if err != nil {
			t.Fatal(err)
		}

		info, err := r.Rotate(ctx)
		if err != nil {
			t.Fatalf("Rotate: %v", err)
		}
		b := info.KID
		if b == a || info.State != provkeys.StateNext || !info.ActivateTime.Equal(c.Now().Add(provkeys.DefaultPublishDelay)) {
			t.Fatalf("Rotate = %+v; want a new next key activating after %v", info, provkeys.DefaultPublishDelay)
		}
		// Published at once, not signing yet.
		_, order := jwksOf(t, r)
		if len(order) != 2 || order[0] != a || order[1] != b {
			t.Fatalf("JWKS after rotate = %v, want [active %s, next %s]", order, a, b)
		}
		if got := signedKID(t, r); got != a {
			t.Fatalf("signing kid before activation = %s, want %s", got, a)
		}
		// The other replica learns of the key within the refresh interval
		// (and never signs with it early).
		c.Advance(provkeys.DefaultRefreshInterval)
		if _, order := jwksOf(t, r2); len(order) != 2 || order[1] != b {
			t.Fatalf("replica JWKS after the refresh interval = %v, want the next key %s", order, b)
		}
		if got := signedKID(t, r2); got != a {
			t.Fatalf("replica signs with %s before activation, want %s", got, a)
		}
		infos, err := r.Keys(ctx)
		if err != nil || len(infos) != 2 || infos[0].State != provkeys.StateActive || infos[1].State != provkeys.StateNext {
			t.Fatalf("Keys = %+v, %v", infos, err)
		}

		// After activation new signatures use the new key on both replicas,
		// and the old key is retired but still published.
		c.Advance(provkeys.DefaultPublishDelay - provkeys.DefaultRefreshInterval)
		for name, ring := range map[string]*provkeys.Ring{"r": r, "r2": r2} {
			if got := signedKID(t, ring); got != b {
				t.Fatalf("%s: signing kid after activation = %s, want %s", name, got, b)
			}
			keys, order := jwksOf(t, ring)
			if len(order) != 2 || order[0] != b || order[1] != a {
				t.Fatalf("%s: JWKS after activation = %v, want [%s, retired %s]", name, order, b, a)
			}
			if !verifyWith(keys[a], splitJWS(t, oldTok)) {
				t.Fatalf("%s: a token of the retired key no longer verifies", name)
			}
		}
		infos, _ = r.Keys(ctx)
		if infos[1].State != provkeys.StateRetired || !infos[1].RetireTime.Equal(info.ActivateTime) ||
			!infos[1].ExpireTime.Equal(info.ActivateTime.Add(provkeys.DefaultRetireGrace)) {
			t.Fatalf("retired key info = %+v", infos[1])
		}

		// The old key stays until every token it signed has expired: a token
		// signed just before retirement lives 1 h; the key lives 1 h + margin.
		c.Advance(provkeys.DefaultRetireGrace - time.Second)
		if _, found, _ := r.PublicKey(ctx, a); !found {
			t.Fatal("retired key gone before its expiry")
		}
		c.Advance(time.Second)
		if _, found, _ := r.PublicKey(ctx, a); found {
			t.Fatal("retired key still accepted after its expiry")
		}
		if _, order := jwksOf(t, r); len(order) != 1 || order[0] != b {
			t.Fatalf("JWKS after expiry = %v, want [%s]", order, b)
		}

		// The next rotation deletes the expired key from the store.
		if _, err := r.Rotate(ctx); err != nil {
			t.Fatal(err)
		}
		rows, err := open(t).ListPublishedSigningKeys(ctx, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if row.KID == a {
				t.Fatal("expired key (with its sealed private half) was not deleted")
			}
		}
	})
}

func TestConcurrentFirstStartAgreesOnOneKey(t *testing.T) {
	sharedStores(t, func(t *testing.T, open engine) {
		c := newClock()
		const n = 4
		stores := make([]db.Store, n)
		for i := range stores {
			stores[i] = open(t)
		}
		kids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r, err := provkeys.Open(t.Context(), provkeys.Config{Store: stores[i], KEK: testKEK, Now: c.Now})
				if err != nil {
					t.Errorf("replica %d: %v", i, err)
					return
				}
				tok, err := r.Sign(t.Context(), "at+jwt", []byte("{}"))
				if err != nil {
					t.Errorf("replica %d: Sign: %v", i, err)
					return
				}
				h, _, _ := strings.Cut(tok, ".")
				kids[i] = h
			})
		}
		wg.Wait()
		for i := 1; i < n; i++ {
			if kids[i] != kids[0] {
				t.Fatalf("replicas sign with different keys: %v", kids)
			}
		}
		rows, err := stores[0].ListPublishedSigningKeys(t.Context(), c.Now())
		if err != nil || len(rows) != 1 {
			t.Fatalf("%d keys stored (%v), want 1", len(rows), err)
		}
	})
}

// flakyStore fails listing on demand.
type flakyStore struct {
	provkeys.Store
	mu   sync.Mutex
	fail bool
}

func (f *flakyStore) set(fail bool) { f.mu.Lock(); f.fail = fail; f.mu.Unlock() }

func (f *flakyStore) ListPublishedSigningKeys(ctx context.Context, now time.Time) ([]db.SigningKey, error) {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return nil, errors.New("store down")
	}
	return f.Store.ListPublishedSigningKeys(ctx, now)
}

func TestStaleKeysAreBounded(t *testing.T) {
	c := newClock()
	s := dbtest.Open(t, "", t.TempDir())
	fs := &flakyStore{Store: s}
	r := openRing(t, fs, c)
	fs.set(true)
	// Within the publish delay the cached keys keep serving.
	c.Advance(provkeys.DefaultPublishDelay - time.Second)
	if _, err := r.Sign(t.Context(), "at+jwt", []byte("{}")); err != nil {
		t.Fatalf("Sign with a store outage younger than the publish delay: %v", err)
	}
	// Beyond it the ring refuses rather than sign with a key that may have
	// retired elsewhere.
	c.Advance(time.Second)
	if _, err := r.Sign(t.Context(), "at+jwt", []byte("{}")); !errors.Is(err, provkeys.ErrStale) {
		t.Fatalf("Sign with stale keys: err = %v, want ErrStale", err)
	}
	if _, err := r.JWKS(t.Context()); !errors.Is(err, provkeys.ErrStale) {
		t.Fatalf("JWKS with stale keys: err = %v, want ErrStale", err)
	}
	if _, _, err := r.PublicKey(t.Context(), "x"); !errors.Is(err, provkeys.ErrStale) {
		t.Fatalf("PublicKey with stale keys: err = %v, want ErrStale", err)
	}
	// Positive control: the store is back, so is the ring.
	fs.set(false)
	if _, err := r.Sign(t.Context(), "at+jwt", []byte("{}")); err != nil {
		t.Fatalf("Sign after recovery: %v", err)
	}
}

func TestOpenRefusesBadConfig(t *testing.T) {
	s := dbtest.Open(t, "", t.TempDir())
	for name, cfg := range map[string]provkeys.Config{
		"no-store":            {KEK: testKEK},
		"short-kek":           {Store: s, KEK: testKEK[:16]},
		"delay-below-refresh": {Store: s, KEK: testKEK, PublishDelay: time.Minute, RefreshInterval: time.Minute},
		"grace-below-1h":      {Store: s, KEK: testKEK, RetireGrace: 30 * time.Minute},
	} {
		if _, err := provkeys.Open(t.Context(), cfg); err == nil {
			t.Errorf("%s: Open succeeded", name)
		}
	}
	if _, err := provkeys.Open(t.Context(), provkeys.Config{Store: s, KEK: testKEK}); err != nil {
		t.Fatalf("ok/defaults: %v", err)
	}
}

// TestConcurrentUse signs, looks up and publishes from many goroutines
// while the clock moves past refreshes and a rotation activates (run it
// with -race).
func TestConcurrentUse(t *testing.T) {
	s := dbtest.Open(t, "", t.TempDir())
	c := newClock()
	r := openRing(t, s, c)
	if _, err := r.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if g == 0 && i%10 == 0 {
					c.Advance(provkeys.DefaultRefreshInterval)
				}
				tok, err := r.Sign(t.Context(), "at+jwt", []byte("{}"))
				if err != nil {
					t.Errorf("Sign: %v", err)
					return
				}
				kid := splitJWS(t, tok).header["kid"].(string)
				if _, found, err := r.PublicKey(t.Context(), kid); !found || err != nil {
					t.Errorf("the signing key %s is not published (%v)", kid, err)
					return
				}
				if _, err := r.JWKS(t.Context()); err != nil {
					t.Errorf("JWKS: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

package pajwt

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"pactd/internal/jose"
)

// TestVerifyWithVectors checks the ES256 path on published vectors: RFC 7515
// A.3, and a signature whose R has a leading zero byte (a correctly padded
// one passes, the 63-byte unpadded form fails).
func TestVerifyWithVectors(t *testing.T) {
	t.Parallel()
	key := func(x, y string) *jose.Key {
		set, err := jose.ParseJWKS([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"`+x+`","y":"`+y+`"}]}`), 0)
		if err != nil {
			t.Fatal(err)
		}
		return set.At(0)
	}
	check := func(k *jose.Key, token string) bool {
		i := strings.LastIndexByte(token, '.')
		sig, err := base64.RawURLEncoding.DecodeString(token[i+1:])
		if err != nil {
			t.Fatal(err)
		}
		d := sha256.Sum256([]byte(token[:i]))
		return verifyWith(k, algES256, &d, sig)
	}
	rfc := key("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
	if !check(rfc, "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q") {
		t.Fatal("RFC 7515 A.3 vector does not verify")
	}
	padded := key("Anf1p2lRrcXgZKpVRRC1xLxPiw_45PbOlygfbxvD8Es", "d0HiZq-aurVVLLtK-xqXPpzpWloZJNwKNve7akBDuvg")
	if !check(padded, "eyJhbGciOiJFUzI1NiJ9.TG9yZW0gSXBzdW0.ALFru4CRZDiAlVKyyHtlLGtXIAWxC3lXIlZuYO8G8a5ePzCwyw6c2FzWBZwrLaoLFZb_TcYs3TcZ8mhONPaavQ") {
		t.Fatal("R with a leading zero does not verify")
	}
	if check(padded, "eyJhbGciOiJFUzI1NiJ9.TG9yZW0gSXBzdW0.sWu7gJFkOICVUrLIe2Usa1cgBbELeVciVm5g7wbxrl4_MLDLDpzYXNYFnCstqgsVlv9NxizdNxnyaE409pq9") {
		t.Fatal("63-byte unpadded signature accepted")
	}
	// Wrong key type for the algorithm never verifies.
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k, _ := jose.NewECKey("", &ec.PublicKey)
	var d [32]byte
	if verifyWith(&k, algRS256, &d, make([]byte, 256)) || verifyWith(&k, algNone, &d, make([]byte, 64)) {
		t.Fatal("verified with the wrong algorithm")
	}
}

func TestConstantTimeEqual(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		eq   bool
	}{{"", "", true}, {"abc", "abc", true}, {"abc", "abd", false}, {"abc", "ab", false}, {"xbc", "abc", false}} {
		if got := constantTimeEqual(tt.a, tt.b); got != tt.eq {
			t.Errorf("constantTimeEqual(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

func TestErrorFormatting(t *testing.T) {
	t.Parallel()
	e := &Error{Reason: ReasonSignature, Err: io.EOF}
	if e.Error() != "pajwt: refused: signature: EOF" || !errors.Is(e, io.EOF) || ReasonOf(e) != ReasonSignature {
		t.Fatalf("%v", e)
	}
	if (&Error{Reason: ReasonExpired}).Error() != "pajwt: refused: expired" {
		t.Fatal("no-cause form")
	}
}

// A cached entry keeps every value it was put with (its strings packed into
// one allocation), and an entry a caller holds stays intact when the cache
// evicts or replaces it: nodes are never reused.
func TestTokenCachePacksAndNeverReuses(t *testing.T) {
	c := newTokenCache(1) // one shard of one entry
	entry := func(i int) *cachedToken {
		return &cachedToken{
			sig: fmt.Sprintf("sig-%d", i), kid: "kid", keyKID: fmt.Sprintf("key-%d", i), alg: algES256,
			claims: claimSet{iss: "https://pa.example", sub: fmt.Sprintf("user-%d", i), aud: "https://provider.example/a2a", jti: fmt.Sprintf("jti-%d", i), exp: float64(i)},
		}
	}
	k1, k2 := [32]byte{1}, [32]byte{2}
	c.put(&k1, entry(1))
	got, ok := c.get(&k1, "sig-1")
	if !ok {
		t.Fatal("entry not found")
	}
	if want := entry(1); got.sig != want.sig || got.kid != want.kid || got.keyKID != want.keyKID || got.alg != want.alg || got.claims != want.claims {
		t.Fatalf("cached %+v, want %+v", *got, *want)
	}
	if _, ok := c.get(&k1, "sig-2"); ok {
		t.Fatal("served for another signature")
	}
	c.put(&k2, entry(2)) // evicts k1
	if _, ok := c.get(&k1, "sig-1"); ok {
		t.Fatal("evicted entry still served")
	}
	if got.sig != "sig-1" || got.claims.sub != "user-1" || got.claims.exp != 1 {
		t.Fatalf("a held entry changed after eviction: %+v", *got)
	}
	held, _ := c.get(&k2, "sig-2")
	c.put(&k2, entry(3)) // replaces k2
	c.remove(&k2, held)  // the stale entry must not remove its replacement
	if now, ok := c.get(&k2, "sig-3"); !ok || now.claims.sub != "user-3" || held.claims.sub != "user-2" {
		t.Fatalf("replacement: ok=%v now=%+v held=%+v", ok, now, held)
	}
}

package regjwt

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/jws"
)

const (
	endpoint = "https://provider.example/api/platforms"
	issuer   = "https://pa.example"
	jwksURI  = "https://pa.example/.well-known/jwks.json"
)

var now = time.Unix(1_800_000_000, 0)

type fakeKeys struct {
	set *jose.KeySet
	err error
	got string
}

func (f *fakeKeys) Keys(_ context.Context, uri string) (*jose.KeySet, error) {
	f.got = uri
	return f.set, f.err
}

func b64(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func sign(t testing.TB, key *ecdsa.PrivateKey, header, claims map[string]any) string {
	t.Helper()
	in := b64(header) + "." + b64(claims)
	sig, err := jws.SignES256(key, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func goodClaims() map[string]any {
	return map[string]any{"iss": issuer, "sub": issuer, "aud": endpoint, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": "j-1"}
}

func setup(t *testing.T) (*ecdsa.PrivateKey, *fakeKeys) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := jose.NewECKey("k1", &key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	set, err := jose.NewKeySet(k)
	if err != nil {
		t.Fatal(err)
	}
	return key, &fakeKeys{set: set}
}

func TestCheck(t *testing.T) {
	key, keys := setup(t)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	hdr := map[string]any{"alg": "ES256", "kid": "k1"}
	with := func(k string, v any) map[string]any {
		c := goodClaims()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	req := func(tok string) Request {
		return Request{Token: tok, Name: "my-pa", JWKSURI: jwksURI, Endpoint: endpoint}
	}
	// Positive control.
	p, ref := Checker{Keys: keys}.Check(t.Context(), req(sign(t, key, hdr, goodClaims())), now)
	if ref != nil || p.Issuer != issuer || p.JTI != "j-1" || !p.Expiry.Equal(now.Add(5*time.Minute)) || keys.got != jwksURI {
		t.Fatalf("Check = %+v, %v (fetched %q); want accepted for %s", p, ref, keys.got, issuer)
	}
	hs := func(alg string) string {
		return b64(map[string]any{"alg": alg, "kid": "k1"}) + "." + b64(goodClaims()) + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 64))
	}
	cases := []struct {
		name   string
		r      Request
		status Status
		reason string
	}{
		{"bad name", Request{Token: sign(t, key, hdr, goodClaims()), Name: "My_PA", JWKSURI: jwksURI, Endpoint: endpoint}, BadRequest, ReasonNameInvalid},
		{"one-character name", Request{Token: sign(t, key, hdr, goodClaims()), Name: "a", JWKSURI: jwksURI, Endpoint: endpoint}, BadRequest, ReasonNameInvalid},
		{"private jwks uri", Request{Token: sign(t, key, hdr, goodClaims()), Name: "my-pa", JWKSURI: "https://10.0.0.1/jwks.json", Endpoint: endpoint}, BadRequest, ReasonJWKSURIInvalid},
		{"http jwks uri", Request{Token: sign(t, key, hdr, goodClaims()), Name: "my-pa", JWKSURI: "http://pa.example/jwks.json", Endpoint: endpoint}, BadRequest, ReasonJWKSURIInvalid},
		{"cross-origin jwks uri", Request{Token: sign(t, key, hdr, goodClaims()), Name: "my-pa", JWKSURI: "https://keys.example/jwks.json", Endpoint: endpoint}, BadRequest, ReasonJWKSCrossOrigin},
		{"jwks uri on another port", Request{Token: sign(t, key, hdr, goodClaims()), Name: "my-pa", JWKSURI: "https://pa.example:8443/jwks.json", Endpoint: endpoint}, BadRequest, ReasonJWKSCrossOrigin},
		{"wrong aud", req(sign(t, key, hdr, with("aud", "https://other.example/api/platforms"))), BadToken, ReasonAudMismatch},
		{"array aud", req(sign(t, key, hdr, with("aud", []string{endpoint}))), BadToken, ReasonAudMismatch},
		{"iss != sub", req(sign(t, key, hdr, with("sub", "https://pa.example/other"))), BadToken, ReasonSubNotIss},
		{"lifetime > 300 s", req(sign(t, key, hdr, with("exp", now.Add(301*time.Second).Unix()))), BadToken, ReasonLifetimeTooLong},
		{"expired beyond skew", req(sign(t, key, hdr, map[string]any{"iss": issuer, "sub": issuer, "aud": endpoint, "iat": now.Add(-100 * time.Second).Unix(), "exp": now.Add(-31 * time.Second).Unix(), "jti": "j"})), BadToken, ReasonExpired},
		{"iat beyond skew", req(sign(t, key, hdr, map[string]any{"iss": issuer, "sub": issuer, "aud": endpoint, "iat": now.Add(31 * time.Second).Unix(), "exp": now.Add(60 * time.Second).Unix(), "jti": "j"})), BadToken, ReasonIssuedInFuture},
		{"missing jti", req(sign(t, key, hdr, with("jti", nil))), BadToken, ReasonJTIMissing},
		{"empty jti", req(sign(t, key, hdr, with("jti", ""))), BadToken, ReasonJTIMissing},
		{"missing iat", req(sign(t, key, hdr, with("iat", nil))), BadToken, ReasonIATMissing},
		{"missing exp", req(sign(t, key, hdr, with("exp", nil))), BadToken, ReasonEXPMissing},
		{"issuer with query", Request{Token: sign(t, key, hdr, map[string]any{"iss": issuer + "?x=1", "sub": issuer + "?x=1", "aud": endpoint, "iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": "j"}), Name: "my-pa", JWKSURI: jwksURI, Endpoint: endpoint}, BadRequest, ReasonIssuerInvalid},
		{"alg RS256", req(hs("RS256")), BadToken, ReasonAlgNotES256},
		{"alg none", req(hs("none")), BadToken, ReasonAlgNotES256},
		{"alg HS256", req(hs("HS256")), BadToken, ReasonAlgNotES256},
		{"signed by another key", req(sign(t, other, hdr, goodClaims())), BadToken, ReasonSignatureInvalid},
		{"unknown kid", req(sign(t, key, map[string]any{"alg": "ES256", "kid": "nope"}, goodClaims())), BadToken, ReasonKeyNotFound},
		{"not a JWS", req("abc"), BadToken, ReasonTokenMalformed},
		{"oversized", req(strings.Repeat("a", MaxTokenBytes+1)), BadToken, ReasonTokenTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ref := Checker{Keys: keys}.Check(t.Context(), tc.r, now)
			if ref == nil || ref.Status != tc.status || ref.Reason != tc.reason {
				t.Fatalf("Check = %v; want %d %s", ref, tc.status, tc.reason)
			}
		})
	}
	t.Run("jwks unavailable", func(t *testing.T) {
		_, ref := Checker{Keys: &fakeKeys{err: errors.New("down")}}.Check(t.Context(), req(sign(t, key, hdr, goodClaims())), now)
		if ref == nil || ref.Status != BadToken || ref.Reason != ReasonJWKSUnavailable {
			t.Fatalf("Check = %v; want 401 %s", ref, ReasonJWKSUnavailable)
		}
	})
	t.Run("skew accepted", func(t *testing.T) {
		c := map[string]any{"iss": issuer, "sub": issuer, "aud": endpoint, "iat": now.Add(29 * time.Second).Unix(), "exp": now.Add(60 * time.Second).Unix(), "jti": "j"}
		if _, ref := (Checker{Keys: keys}).Check(t.Context(), req(sign(t, key, hdr, c)), now); ref != nil {
			t.Fatalf("iat 29 s ahead: %v; want accepted", ref)
		}
	})
}

// FuzzParse: no body or token makes Parse panic, and an accepted one obeys
// the rules it checks.
func FuzzParse(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f.Add(sign(f, key, map[string]any{"alg": "ES256"}, goodClaims()), "my-pa", jwksURI)
	f.Add("e30.e30.", "a-b", "https://pa.example/j")
	f.Fuzz(func(t *testing.T, tok, name, uri string) {
		p, ref := Parse(Request{Token: tok, Name: name, JWKSURI: uri, Endpoint: endpoint}, now, false)
		if (p == nil) == (ref == nil) {
			t.Fatalf("Parse = %v, %v: want exactly one", p, ref)
		}
		if p != nil && (p.JTI == "" || p.Expiry.Sub(p.IssuedAt) > MaxLifetime || len(tok) > MaxTokenBytes) {
			t.Fatalf("accepted %+v breaks a rule", p)
		}
	})
}

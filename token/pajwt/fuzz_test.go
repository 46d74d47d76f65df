package pajwt_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/asn1"
	"math/big"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/token/jose"
	"pactd.dev/pactd/token/jws/jwstest"
	"pactd.dev/pactd/token/pajwt"
)

// fuzzWorld is a deterministic verifier setup: a fixed P-256 key, RFC 6979
// signatures and a fixed clock, so seed tokens are the same on every run.
type fuzzWorld struct {
	valid    string // the one valid token (its high-S twin verifies too)
	priv     *ecdsa.PrivateKey
	cached   *pajwt.Verifier
	uncached *pajwt.Verifier
	book     *agentBook
	now      int64
}

func newFuzzWorld(tb testing.TB) *fuzzWorld {
	tb.Helper()
	seed := sha256.Sum256([]byte("pactd pajwt fuzz key"))
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), seed[:])
	if err != nil {
		tb.Fatal(err)
	}
	key, err := jose.NewECKey("fz", &priv.PublicKey)
	if err != nil {
		tb.Fatal(err)
	}
	set := mustKeySet(tb, key)
	keys := &fakeKeys{keys: func(context.Context, string) (*jose.KeySet, error) { return set, nil }}
	w := &fuzzWorld{book: newAgentBook(testAgent()), now: 1_780_000_000, priv: priv}
	clock := func() time.Time { return time.Unix(w.now, 0) }
	if w.cached, err = pajwt.New(pajwt.Config{Keys: keys, Now: clock, CacheSize: 64}); err != nil {
		tb.Fatal(err)
	}
	if w.uncached, err = pajwt.New(pajwt.Config{Keys: keys, Now: clock, CacheSize: -1}); err != nil {
		tb.Fatal(err)
	}
	input := b64.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT","kid":"fz"}`)) + "." +
		b64.EncodeToString([]byte(`{"iss":"`+testIssuer+`","sub":"`+testSubject+`","aud":"`+testAudience+`","iat":1780000000,"exp":1780000120}`))
	d := sha256.Sum256([]byte(input))
	der, err := priv.Sign(nil, d[:], crypto.SHA256) // nil rand: deterministic RFC 6979
	if err != nil {
		tb.Fatal(err)
	}
	var sig struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &sig); err != nil {
		tb.Fatal(err)
	}
	raw := make([]byte, 64)
	sig.R.FillBytes(raw[:32])
	sig.S.FillBytes(raw[32:])
	w.valid = input + "." + b64.EncodeToString(raw)
	return w
}

// hostileSeeds derives the spec's hostile cases from the valid token.
func (w *fuzzWorld) hostileSeeds() []string {
	h, p, sg := segments(w.valid)
	enc := func(s string) string { return b64.EncodeToString([]byte(s)) }
	claims := `{"iss":"` + testIssuer + `","sub":"` + testSubject + `","aud":"` + testAudience + `","iat":1780000000,"exp":1780000120}`
	mac := hmac.New(sha256.New, []byte("public key bytes"))
	mac.Write([]byte(enc(`{"alg":"HS256"}`) + "." + p))
	return []string{
		"Bearer " + w.valid,
		"bearer  " + w.valid + " ",
		"",
		"Basic Zm9vOmJhcg==",
		"Bearer ",
		"Bearer " + w.valid + " " + w.valid,
		"Bearer " + h + "." + p,
		"Bearer " + w.valid + ".AAAA.AAAA",
		"Bearer " + enc(`{"alg":"none"}`) + "." + p + ".",
		"Bearer " + enc(`{"alg":"HS256"}`) + "." + p + "." + b64.EncodeToString(mac.Sum(nil)),
		"Bearer " + enc(`{"alg":"PS256","kid":"fz"}`) + "." + p + "." + sg,
		"Bearer " + enc(`{"alg":"ES256","kid":"fz","jku":"https://evil.example"}`) + "." + p + "." + sg,
		"Bearer " + enc(`{"alg":"ES256","kid":"fz","crit":["exp"]}`) + "." + p + "." + sg,
		"Bearer " + enc(`{"alg":"ES256","kid":"zz"}`) + "." + p + "." + sg,
		"Bearer " + enc(`{"alg":"ES256"}`) + "." + p + "." + sg,
		"Bearer " + h + "." + enc(strings.Replace(claims, `"aud":"`+testAudience+`"`, `"aud":["`+testAudience+`"]`, 1)) + "." + sg,
		"Bearer " + h + "." + enc(strings.Replace(claims, `"iss":"`+testIssuer+`"`, `"iss":"`+testIssuer+`/"`, 1)) + "." + sg,
		"Bearer " + h + "." + p + "." + sg[:len(sg)-2],
		"Bearer " + h + "." + p + "." + sg + "==",
		"Bearer " + h + "." + enc(`{"iss":"`+testIssuer+`","x":`+strings.Repeat("[", 50)) + "." + sg,
		"Bearer " + strings.Repeat("A", 9000),
	}
}

func outcome(res pajwt.Result, err error) (pajwt.Result, pajwt.Reason, bool) {
	res.Cached = false
	return res, pajwt.ReasonOf(err), err == nil
}

// FuzzVerify asserts properties of Verify on arbitrary Authorization values:
// it never panics; the only tokens it ever accepts are the one valid token
// and its high-S twin (a PA's signature may have either S, the low-S policy
// in package jws; no other mutation is accepted); and the outcome is
// deterministic, the same on a repeat (cache hit) and with the cache
// disabled.
func FuzzVerify(f *testing.F) {
	w := newFuzzWorld(f)
	for _, s := range w.hostileSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, auth string) {
		ctx := context.Background()
		r1, why1, ok1 := outcome(w.cached.Verify(ctx, auth, w.book.lookup))
		r2, why2, ok2 := outcome(w.cached.Verify(ctx, auth, w.book.lookup))
		r3, why3, ok3 := outcome(w.uncached.Verify(ctx, auth, w.book.lookup))
		if ok1 != ok2 || ok1 != ok3 || why1 != why2 || why1 != why3 || r1 != r2 || r1 != r3 {
			t.Fatalf("nondeterministic: %v/%v/%v %v/%v/%v", ok1, ok2, ok3, why1, why2, why3)
		}
		if !ok1 {
			if why1 == pajwt.ReasonUnspecified {
				t.Fatal("refusal without a reason")
			}
			return
		}
		fields := strings.Fields(auth)
		if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") || (fields[1] != w.valid && fields[1] != jwstest.HighS(w.valid)) {
			t.Fatalf("accepted a token other than the valid one: %q", auth)
		}
		if r1.Subject != testSubject || r1.Agent.Issuer != testIssuer {
			t.Fatalf("bad result %+v", r1)
		}
	})
}

// TestSingleCharMutationsRejected flips every character of a valid, cached
// token to other base64url characters: none of the mutants is accepted.
func TestSingleCharMutationsRejected(t *testing.T) {
	t.Parallel()
	w := newFuzzWorld(t)
	ctx := t.Context()
	if _, err := w.cached.Verify(ctx, "Bearer "+w.valid, w.book.lookup); err != nil {
		t.Fatalf("control: %v", err)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	tested := 0
	for i := range len(w.valid) {
		if w.valid[i] == '.' {
			continue
		}
		for _, j := range []int{1, 17, 42} {
			c := alphabet[(strings.IndexByte(alphabet, w.valid[i])+j)%64]
			mut := w.valid[:i] + string(c) + w.valid[i+1:]
			if _, err := w.cached.Verify(ctx, "Bearer "+mut, w.book.lookup); err == nil {
				t.Fatalf("mutant at %d accepted", i)
			}
			tested++
		}
	}
	if tested < 3*200 {
		t.Fatalf("only %d mutants tested", tested)
	}
	if res, err := w.cached.Verify(ctx, "Bearer "+w.valid, w.book.lookup); err != nil || !res.Cached {
		t.Fatalf("control after mutants: %v", err)
	}
}

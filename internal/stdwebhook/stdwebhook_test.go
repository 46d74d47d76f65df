package stdwebhook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/internal/stdwebhook"
)

// The reference vector the Standard Webhooks libraries test against
// (secret, id, timestamp, body and the signature they must produce).
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestReferenceVector(t *testing.T) {
	key, err := stdwebhook.ParseSecret(vecSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := stdwebhook.Sign(key, vecID, time.Unix(vecTS, 0), []byte(vecBody)); got != vecSig {
		t.Fatalf("Sign = %s, want %s", got, vecSig)
	}
	h := http.Header{}
	stdwebhook.SetHeaders(h, [][]byte{key}, vecID, time.Unix(vecTS, 0), []byte(vecBody))
	if h.Get("webhook-id") != vecID || h.Get("webhook-timestamp") != "1614265330" || h.Get("webhook-signature") != vecSig {
		t.Fatalf("headers %v", h)
	}
	if id, err := stdwebhook.Verify(key, h, []byte(vecBody), time.Unix(vecTS+299, 0), 5*time.Minute); err != nil || id != vecID {
		t.Fatalf("Verify = %q, %v", id, err)
	}
}

// TestRotationHeader: signed with the new and the previous key, the header
// is what the specification's rotation describes, computed here from
// crypto/hmac alone: "v1,<new> v1,<previous>", one space between, each
// the base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" under the bytes the
// whsec_ secret encodes. A receiver holding either secret accepts it; one
// holding neither refuses it.
func TestRotationHeader(t *testing.T) {
	const prevSecret = vecSecret
	newRaw := bytes.Repeat([]byte{0x5a, 0x11, 0xc3}, 11) // 33 bytes
	newSecret := "whsec_" + base64.StdEncoding.EncodeToString(newRaw)
	sig := func(raw []byte) string {
		m := hmac.New(sha256.New, raw)
		m.Write([]byte(vecID + "." + strconv.Itoa(vecTS) + "." + vecBody))
		return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	prevRaw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(prevSecret, "whsec_"))
	if sig(prevRaw) != vecSig {
		t.Fatalf("the test's own HMAC gives %s for the reference vector, want %s", sig(prevRaw), vecSig)
	}
	want := sig(newRaw) + " " + vecSig

	newKey, err := stdwebhook.ParseSecret(newSecret)
	if err != nil {
		t.Fatal(err)
	}
	prevKey, _ := stdwebhook.ParseSecret(prevSecret)
	h := http.Header{}
	stdwebhook.SetHeaders(h, [][]byte{newKey, prevKey}, vecID, time.Unix(vecTS, 0), []byte(vecBody))
	if got := h.Get("webhook-signature"); got != want {
		t.Fatalf("webhook-signature = %q, want %q", got, want)
	}
	if h.Get("webhook-id") != vecID || h.Get("webhook-timestamp") != strconv.Itoa(vecTS) {
		t.Fatalf("headers %v", h)
	}
	now := time.Unix(vecTS+10, 0)
	for name, k := range map[string][]byte{"new": newKey, "previous": prevKey} {
		if id, err := stdwebhook.Verify(k, h, []byte(vecBody), now, 5*time.Minute); err != nil || id != vecID {
			t.Fatalf("a receiver with the %s secret: Verify = %q, %v", name, id, err)
		}
	}
	other, _ := stdwebhook.ParseSecret(stdwebhook.NewSecret())
	if _, err := stdwebhook.Verify(other, h, []byte(vecBody), now, 5*time.Minute); !errors.Is(err, stdwebhook.ErrBadSignature) {
		t.Fatalf("a receiver with another secret: err = %v, want ErrBadSignature", err)
	}
}

func TestSecret(t *testing.T) {
	s := stdwebhook.NewSecret()
	if !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("secret %q", s)
	}
	if k, err := stdwebhook.ParseSecret(s); err != nil || len(k) != 32 {
		t.Fatalf("ParseSecret(new) = %d bytes, %v", len(k), err)
	}
	if s == stdwebhook.NewSecret() {
		t.Fatal("two secrets alike")
	}
	for _, bad := range []string{"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_AAAA", "whsec_" + strings.Repeat("A", 88) + "==",
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!", "whsec_MfKQ9r8GKYqrTwjUPD8IL\nPZIo2LaLaSw", "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"} {
		if _, err := stdwebhook.ParseSecret(bad); !errors.Is(err, stdwebhook.ErrSecret) {
			t.Errorf("ParseSecret(%q) = %v, want ErrSecret", bad, err)
		}
	}
}

// TestVerifyRefusals: each refusal with its reason; the reference vector
// above is the positive control, and a header with a v1a signature before
// the right v1 one still verifies.
func TestVerifyRefusals(t *testing.T) {
	key, _ := stdwebhook.ParseSecret(vecSecret)
	now := time.Unix(vecTS, 0)
	hdr := func(id, ts, sig string) http.Header {
		return http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig}}
	}
	other, _ := stdwebhook.ParseSecret(stdwebhook.NewSecret())
	if _, err := stdwebhook.Verify(key, hdr(vecID, "1614265330", "v1a,xyz "+vecSig), []byte(vecBody), now, time.Minute); err != nil {
		t.Fatalf("v1a then v1: %v", err)
	}
	cases := []struct {
		name string
		key  []byte
		h    http.Header
		body string
		want error
	}{
		{"body changed", key, hdr(vecID, "1614265330", vecSig), `{"test": 2432232315}`, stdwebhook.ErrBadSignature},
		{"another secret", other, hdr(vecID, "1614265330", vecSig), vecBody, stdwebhook.ErrBadSignature},
		{"id changed", key, hdr("msg_other", "1614265330", vecSig), vecBody, stdwebhook.ErrBadSignature},
		{"timestamp changed", key, hdr(vecID, "1614265331", vecSig), vecBody, stdwebhook.ErrBadSignature},
		{"signature padding removed", key, hdr(vecID, "1614265330", strings.TrimSuffix(vecSig, "=")), vecBody, stdwebhook.ErrBadSignature},
		{"no v1 signature", key, hdr(vecID, "1614265330", "v1a,"+vecSig[3:]), vecBody, stdwebhook.ErrNoSignature},
		{"empty signature header", key, hdr(vecID, "1614265330", ""), vecBody, stdwebhook.ErrNoSignature},
		{"missing id", key, hdr("", "1614265330", vecSig), vecBody, stdwebhook.ErrID},
		{"dot in id", key, hdr("msg.1", "1614265330", vecSig), vecBody, stdwebhook.ErrID},
		{"missing timestamp", key, hdr(vecID, "", vecSig), vecBody, stdwebhook.ErrTimestamp},
		{"timestamp with sign", key, hdr(vecID, "+1614265330", vecSig), vecBody, stdwebhook.ErrTimestamp},
		{"timestamp with leading zero", key, hdr(vecID, "01614265330", vecSig), vecBody, stdwebhook.ErrTimestamp},
		{"timestamp in milliseconds far off", key, hdr(vecID, "1614265330000", vecSig), vecBody, stdwebhook.ErrStale},
		{"stale timestamp", key, hdr(vecID, "1614265029", vecSig), vecBody, stdwebhook.ErrStale},
		{"future timestamp", key, hdr(vecID, "1614265631", vecSig), vecBody, stdwebhook.ErrStale},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := stdwebhook.Verify(tc.key, tc.h, []byte(tc.body), now, 5*time.Minute); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzVerify: any headers and body end in a result; what verifies carries
// a valid id and the signature Sign makes.
func FuzzVerify(f *testing.F) {
	f.Add(vecID, "1614265330", vecSig, vecBody)
	f.Add("a", "0", "v1,", "")
	f.Add("x_y-z", "99999999999999999999", "v1a,AAAA v1,AAAA", "{}")
	key, _ := stdwebhook.ParseSecret(vecSecret)
	now := time.Unix(vecTS, 0)
	f.Fuzz(func(t *testing.T, id, ts, sig, body string) {
		h := http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig}}
		got, err := stdwebhook.Verify(key, h, []byte(body), now, 5*time.Minute)
		if err != nil {
			return
		}
		if got != id || !stdwebhook.ValidID(id) || !strings.Contains(sig, stdwebhook.Sign(key, id, mustUnix(t, ts), []byte(body))) {
			t.Fatalf("verified %q %q %q %q", id, ts, sig, body)
		}
	})
}

func mustUnix(t *testing.T, ts string) time.Time {
	var sec int64
	for _, c := range ts {
		sec = sec*10 + int64(c-'0')
	}
	return time.Unix(sec, 0)
}

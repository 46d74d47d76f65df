package hdtp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"pactd.dev/pactd/internal/hdtp/wire"
)

// Handles: a dispatched call's handle is "hc1." + base64url(call id "." identity
// id "." expiry) + "." + base64url(HMAC-SHA256), the front door's turn
// handles' shape; an outbound call's handle is "ho1." + base64url(nonce ‖
// AES-256-GCM(state)), since it carries the call's arguments for a resend.
// Both keys come from one secret every replica derives from the
// key-encryption key, so any replica opens any handle.

const (
	callHandlePrefix     = "hc1."
	outboundHandlePrefix = "ho1."
	callHandleDomain     = "pactd hdtp call handle v1\x00"
	// maxCallHandleBytes bounds a call handle CompleteInbound reads.
	maxCallHandleBytes = 512
	// maxOutboundHandleBytes bounds an outbound handle.
	maxOutboundHandleBytes = 512 << 10
	// callHandleLifetime is how long CompleteInbound accepts a handle.
	callHandleLifetime = time.Hour
	// outboundHandleLifetime is how long OpenOutboundResult accepts one:
	// the envelope's own lifetime.
	outboundHandleLifetime = 10 * time.Minute
)

// handleKeys are the two keys.
type handleKeys struct {
	mac, box []byte
}

func newHandleKeys(secret []byte) (handleKeys, error) {
	if len(secret) < 32 {
		return handleKeys{}, errors.New("hdtp: the handle secret must be at least 32 bytes")
	}
	mac, err := hkdf.Key(sha256.New, secret, nil, "pactd hdtp call handles", 32)
	if err != nil {
		return handleKeys{}, err
	}
	box, err := hkdf.Key(sha256.New, secret, nil, "pactd hdtp outbound handles", 32)
	return handleKeys{mac: mac, box: box}, err
}

// errHandle is every refusal of a handle that is not one pactd issued.
var errHandle = errors.New("the handle is not one pactd issued")

// errHandleExpired is an authentic handle past its time.
var errHandleExpired = errors.New("the handle has expired")

func (k handleKeys) callMAC(payload string) []byte {
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte(callHandleDomain))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// sealCall writes a dispatched call's handle.
func (k handleKeys) sealCall(callID, identityID string, exp time.Time) string {
	p := wire.B64Encode([]byte(callID + "." + identityID + "." + strconv.FormatInt(exp.Unix(), 10)))
	return callHandlePrefix + p + "." + wire.B64Encode(k.callMAC(p))
}

// openCall reads a call handle: its call and identity ids, checked
// against the MAC and the clock.
func (k handleKeys) openCall(h string, now time.Time) (callID, identityID string, err error) {
	rest, ok := strings.CutPrefix(h, callHandlePrefix)
	if !ok || len(h) > maxCallHandleBytes {
		return "", "", errHandle
	}
	p, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return "", "", errHandle
	}
	mac, ok := wire.B64Decode(sig)
	if !ok || !hmac.Equal(mac, k.callMAC(p)) {
		return "", "", errHandle
	}
	raw, ok := wire.B64Decode(p)
	if !ok {
		return "", "", errHandle
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 {
		return "", "", errHandle
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return "", "", errHandle
	}
	if !now.Before(time.Unix(exp, 0)) {
		return parts[0], parts[1], errHandleExpired
	}
	return parts[0], parts[1], nil
}

// outboundState is what an outbound handle carries.
type outboundState struct {
	// IdentityID is the calling identity; Root the contact's root ("" for
	// a first contact to a card).
	IdentityID string `json:"i"`
	Root       string `json:"r,omitempty"`
	// Endpoint is the URL dialed.
	Endpoint string `json:"e"`
	// Recipient is the leaf sealed to (DER); ExpectRoot the root the
	// responder must be when no pin exists yet.
	Recipient  []byte `json:"l,omitempty"`
	ExpectRoot string `json:"x,omitempty"`
	// MsgID is the envelope's msg_id; Sealed whether it was sealed.
	MsgID  string `json:"m"`
	Sealed bool   `json:"s"`
	// Method, Tool and Args are the call, kept for a resend (Args only up
	// to maxResendArgs; empty past it).
	Method    string          `json:"mt"`
	Tool      string          `json:"t,omitempty"`
	Args      json.RawMessage `json:"a,omitempty"`
	ArgsKept  bool            `json:"k"`
	RPCID     string          `json:"id"`
	Followed  bool            `json:"f,omitempty"`
	ExpiresAt int64           `json:"z"`
}

// maxResendArgs bounds the arguments an outbound handle carries for a
// resend after certificate_renewed; a larger call is answered with the
// refusal, and the host seals it again (to the pin, already renewed).
const maxResendArgs = 256 << 10

func (k handleKeys) sealOutbound(s outboundState) (string, error) {
	pt, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	block, err := aes.NewCipher(k.box)
	if err != nil {
		return "", err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	return outboundHandlePrefix + wire.B64Encode(aead.Seal(nonce, nonce, pt, []byte(outboundHandlePrefix))), nil
}

func (k handleKeys) openOutbound(h string, now time.Time) (outboundState, error) {
	rest, ok := strings.CutPrefix(h, outboundHandlePrefix)
	if !ok || len(h) > maxOutboundHandleBytes {
		return outboundState{}, errHandle
	}
	raw, ok := wire.B64Decode(rest)
	block, err := aes.NewCipher(k.box)
	if !ok || err != nil {
		return outboundState{}, errHandle
	}
	aead, err := cipher.NewGCM(block)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return outboundState{}, errHandle
	}
	pt, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(outboundHandlePrefix))
	var s outboundState
	if err != nil || json.Unmarshal(pt, &s) != nil {
		return outboundState{}, errHandle
	}
	if !now.Before(time.Unix(s.ExpiresAt, 0)) {
		return s, errHandleExpired
	}
	return s, nil
}

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// stubAgents records the agents a run registers.
type stubAgents struct {
	pactv1connect.UnimplementedAgentServiceHandler
	mu   sync.Mutex
	regs []*pactv1.RegisterAgentRequest
}

func (s *stubAgents) RegisterAgent(_ context.Context, r *pactv1.RegisterAgentRequest) (*pactv1.RegisterAgentResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.regs = append(s.regs, r)
	return &pactv1.RegisterAgentResponse{Agent: &pactv1.Agent{Id: "a", Issuer: r.GetIssuer(), Enabled: true}}, nil
}

// TestManyKeys: -pa-keys 250 publishes 250 distinct keys over three agents
// (100, 100, 50), registers each agent with its own issuer and JWKS, and
// signs token i with key i mod 250 as that key's agent; every token
// verifies with the key its kid names in its issuer's JWKS. A rerun derives
// the same keys.
func TestManyKeys(t *testing.T) {
	stub := &stubAgents{}
	mux := http.NewServeMux()
	mux.Handle(pactv1connect.NewAgentServiceHandler(stub))
	// The load generator's admin client speaks h2c.
	h2 := &http.Server{Handler: mux, Protocols: new(http.Protocols)}
	h2.Protocols.SetHTTP1(true)
	h2.Protocols.SetUnencryptedHTTP2(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = h2.Serve(ln) }()
	t.Cleanup(func() { _ = h2.Close() })
	base := "http://" + ln.Addr().String()

	pa, err := startPA("127.0.0.1:0", "", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pa.Close)
	signers, issuers, err := pa.manyKeys(t.Context(), base, "admin", 250)
	if err != nil {
		t.Fatal(err)
	}
	if len(stub.regs) != 3 || len(signers) != 250 {
		t.Fatalf("%d agents registered, %d signers; want 3 and 250", len(stub.regs), len(signers))
	}
	jwks := map[string]map[string]*ecdsa.PublicKey{} // issuer -> kid -> key
	for _, r := range stub.regs {
		if r.GetJwksUri() != r.GetIssuer()+"/jwks.json" || !strings.HasPrefix(r.GetIssuer(), pa.issuer+"/pa/") {
			t.Fatalf("agent %s with JWKS %s", r.GetIssuer(), r.GetJwksUri())
		}
		resp, err := http.Get(r.GetJwksUri())
		if err != nil {
			t.Fatal(err)
		}
		var set struct{ Keys []struct{ X, Y, Kid string } }
		err = json.NewDecoder(resp.Body).Decode(&set)
		resp.Body.Close()
		if err != nil || len(set.Keys) == 0 || len(set.Keys) > keysPerAgent {
			t.Fatalf("%s: %d keys, %v", r.GetJwksUri(), len(set.Keys), err)
		}
		jwks[r.GetIssuer()] = map[string]*ecdsa.PublicKey{}
		for _, k := range set.Keys {
			x, _ := base64.RawURLEncoding.DecodeString(k.X)
			y, _ := base64.RawURLEncoding.DecodeString(k.Y)
			pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
			if err != nil {
				t.Fatal(err)
			}
			jwks[r.GetIssuer()][k.Kid] = pub
		}
	}
	ts, err := signPoolMany(signers, issuers, "https://provider.example/a2a", "user", 500)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, authz := range ts.authz {
		parts := strings.Split(strings.TrimPrefix(authz, "Bearer "), ".")
		hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
		body, _ := base64.RawURLEncoding.DecodeString(parts[1])
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		var h struct{ Kid string }
		var c struct{ Iss string }
		if json.Unmarshal(hdr, &h) != nil || json.Unmarshal(body, &c) != nil || len(sig) != 64 {
			t.Fatalf("token %q", authz)
		}
		pub := jwks[c.Iss][h.Kid]
		d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if pub == nil || !ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatalf("token of kid %s (iss %s) does not verify with its issuer's key", h.Kid, c.Iss)
		}
		distinct[h.Kid] = true
	}
	if len(distinct) != 250 {
		t.Fatalf("%d distinct keys signed, want 250", len(distinct))
	}
	again, _, err := pa.manyKeys(t.Context(), base, "admin", 250)
	if err != nil || !again[249].ec.Equal(signers[249].ec) {
		t.Fatal("a rerun derived other keys")
	}
}

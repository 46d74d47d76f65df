package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// TestServesTLSWhenGivenACertificate starts pactd with PACT_TLS_CERT and
// PACT_TLS_KEY and calls it over TLS with gRPC (HTTP/2 by ALPN) and Connect.
func TestServesTLSWhenGivenACertificate(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pactd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	inst := start(t, testConfig(t, "", dir, "PACT_TLS_CERT="+certFile, "PACT_TLS_KEY="+keyFile))
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	url := "https://" + inst.addr
	for name, opts := range map[string][]connect.ClientOption{"grpc": {connect.WithGRPC()}, "connect": nil} {
		c := pactv1connect.NewAgentServiceClient(client, url, append(opts, withToken(adminToken))...)
		if _, err := c.ListAgents(t.Context(), &pactv1.ListAgentsRequest{}); err != nil {
			t.Fatalf("%s over TLS: %v", name, err)
		}
	}
	// Plain h2c is not served on a TLS port.
	if _, err := agents(inst, adminToken).ListAgents(t.Context(), &pactv1.ListAgentsRequest{}); err == nil {
		t.Fatal("a plaintext call to the TLS port succeeded")
	}
}

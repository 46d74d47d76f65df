package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"testing"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/testkit/testcert"
)

// TestServesTLSWhenGivenACertificate starts pactd with PACT_TLS_CERT and
// PACT_TLS_KEY and calls it over TLS with gRPC (HTTP/2 by ALPN) and Connect.
func TestServesTLSWhenGivenACertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, cert := testcert.Write(t, dir)
	inst := start(t, testConfig(t, "", dir, "PACT_TLS_CERT="+certFile, "PACT_TLS_KEY="+keyFile))
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

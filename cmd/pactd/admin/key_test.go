package admin_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/server"
)

// TestKeyCommands: key rotate adds a key that GetJwks then publishes, and
// key list prints the JWKS's keys in its order; on both stores.
func TestKeyCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		ctx := t.Context()
		kids := func() []string {
			t.Helper()
			r, err := p.tokens().GetJwks(ctx, &pactv1.GetJwksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var set struct{ Keys []struct{ Kid string } }
			if err := json.Unmarshal([]byte(r.GetJwksJson()), &set); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, k := range set.Keys {
				out = append(out, k.Kid)
			}
			return out
		}
		before := kids()
		rot := decode(t, p.must(t, "key", "rotate", "-o", "json"), &pactv1.RotateSigningKeyResponse{})
		after := kids()
		if rot.GetKid() == "" || len(after) != len(before)+1 || !strings.Contains(strings.Join(after, " "), rot.GetKid()) {
			t.Fatalf("key rotate = %v; JWKS kids %q -> %q", rot, before, after)
		}
		if !rot.GetActivateTime().AsTime().After(time.Now()) {
			t.Errorf("the new key signs from %v, want later (it is published first)", rot.GetActivateTime().AsTime())
		}
		r := p.must(t, "key", "rotate")
		got, notes := fields(t, r.stdout)
		last := kids()
		if len(notes) != 1 || !strings.HasPrefix(notes[0], "new signing key ") || got["kid"] == "" || !strings.Contains(strings.Join(last, " "), got["kid"]) || got["signs from"] == "-" {
			t.Errorf("key rotate printed:\n%s", r.stdout)
		}
		rows := table(t, p.must(t, "key", "list").stdout)
		if len(rows) != len(last) {
			t.Fatalf("key list: %d rows for %d keys", len(rows), len(last))
		}
		for i, k := range last {
			if rows[i]["KID"] != k || rows[i]["KTY"] != "EC" || rows[i]["CRV"] != "P-256" || rows[i]["ALG"] != "ES256" || rows[i]["USE"] != "sig" {
				t.Errorf("key list row %d = %v, want kid %s", i, rows[i], k)
			}
		}
		jwks, err := p.tokens().GetJwks(ctx, &pactv1.GetJwksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		sameMessage(t, "key list -o json", decode(t, p.must(t, "key", "list", "-o", "json"), &pactv1.GetJwksResponse{}), jwks)
		// Rotation is admin only: a frontend credential changes nothing.
		refused(t, run(t, []string{"PACT_ADDR=" + p.url, "PACT_ADMIN_TOKEN=" + frontendToken}, "key", "rotate"), "permission_denied", "ERROR_REASON_PERMISSION_DENIED")
		if n := len(kids()); n != len(last) {
			t.Errorf("a refused rotation changed the JWKS: %d keys, want %d", n, len(last))
		}
	})
}

// TestHealthCommand: health needs no credential, on both ports; a service
// pactd does not know is NOT_FOUND (exit 1).
func TestHealthCommand(t *testing.T) {
	p := startPactd(t, "")
	for _, env := range [][]string{{"PACT_ADDR=" + p.url}, {"PACT_ADDR=" + p.grpcURL}} {
		args := []string{"health"}
		if strings.Contains(env[0], p.grpcURL) {
			args = append(args, "-grpc")
		}
		if r := ok(t, run(t, env, args...)); r.stdout != "SERVING\n" {
			t.Errorf("pactd %q printed %q", args, r.stdout)
		}
		resp := decode(t, ok(t, run(t, env, append(args, "-o", "json", "-service", "pact.v1.VerificationService")...)), &healthpb.HealthCheckResponse{})
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health -service pact.v1.VerificationService = %v", resp)
		}
		if r := run(t, env, append(args, "-service", "pact.v1.NoSuchService")...); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
			t.Errorf("health of an unknown service: exit %d\n%s", r.code, r.stderr)
		}
	}
}

// TestTLS: an https pactd (here behind a TLS server that also asks for a
// client certificate) is called with -ca and -cert/-key, over Connect and
// gRPC; without the CA or the client certificate the call fails.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	clientCA, clientCAKey := selfSigned(t, "client CA", true, nil, nil)
	clientCert, clientKey := selfSigned(t, "operator", false, clientCA, clientCAKey)
	writePEM(t, filepath.Join(dir, "client.pem"), "CERTIFICATE", clientCert.Raw)
	writeKey(t, filepath.Join(dir, "client.key"), clientKey)

	srv := newServer(t, "", server.Listeners{})
	ts := httptest.NewUnstartedServer(srv.Handler())
	pool := x509.NewCertPool()
	pool.AddCert(clientCA)
	ts.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	ts.EnableHTTP2 = true
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes below
	ts.StartTLS()
	t.Cleanup(func() { ts.Close(); _ = srv.Close() })
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ts.Certificate().Raw)

	env := []string{"PACT_ADDR=" + ts.URL, "PACT_ADMIN_TOKEN=" + adminToken}
	mtls := []string{"-ca", filepath.Join(dir, "ca.pem"), "-cert", filepath.Join(dir, "client.pem"), "-key", filepath.Join(dir, "client.key")}
	for _, proto := range [][]string{nil, {"-grpc"}} {
		args := append(append([]string{"agent", "register", "-issuer", "https://pa.example", "-jwks-uri", "https://pa.example/jwks", "-name", "PA"}, mtls...), proto...)
		ok(t, run(t, env, args...))
	}
	// Without -ca the system roots do not know the test CA.
	if r := run(t, env, "agent", "list", "-cert", mtls[3], "-key", mtls[5]); r.code != 1 || !strings.Contains(r.stderr, "certificate") {
		t.Errorf("https without -ca: exit %d\n%s", r.code, r.stderr)
	}
	// Without a client certificate the server refuses the handshake.
	if r := run(t, env, "agent", "list", "-ca", mtls[1]); r.code != 1 {
		t.Errorf("https without a client certificate: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, env, "agent", "list", "-ca", mtls[1], "-cert", mtls[3]); r.code != 2 || !strings.Contains(r.stderr, "give -cert and -key together") {
		t.Errorf("-cert without -key: exit %d\n%s", r.code, r.stderr)
	}
	// The credential went over TLS only: a plain-HTTP call to a non-loopback
	// host is warned about (not made here: the name does not resolve).
	r := run(t, []string{"PACT_ADMIN_TOKEN=" + adminToken}, "agent", "list", "-addr", "http://pactd.invalid:7070", "-timeout", "2s")
	if !strings.Contains(r.stderr, "warning: the credential goes to pactd.invalid:7070 over plain HTTP") {
		t.Errorf("no plain-HTTP warning:\n%s", r.stderr)
	}
}

// selfSigned makes a certificate: a CA when isCA, signed by parent (or by
// itself when parent is nil).
func selfSigned(t *testing.T, cn string, isCA bool, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t *testing.T, name, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeKey(t *testing.T, name string, key *ecdsa.PrivateKey) {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, name, "EC PRIVATE KEY", der)
}

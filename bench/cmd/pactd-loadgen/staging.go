package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// maxPEMBytes bounds every PEM file the tool reads.
const maxPEMBytes = 1 << 20

// tlsOpts is how the tool reaches a pactd served over https.
type tlsOpts struct {
	caFile, certFile, keyFile string
}

// readBounded reads at most maxPEMBytes of file.
func readBounded(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEMBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxPEMBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxPEMBytes)
	}
	return b, nil
}

// config returns the client TLS configuration: the system roots, or
// -ca-file's, and the client certificate when one is given.
func (t tlsOpts) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.caFile != "" {
		b, err := readBounded(t.caFile)
		if err != nil {
			return nil, fmt.Errorf("-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("-ca-file: %s holds no PEM certificate", t.caFile)
		}
		cfg.RootCAs = pool
	}
	if t.certFile != "" {
		c, err := tls.LoadX509KeyPair(t.certFile, t.keyFile)
		if err != nil {
			return nil, fmt.Errorf("-cert/-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}

// httpClient returns a client for base: h2c for http://, TLS (HTTP/2 by
// ALPN) for https://; http1 asks for HTTP/1.1 with conns idle connections.
func httpClient(base string, t tlsOpts, http1 bool, conns int) (*http.Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("address %q: must be http://host:port (h2c) or https://host:port", base)
	}
	if u.Scheme == "http" {
		if http1 {
			return httpOneClient(conns), nil
		}
		return h2cClient(), nil
	}
	cfg, err := t.config()
	if err != nil {
		return nil, err
	}
	p := new(http.Protocols)
	if http1 {
		p.SetHTTP1(true)
	} else {
		p.SetHTTP2(true)
	}
	return &http.Client{Transport: &http.Transport{
		Protocols: p, TLSClientConfig: cfg, ForceAttemptHTTP2: !http1,
		MaxIdleConns: max(conns, 2), MaxIdleConnsPerHost: max(conns, 2), DisableCompression: true,
		TLSHandshakeTimeout: 10 * time.Second,
	}}, nil
}

// grpcDial opens a grpc-go connection to base: plaintext for http://, TLS
// for https://.
func grpcDial(base string, t tlsOpts) (*grpc.ClientConn, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("address %q: must be http(s)://host:port", base)
	}
	creds := insecure.NewCredentials()
	if u.Scheme == "https" {
		cfg, err := t.config()
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	return grpc.NewClient("passthrough:///"+u.Host, grpc.WithTransportCredentials(creds))
}

// makeCerts writes a throw-away CA and two certificates it signed, for a
// lab run on one machine: pactd's (pactd.pem, pactd-key.pem) and the
// load-test PA's JWKS server's (pa.pem, pa-key.pem), both for 127.0.0.1,
// ::1 and localhost, valid for 7 days. A staging deployment uses its own.
func makeCerts(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pactd-loadgen lab CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER); err != nil {
		return err
	}
	for i, name := range []string{"pactd", "pa"} {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		leaf := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: "pactd-loadgen lab " + name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &k.PublicKey, caKey)
		if err != nil {
			return err
		}
		kder, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, name+".pem"), "CERTIFICATE", der); err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, name+"-key.pem"), "PRIVATE KEY", kder); err != nil {
			return err
		}
	}
	return nil
}

func writePEM(file, typ string, der []byte) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// paSetup says where the load-test PA's JWKS lives.
type paSetup struct {
	// listen: serve the JWKS over https here (-jwks-listen), with cert and
	// key; empty with issuer set means it is hosted elsewhere.
	listen, cert, key string
	// issuer and jwksURI as registered; derived from listen when empty.
	issuer, jwksURI string
}

// jwksPath is where the tool serves the JWKS.
const jwksPath = "/jwks.json"

// startStagingPA loads the keys and, for -jwks-listen, serves the JWKS over
// https. The issuer defaults to https://{listen} (an explicit -issuer for
// a wildcard or NATed listener).
func startStagingPA(s paSetup, keyFile string, withRSA bool) (*testPA, error) {
	pa := &testPA{}
	if err := pa.loadKeys(keyFile, withRSA); err != nil {
		return nil, err
	}
	pa.issuer, pa.jwksURI = s.issuer, s.jwksURI
	if s.listen == "" {
		if pa.issuer == "" || pa.jwksURI == "" {
			return nil, errors.New("without -jwks-listen, -issuer and -jwks-uri say where the JWKS is hosted")
		}
		pa.srv = &http.Server{}
		return pa, nil
	}
	cert, err := tls.LoadX509KeyPair(s.cert, s.key)
	if err != nil {
		return nil, fmt.Errorf("-jwks-cert/-jwks-key: %w", err)
	}
	body, err := pa.jwks()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return nil, fmt.Errorf("-jwks-listen: %w", err)
	}
	if pa.issuer == "" {
		host, port, _ := net.SplitHostPort(s.listen)
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			_ = ln.Close()
			return nil, fmt.Errorf("-jwks-listen %s is a wildcard: say the address pactd reaches with -issuer https://host:port", s.listen)
		}
		if port == "0" {
			port = fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
		}
		pa.issuer = "https://" + net.JoinHostPort(host, port)
	}
	if pa.jwksURI == "" {
		pa.jwksURI = pa.issuer + jwksPath
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+jwksPath, func(w http.ResponseWriter, _ *http.Request) {
		pa.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(body)
	})
	pa.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}}
	go func() { _ = pa.srv.ServeTLS(ln, "", "") }()
	return pa, nil
}

// registerCommand is the admin CLI call that registers the PA, for an
// operator who holds the admin credential (-register print).
func registerCommand(addr, issuer, jwksURI string, t tlsOpts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pactd agent register -addr %s", shellQuote(addr))
	if t.caFile != "" {
		fmt.Fprintf(&b, " -ca %s", shellQuote(t.caFile))
	}
	if t.certFile != "" {
		fmt.Fprintf(&b, " -cert %s -key %s", shellQuote(t.certFile), shellQuote(t.keyFile))
	}
	fmt.Fprintf(&b, " -issuer %s -jwks-uri %s -name %s", shellQuote(issuer), shellQuote(jwksURI), shellQuote(paDisplayName))
	return b.String()
}

// paDisplayName is the registered agent's display name.
const paDisplayName = "pactd-loadgen PA"

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package admin

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
)

// The development wallet: hdtp wallet-init and hdtp wallet-sign play the
// person's part on one machine, offline, so an identity can be set up end
// to end without a real wallet. A person's root belongs in their own
// wallet, never beside a host: these commands are for development and
// tests. They call no pactd.
//
// A wallet directory holds root.key (the root's PKCS #8, PEM, mode 0600),
// root.crt (its certificate, PEM) and last-not-before (the latest leaf's
// notBefore, so the next leaf is newer: §14.1's max(issue − 1 h, previous
// notBefore + 1 s)).

const (
	walletKeyFile  = "root.key"
	walletCertFile = "root.crt"
	walletLastFile = "last-not-before"
)

// loadWallet reads a wallet directory.
func loadWallet(dir string) (crypto.Signer, []byte, *cert.Certificate, error) {
	kb, err := readBounded(filepath.Join(dir, walletKeyFile))
	if err != nil {
		return nil, nil, nil, err
	}
	block, _ := pem.Decode(kb)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, nil, nil, errors.New(walletKeyFile + " holds no PRIVATE KEY")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, nil, nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, nil, errors.New(walletKeyFile + " is not a signing key")
	}
	cb, err := readBounded(filepath.Join(dir, walletCertFile))
	if err != nil {
		return nil, nil, nil, err
	}
	cblock, _ := pem.Decode(cb)
	if cblock == nil || cblock.Type != "CERTIFICATE" {
		return nil, nil, nil, errors.New(walletCertFile + " holds no CERTIFICATE")
	}
	root, err := cert.Parse(cblock.Bytes, cert.KindRoot, wire.HDTP1)
	if err != nil {
		return nil, nil, nil, err
	}
	if spki, _ := cert.SPKIOf(signer.Public()); wire.KeyIDOf(spki) != root.KeyID {
		return nil, nil, nil, errors.New(walletKeyFile + " is not the key of " + walletCertFile)
	}
	return signer, cblock.Bytes, root, nil
}

func hdtpWalletCommands() []*command {
	return []*command{
		{group: "hdtp", name: "wallet-init", args: "DIR -name NAME", summary: "development only: make a person's root in DIR (offline; a real root stays in the person's wallet)",
			minArgs: 1, maxArgs: 1, noAuth: true,
			setup: func(flags *flag.FlagSet) func(context.Context, *session, []string) error {
				name := flags.String("name", "", "the person's `name` (the root's commonName)")
				p256 := flags.Bool("p256", false, "a P-256 root (default Ed25519)")
				end := flags.String("end", "", "HDTP only: the root's end `date` (YYYY-MM-DD); default none (99991231235959Z, the only one PACT accepts)")
				return func(_ context.Context, s *session, args []string) error {
					if err := required(s.op, map[string]string{"-name": *name}); err != nil {
						return err
					}
					t := cert.RootTemplate{CommonName: *name, NotBefore: time.Now().UTC().Truncate(time.Second)}
					if *end != "" {
						d, err := time.Parse("2006-01-02", *end)
						if err != nil {
							return usageError("%s: -end must be YYYY-MM-DD", s.op)
						}
						t.NotAfter = d.UTC()
					}
					var key crypto.Signer
					var err error
					if *p256 {
						key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
					} else {
						_, key, err = ed25519.GenerateKey(rand.Reader)
					}
					if err != nil {
						return failure("%s: %v", s.op, err)
					}
					der, err := cert.NewRoot(key, t)
					if err != nil {
						return failure("%s: %v", s.op, err)
					}
					pk, err := x509.MarshalPKCS8PrivateKey(key)
					if err != nil {
						return failure("%s: %v", s.op, err)
					}
					dir := args[0]
					if err := os.MkdirAll(dir, 0o700); err != nil {
						return failure("%s: %v", s.op, err)
					}
					keyPath := filepath.Join(dir, walletKeyFile)
					f, err := os.OpenFile(keyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
					if errors.Is(err, fs.ErrExist) {
						return failure("%s: %s exists: a root is made once", s.op, keyPath)
					}
					if err != nil {
						return failure("%s: %v", s.op, err)
					}
					werr := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: pk})
					clear(pk)
					if err := errors.Join(werr, f.Close()); err != nil {
						return failure("%s: %v", s.op, err)
					}
					if err := os.WriteFile(filepath.Join(dir, walletCertFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
						return failure("%s: %v", s.op, err)
					}
					root, _ := cert.Parse(der, cert.KindRoot, wire.HDTP1)
					fmt.Fprintf(s.out, "root %s in %s (development only)\n", root.Fingerprint(), dir)
					return nil
				}
			}},
		{group: "hdtp", name: "wallet-sign", args: "DIR -request FILE", summary: "development only: issue the leaf a signing request asks for and print the answer for pactd hdtp install",
			minArgs: 1, maxArgs: 1, noAuth: true,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				reqFile := fs.String("request", "", "the signing request `FILE` (JSON, as pactd hdtp create/request -request-out writes it)")
				days := fs.Int("days", 0, "the leaf's validity in `days`, 1 to 398 (default: the request's suggestion)")
				return func(_ context.Context, s *session, args []string) error {
					if err := required(s.op, map[string]string{"-request": *reqFile}); err != nil {
						return err
					}
					key, rootDER, root, err := loadWallet(args[0])
					if err != nil {
						return failure("%s: wallet %s: %v", s.op, args[0], err)
					}
					rb, err := readBounded(*reqFile)
					if err != nil {
						return failure("%s: -request: %v", s.op, err)
					}
					var sr hdtpv1.SigningRequest
					if err := protojson.Unmarshal(rb, &sr); err != nil {
						return failure("%s: -request: not a signing request: %v", s.op, err)
					}
					// §2.2: prove the root before signing anything.
					if sr.GetExpectRoot() != "" && sr.GetExpectRoot() != root.Fingerprint() {
						return failure("%s: the request expects root %s; this wallet's is %s", s.op, sr.GetExpectRoot(), root.Fingerprint())
					}
					csrDER, ok := wire.B64Decode(sr.GetCsr())
					if !ok {
						return failure("%s: the request's csr is not base64url", s.op)
					}
					csr, err := cert.ParseCSR(csrDER)
					if err != nil {
						return failure("%s: the CSR is refused: %v", s.op, err)
					}
					if csr.KeyID == root.KeyID {
						return failure("%s: the CSR's key is the root's", s.op)
					}
					n := *days
					if n == 0 {
						if n, err = strconv.Atoi(sr.GetValidDays()); err != nil {
							n = 365
						}
					}
					if n < 1 || n > 398 {
						return usageError("%s: -days must be 1 to 398", s.op)
					}
					nb := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
					lastPath := filepath.Join(args[0], walletLastFile)
					if b, err := readBounded(lastPath); err == nil {
						if last, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && !nb.After(time.Unix(last, 0)) {
							nb = time.Unix(last+1, 0).UTC()
						}
					}
					leaf, err := cert.IssueLeaf(root, key, cert.LeafTemplate{PublicKey: csr.PublicKey, CommonName: csr.CommonName, Endpoint: csr.Endpoint,
						NotBefore: nb, NotAfter: nb.Add(time.Duration(n) * 24 * time.Hour)})
					if err != nil {
						return failure("%s: %v", s.op, err)
					}
					if err := os.WriteFile(lastPath, []byte(strconv.FormatInt(nb.Unix(), 10)+"\n"), 0o600); err != nil {
						return failure("%s: %v", s.op, err)
					}
					fmt.Fprintf(s.out, "chain=%s.%s&state=%s\n", wire.B64Encode(leaf), wire.B64Encode(rootDER), sr.GetState())
					return nil
				}
			}},
	}
}

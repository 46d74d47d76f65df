package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"pactd.dev/pactd/bench/internal/loadstat"
)

// httpOneClient is an HTTP/1.1 client keeping conns idle connections.
func httpOneClient(conns int) *http.Client { return loadstat.HTTP1Client(conns) }

// startPA starts the load-test PA as the flags say: the JWKS over https on
// -jwks-listen, hosted elsewhere (-issuer and -jwks-uri), or, with neither,
// over plain http on loopback (-jwks-addr) for a pactd under PACT_DEV.
func (o options) startPA() (*testPA, error) {
	if o.jwksListen == "" && o.issuer == "" && o.jwksURI == "" {
		return startPA(o.jwksAddr, o.keyFile, o.alg == "RS256")
	}
	return startStagingPA(paSetup{listen: o.jwksListen, cert: o.jwksCert, key: o.jwksKey, issuer: o.issuer, jwksURI: o.jwksURI},
		o.keyFile, o.alg == "RS256")
}

// rateDesc describes the open-loop rate for reports.
func (o options) rateDesc() string {
	switch {
	case o.rampSpec != "":
		return "ramp " + o.rampSpec
	case o.stepsSpec != "":
		return "steps " + o.stepsSpec
	}
	return fmt.Sprintf("%g/s", o.rate)
}

// writeJWKSCmd writes the PA's public keys for an operator to host.
func writeJWKSCmd(o options) error {
	pa := &testPA{}
	if err := pa.loadKeys(o.keyFile, o.alg == "RS256"); err != nil {
		return err
	}
	b, err := pa.jwks()
	if err != nil {
		return err
	}
	return os.WriteFile(o.writeJWKS, append(b, '\n'), 0o644)
}

// serveJWKSCmd serves the JWKS on -jwks-listen until interrupted,
// registering the PA first when PACT_ADMIN_TOKEN is set.
func serveJWKSCmd(ctx context.Context, o options, stdout io.Writer) error {
	pa, err := o.startPA()
	if err != nil {
		return err
	}
	defer pa.Close()
	if admin := os.Getenv("PACT_ADMIN_TOKEN"); admin != "" && o.register == "auto" {
		if _, err := setupStagingWorld(ctx, o, admin, pa); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "serving the JWKS of PA %s at %s\n", pa.issuer, pa.jwksURI)
	<-ctx.Done()
	return nil
}

// writeTokensCmd writes -tokens VerifyAgentRequest messages with fresh,
// distinct PA tokens as a JSON array (ghz --data-file: ghz sends them round
// robin). They expire 300 s after they were minted, so a ghz run longer
// than that needs the file written again between runs.
func writeTokensCmd(ctx context.Context, o options, stderr io.Writer) error {
	pa := &testPA{}
	if err := pa.loadKeys(o.keyFile, o.alg == "RS256"); err != nil {
		return err
	}
	pa.issuer, pa.jwksURI = o.issuer, o.jwksURI
	if pa.issuer == "" && o.jwksListen != "" {
		p, err := o.startPA() // only for the issuer it derives
		if err != nil {
			return err
		}
		p.Close()
		pa.issuer = p.issuer
	}
	if pa.issuer == "" {
		return errors.New("-write-tokens needs the PA's -issuer (or -jwks-listen) and -key-file")
	}
	if o.keyFile == "" {
		return errors.New("-write-tokens needs -key-file: the keys the served JWKS holds")
	}
	aud := o.audience
	if aud == "" {
		return errors.New("-write-tokens needs -audience (the aud pactd expects; the register step prints it)")
	}
	s, err := pa.signer(o.alg)
	if err != nil {
		return err
	}
	ts, err := signPool(s, pa.issuer, aud, "ghz", o.tokens)
	if err != nil {
		return err
	}
	type msg struct {
		BrandID       string `json:"brand_id"`
		Authorization string `json:"authorization"`
	}
	out := make([]msg, len(ts.authz))
	for i, a := range ts.authz {
		out[i] = msg{o.brand, a}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.writeTokens, b, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d tokens valid until %s\n", len(out), ts.signedAt.Add(tokenLifetime).UTC().Format("15:04:05Z"))
	return ctx.Err()
}

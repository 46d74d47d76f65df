package main

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// waitHealthy polls grpc.health.v1 Check (no credential needed) until pactd
// answers SERVING or timeout passes.
// An https base is reached over TLS with t's roots and client certificate.
func waitHealthy(ctx context.Context, base string, t tlsOpts, timeout time.Duration) error {
	conn, err := grpcDial(base, t)
	if err != nil {
		return err
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error // set by every attempt before the deadline is checked
	for {
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		resp, err := hc.Check(cctx, &healthpb.HealthCheckRequest{})
		ccancel()
		switch {
		case err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING:
			return nil
		case err != nil:
			last = err
		default:
			last = fmt.Errorf("status %s", resp.GetStatus())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pactd at %s not healthy after %s: %w", base, timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// setupWorld registers the PA (RegisterAgent is idempotent for identical
// details) and makes sure the Brand exists, reusing it if present. It
// returns the audience pactd assigned to the agent.
func setupWorld(ctx context.Context, base, adminToken string, pa *testPA, brandID string) (audience string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	hc := bearerClient{h2cClient(), "Bearer " + adminToken}
	defer hc.c.CloseIdleConnections()
	ac := pactv1connect.NewAgentServiceClient(hc, base)
	reg, err := ac.RegisterAgent(ctx, &pactv1.RegisterAgentRequest{
		Issuer: pa.issuer, JwksUri: pa.jwksURI, DisplayName: "pactd-loadgen PA",
	})
	if err != nil {
		return "", fmt.Errorf("RegisterAgent %s: %w", pa.issuer, err)
	}
	if !reg.GetAgent().GetEnabled() {
		return "", fmt.Errorf("agent %s is disabled", reg.GetAgent().GetId())
	}
	bc := pactv1connect.NewBrandServiceClient(hc, base)
	_, err = bc.GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: brandID})
	if connect.CodeOf(err) == connect.CodeNotFound {
		_, err = bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{
			BrandId: brandID, DisplayName: "Load test Brand", Description: "Brand used by pactd-loadgen",
		})
		if connect.CodeOf(err) == connect.CodeAlreadyExists {
			err = nil // created meanwhile by another run
		}
	}
	if err != nil {
		return "", fmt.Errorf("brand %q: %w", brandID, err)
	}
	return reg.GetAgent().GetAudience(), nil
}

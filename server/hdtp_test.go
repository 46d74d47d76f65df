package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"pactd.dev/pactd/db/dbtest"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
	"pactd.dev/pactd/server"
	hdtpsvc "pactd.dev/pactd/services/hdtp"
)

// TestHDTPOverTheWire: hdtp.v1 is served on the main port on both engines,
// in every protocol; owner actions need the admin role (a frontend gets
// PERMISSION_DENIED, no credential UNAUTHENTICATED), a host's frontend
// credential reads the card and uses the trust helpers; the flow from
// identity to served card works end to end; the metrics count it.
func TestHDTPOverTheWire(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		inst := start(t, testConfig(t, dbURL, t.TempDir()))
		ctx := t.Context()
		for name, opts := range protocols {
			ids := func(tok string) hdtpv1connect.IdentityServiceClient {
				return hdtpv1connect.NewIdentityServiceClient(h2c(), inst.url, append(opts, withToken(tok))...)
			}
			trust := hdtpv1connect.NewTrustServiceClient(h2c(), inst.url, append(opts, withToken(frontendToken))...)
			req := &hdtpv1.CreateIdentityRequest{Endpoint: "https://" + name + ".host.example/mcp", DisplayName: "Alina Rao", Generation: hdtpv1.Generation_GENERATION_HDTP1}
			if _, err := ids(frontendToken).CreateIdentity(ctx, req); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Fatalf("%s: a frontend created an identity: %v", name, err)
			}
			if _, err := ids("").CreateIdentity(ctx, req); connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Fatalf("%s: no credential: %v", name, err)
			}
			created, err := ids(adminToken).CreateIdentity(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			id, sr := created.GetIdentity().GetIdentityId(), created.GetSigningRequest()
			if _, err := ids(frontendToken).GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: id}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Fatalf("%s: a card before the chain: %v", name, err)
			}
			if _, err := ids(frontendToken).InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id}); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Fatalf("%s: a frontend installed a chain: %v", name, err)
			}
			// The person's wallet.
			_, rootKey, _ := ed25519.GenerateKey(rand.Reader)
			rootDER, err := cert.NewRoot(rootKey, cert.RootTemplate{CommonName: "Alina Rao", NotBefore: time.Now().Add(-time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			root, _ := cert.Parse(rootDER, cert.KindRoot, wire.HDTP1)
			csrDER, _ := wire.B64Decode(sr.GetCsr())
			csr, err := cert.ParseCSR(csrDER)
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := cert.IssueLeaf(root, rootKey, cert.LeafTemplate{PublicKey: csr.PublicKey, CommonName: csr.CommonName, Endpoint: csr.Endpoint,
				NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ids(adminToken).InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: id, Chain: [][]byte{leaf, rootDER}, State: sr.GetState()}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			c, err := ids(frontendToken).GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: id})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			v, err := trust.VerifyCardSignature(ctx, &hdtpv1.VerifyCardSignatureRequest{Generation: hdtpv1.Generation_GENERATION_HDTP1, Card: c.GetCard(),
				CardSig: c.GetCardSig(), Chain: [][]byte{leaf, rootDER}, ExpectedRoot: root.Fingerprint()})
			if err != nil || !v.GetValid() {
				t.Fatalf("%s: VerifyCardSignature = %+v, %v", name, v, err)
			}
			a, err := trust.CheckAddress(ctx, &hdtpv1.CheckAddressRequest{Endpoint: "https://10.0.0.1/mcp"})
			if err != nil || a.GetValid() || a.GetReason() != "not_public" || a.GetCode() != "bad_request" {
				t.Fatalf("%s: CheckAddress = %+v, %v", name, a, err)
			}
		}
		mreq, _ := http.NewRequestWithContext(ctx, http.MethodGet, inst.url+"/metrics", nil)
		mreq.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := http.DefaultClient.Do(mreq)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		for _, want := range []string{"pactd_hdtp_signing_requests_total 3", `pactd_hdtp_chain_installs_total{result="installed"} 3`,
			`pactd_hdtp_trust_refusals_total{reason="not_public",rpc="CheckAddress"} 3`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("metrics lack %q", want)
			}
		}
	})
}

// TestHDTPNativeGRPCPort: hdtp.v1 answers on the native gRPC port too,
// with the same role table.
func TestHDTPNativeGRPCPort(t *testing.T) {
	cfg := testConfig(t, "", t.TempDir(), "PACT_GRPC_LISTEN=127.0.0.1:0")
	gln := loopback(t)
	startWith(t, cfg, server.Deps{Listeners: server.Listeners{GRPC: gln}})
	conn, err := grpc.NewClient(gln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	as := func(tok string) context.Context {
		return metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+tok)
	}
	a, err := hdtpv1.NewTrustServiceClient(conn).CheckAddress(as(frontendToken), &hdtpv1.CheckAddressRequest{Endpoint: "https://agent.alina.example/mcp/"})
	if err != nil || a.GetReason() != "trailing_slash" {
		t.Fatalf("CheckAddress = %+v, %v", a, err)
	}
	_, err = hdtpv1.NewIdentityServiceClient(conn).CreateIdentity(as(frontendToken), &hdtpv1.CreateIdentityRequest{Endpoint: "https://a.example/mcp",
		DisplayName: "A", Generation: hdtpv1.Generation_GENERATION_HDTP1})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a frontend's CreateIdentity: %v", err)
	}
	created, err := hdtpv1.NewIdentityServiceClient(conn).CreateIdentity(as(adminToken), &hdtpv1.CreateIdentityRequest{Endpoint: "https://a.example/mcp",
		DisplayName: "A", Generation: hdtpv1.Generation_GENERATION_HDTP1})
	if err != nil || created.GetSigningRequest().GetCsr() == "" {
		t.Fatalf("CreateIdentity = %+v, %v", created, err)
	}
	// The host service takes whole JSON-RPC bodies here too: a 2 MiB body
	// (past the other methods' bound) is read and answered (a JSON-RPC
	// parse error, as pactd answers a body that is no request); past the
	// host service's own bound it is RESOURCE_EXHAUSTED.
	host := hdtpv1.NewHostServiceClient(conn)
	big := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`), make([]byte, 2<<20)...)
	r, err := host.OpenInbound(as(frontendToken), &hdtpv1.OpenInboundRequest{IdentityId: created.GetIdentity().GetIdentityId(), Body: big},
		grpc.MaxCallSendMsgSize(64<<20))
	if err != nil || r.GetRespond().GetReason() != "jsonrpc_parse" {
		t.Fatalf("a 2 MiB body = %v, %v", r, err)
	}
	_, err = host.OpenInbound(as(frontendToken), &hdtpv1.OpenInboundRequest{IdentityId: created.GetIdentity().GetIdentityId(),
		Body: make([]byte, hdtpsvc.MaxHostRequestBytes+1)}, grpc.MaxCallSendMsgSize(64<<20))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a body past the bound = %v", err)
	}
	if _, err := hdtpv1.NewContactServiceClient(conn).ListContacts(as(frontendToken), &hdtpv1.ListContactsRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a frontend's ListContacts = %v", err)
	}
}

package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"google.golang.org/protobuf/proto"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/server"
)

func tokens(inst *instance, tok string, opts ...connect.ClientOption) pactv1connect.TokenServiceClient {
	return pactv1connect.NewTokenServiceClient(h2c(), inst.url, append(opts, withToken(tok))...)
}

func jwksKIDs(t *testing.T, c pactv1connect.TokenServiceClient) []string {
	t.Helper()
	resp, err := c.GetJwks(t.Context(), &pactv1.GetJwksRequest{})
	if err != nil {
		t.Fatalf("GetJwks: %v", err)
	}
	if resp.GetCacheControl() != "public, max-age=300" {
		t.Fatalf("GetJwks Cache-Control = %q", resp.GetCacheControl())
	}
	keys, err := provkeys.ParseJWKS([]byte(resp.GetJwksJson()))
	if err != nil {
		t.Fatalf("JWKS: %v", err)
	}
	var doc struct {
		Keys []struct{ Kid string } `json:"keys"`
	}
	_ = json.Unmarshal([]byte(resp.GetJwksJson()), &doc)
	var kids []string
	for _, k := range doc.Keys {
		kids = append(kids, k.Kid)
	}
	if len(kids) != len(keys) {
		t.Fatalf("JWKS kids %v", kids)
	}
	return kids
}

func TestTokenServiceWiredBothEngines(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		dir := t.TempDir()
		kek := "PACT_KEY_ENCRYPTION_KEY=" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32))
		inst := start(t, testConfig(t, dbURL, dir, kek))
		ctx := t.Context()
		for name, opts := range protocols {
			fc := tokens(inst, frontendToken, opts...)
			if kids := jwksKIDs(t, fc); len(kids) != 1 {
				t.Fatalf("%s: JWKS kids = %v, want the first key", name, kids)
			}
			if _, err := fc.GetAuthorizationServerMetadata(ctx, &pactv1.GetAuthorizationServerMetadataRequest{BrandId: "nope"}); connect.CodeOf(err) != connect.CodeNotFound {
				t.Fatalf("%s: metadata of an unknown Brand: %v", name, err)
			}
			// Anything that is not a valid token is inactive, and nothing else.
			in, err := fc.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: "x"})
			if err != nil || !proto.Equal(in, &pactv1.IntrospectTokenResponse{}) {
				t.Fatalf("%s: IntrospectToken(garbage) = %v, %v; want only active=false", name, in, err)
			}
		}
		fc := tokens(inst, frontendToken)
		first := jwksKIDs(t, fc)

		bc := pactv1connect.NewBrandServiceClient(h2c(), inst.url, withToken(adminToken))
		if _, err := bc.CreateBrand(ctx, &pactv1.CreateBrandRequest{BrandId: "acme", DisplayName: "Acme"}); err != nil {
			t.Fatal(err)
		}
		// A receipt is signed only for a live grant of this Brand, PA and
		// user (the delegation tests sign and verify real ones).
		if _, err := fc.SignReceipt(ctx, &pactv1.SignReceiptRequest{BrandId: "acme", GrantId: "a2agrant_none", PaIssuer: "https://pa.example", BrandUser: "u"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("SignReceipt(unknown grant) err = %v, want FailedPrecondition", err)
		}

		// Rotation is admin-only.
		if _, err := fc.RotateSigningKey(ctx, &pactv1.RotateSigningKeyRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Fatalf("frontend RotateSigningKey err = %v, want PermissionDenied", err)
		}
		rot, err := tokens(inst, adminToken).RotateSigningKey(ctx, &pactv1.RotateSigningKeyRequest{})
		if err != nil {
			t.Fatalf("RotateSigningKey: %v", err)
		}
		want := []string{first[0], rot.GetKid()}
		if kids := jwksKIDs(t, fc); !slices.Equal(kids, want) {
			t.Fatalf("JWKS after rotation = %v, want %v", kids, want)
		}

		// A restart on the same store and KEK serves the same keys.
		inst.stop()
		inst2 := start(t, testConfig(t, dbURL, dir, kek))
		if kids := jwksKIDs(t, tokens(inst2, frontendToken)); !slices.Equal(kids, want) {
			t.Fatalf("JWKS after restart = %v, want %v", kids, want)
		}
		inst2.stop()
		// Another KEK cannot open the keys: pactd refuses to start.
		other := "PACT_KEY_ENCRYPTION_KEY=" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{6}, 32))
		if _, err := server.Build(ctx, testConfig(t, dbURL, dir, other), server.Deps{}); err == nil ||
			!strings.Contains(err.Error(), "key-encryption key") {
			t.Fatalf("start with another KEK: err = %v", err)
		}
	})
}

// noKEK clears the key-encryption key whatever testConfig's base sets.
const noKEK = "PACT_KEY_ENCRYPTION_KEY="

func TestKeyEncryptionKeyConfiguration(t *testing.T) {
	t.Run("fail/postgres-without-kek", func(t *testing.T) {
		t.Parallel()
		_, err := server.Build(t.Context(), testConfig(t, dbtest.PostgresURL(t), t.TempDir(), "PACT_DEV=false", noKEK), server.Deps{})
		if err == nil || !strings.Contains(err.Error(), "PACT_KEY_ENCRYPTION_KEY") {
			t.Fatalf("err = %v, want a refusal naming PACT_KEY_ENCRYPTION_KEY", err)
		}
	})
	t.Run("ok/postgres-with-kek", func(t *testing.T) {
		t.Parallel()
		kek := "PACT_KEY_ENCRYPTION_KEY=" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
		dir := t.TempDir()
		inst := start(t, testConfig(t, dbtest.PostgresURL(t), dir, "PACT_DEV=false", kek))
		jwksKIDs(t, tokens(inst, frontendToken))
		if _, err := os.Stat(filepath.Join(dir, provkeys.KEKFileName)); err == nil {
			t.Fatal("a configured KEK was also written to the data directory")
		}
	})
	t.Run("fail/bad-kek", func(t *testing.T) {
		t.Parallel()
		_, err := server.Build(t.Context(), testConfig(t, "", t.TempDir(), "PACT_KEY_ENCRYPTION_KEY=c2hvcnQ="), server.Deps{})
		if err == nil || !strings.Contains(err.Error(), "key-encryption-key") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ok/sqlite-generates-kek-file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		var logs bytes.Buffer
		srv, err := server.Build(t.Context(), testConfig(t, "", dir, "PACT_DEV=false", noKEK), server.Deps{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("server.Build: %v", err)
		}
		_ = srv.Close()
		path := filepath.Join(dir, provkeys.KEKFileName)
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("KEK file: %v, %v; want mode 0600", fi, err)
		}
		raw, _ := os.ReadFile(path)
		if !strings.Contains(logs.String(), `"level":"WARN"`) || !strings.Contains(logs.String(), "PACT_KEY_ENCRYPTION_KEY") {
			t.Fatalf("no warning that production must configure the KEK:\n%s", logs.String())
		}
		if strings.Contains(logs.String(), strings.TrimSpace(string(raw))) {
			t.Fatal("the KEK was logged")
		}
		// The same data directory starts again with the same keys.
		a := jwksKIDs(t, tokens(start(t, testConfig(t, "", dir, "PACT_DEV=false", noKEK)), frontendToken))
		b := jwksKIDs(t, tokens(start(t, testConfig(t, "", dir, "PACT_DEV=false", noKEK)), frontendToken))
		if !slices.Equal(a, b) {
			t.Fatalf("restart changed the keys: %v → %v", a, b)
		}
	})
}

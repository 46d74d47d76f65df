package admin_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// TestCredentialCommands: credential create (the token on standard output
// only, and it works), list (never a token) and revoke (the token stops
// working) on both stores, against ListCredentials.
func TestCredentialCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		ctx := t.Context()
		listCreds := func() *pactv1.ListCredentialsResponse {
			t.Helper()
			r, err := p.credentials(adminToken).ListCredentials(ctx, &pactv1.ListCredentialsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		start := listCreds()

		r := p.must(t, "credential", "create", "-role", "frontend", "-name", "checkout frontend", "-expires", "720h")
		tok := strings.TrimSuffix(r.stdout, "\n")
		if !regexp.MustCompile(`^pact_fro_\S+$`).MatchString(tok) {
			t.Fatalf("credential create printed %q on stdout, want the token alone", r.stdout)
		}
		if strings.Contains(r.stderr, tok) || !regexp.MustCompile(`created frontend credential cred_\S+ \("checkout frontend"\), expires 20`).MatchString(r.stderr) {
			t.Errorf("credential create said on stderr:\n%s", r.stderr)
		}
		// The token works, as a frontend credential.
		if _, err := p.delegation(tok).ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "none", BrandUser: "u"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("a frontend call with the new token: %v, want NotFound (authenticated, no such Brand)", err)
		}
		if _, err := p.credentials(tok).ListCredentials(ctx, &pactv1.ListCredentialsRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("an admin call with the new frontend token: %v, want PermissionDenied", err)
		}
		// The calls above record the new token's last use in the background
		// (core/auth touch), and so did this test's first call with the
		// bootstrap admin token; wait for both, so the comparisons below do
		// not race them (the admin's could land between two lists).
		used := func(l *pactv1.ListCredentialsResponse, name string) bool {
			for _, c := range l.GetCredentials() {
				if c.GetName() == name {
					return c.GetLastUseTime() != nil
				}
			}
			return false
		}
		var list *pactv1.ListCredentialsResponse
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			list = listCreds()
			if used(list, "checkout frontend") && used(list, "bootstrap admin") || time.Now().After(deadline) {
				break
			}
		}
		if len(list.GetCredentials()) != len(start.GetCredentials())+1 {
			t.Fatalf("credentials after create: %v", list)
		}
		newest := list.GetCredentials()[len(list.GetCredentials())-1]
		if newest.GetName() != "checkout frontend" || newest.GetRole() != pactv1.CallerRole_CALLER_ROLE_FRONTEND ||
			newest.GetExpireTime().AsTime().Sub(time.Now().Add(720*time.Hour)).Abs() > time.Minute {
			t.Errorf("stored credential = %v", newest)
		}

		// -o json: the whole response, the token in it.
		created := decode(t, p.must(t, "credential", "create", "-o", "json", "-role", "admin", "-name", "ops", "-expires", "2030-01-01T00:00:00Z"), &pactv1.CreateCredentialResponse{})
		if !strings.HasPrefix(created.GetToken(), "pact_adm_") || created.GetCredential().GetExpireTime().AsTime() != time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) {
			t.Errorf("credential create -o json = %v", created)
		}

		// list: rows and json against ListCredentials; no token anywhere.
		list = listCreds()
		out := p.must(t, "credential", "list").stdout
		if strings.Contains(out, tok) || strings.Contains(out, created.GetToken()) {
			t.Fatalf("credential list printed a token:\n%s", out)
		}
		rows := table(t, out)
		if len(rows) != len(list.GetCredentials()) {
			t.Fatalf("credential list: %d rows for %d credentials", len(rows), len(list.GetCredentials()))
		}
		for i, c := range list.GetCredentials() {
			role := map[pactv1.CallerRole]string{pactv1.CallerRole_CALLER_ROLE_ADMIN: "admin", pactv1.CallerRole_CALLER_ROLE_FRONTEND: "frontend"}[c.GetRole()]
			if rows[i]["ID"] != c.GetId() || rows[i]["ROLE"] != role || rows[i]["NAME"] != c.GetName() || rows[i]["REVOKED"] != "-" {
				t.Errorf("credential list row %d = %v, want %v", i, rows[i], c)
			}
		}
		sameMessage(t, "credential list -o json", decode(t, p.must(t, "credential", "list", "-o", "json"), &pactv1.ListCredentialsResponse{}), list)

		// Refusals name the field and store nothing.
		refused(t, p.cli(t, "credential", "create", "-role", "frontend", "-name", "bootstrap frontend"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "name")
		refused(t, p.cli(t, "credential", "create", "-role", "frontend", "-name", "late", "-expires", "2001-01-01T00:00:00Z"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "expire_time")
		sameMessage(t, "credentials after the refusals", listCreds(), list)

		// revoke: the token stops working; revoking again is refused.
		r = p.must(t, "credential", "revoke", newest.GetId())
		got, notes := fields(t, r.stdout)
		if len(notes) != 1 || notes[0] != "revoked credential "+newest.GetId() || got["revoked"] == "-" || got["name"] != "checkout frontend" {
			t.Errorf("credential revoke printed:\n%s", r.stdout)
		}
		waitFor(t, "the revoked token to be refused", func() bool {
			_, err := p.delegation(tok).ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: "none", BrandUser: "u"})
			return connect.CodeOf(err) == connect.CodeUnauthenticated
		})
		refused(t, p.cli(t, "credential", "revoke", newest.GetId()), "failed_precondition", "ERROR_REASON_FAILED_PRECONDITION")
		refused(t, p.cli(t, "credential", "revoke", "cred_nothing"), "not_found", "ERROR_REASON_NOT_FOUND")
		if rows := table(t, p.must(t, "credential", "list").stdout); rows[len(rows)-2]["REVOKED"] == "-" {
			t.Errorf("credential list shows the revoked credential as live: %v", rows)
		}
	})
	// Usage: a role pactd does not have.
	p := startPactd(t, "")
	if r := p.cli(t, "credential", "create", "-role", "root", "-name", "x"); r.code != 2 || !strings.Contains(r.stderr, "must be admin or frontend") {
		t.Errorf("-role root: exit %d\n%s", r.code, r.stderr)
	}
	if r := p.cli(t, "credential", "create", "-role", "admin", "-name", "x", "-expires", "tomorrow"); r.code != 2 || !strings.Contains(r.stderr, "RFC 3339") {
		t.Errorf("-expires tomorrow: exit %d\n%s", r.code, r.stderr)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

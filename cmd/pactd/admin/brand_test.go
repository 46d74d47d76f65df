package admin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// TestBrandCommands: brand create, get, list, update (scopes, login
// settings, skills, a settings file) and card against a real pactd on both
// stores, checked against GetBrand, ListBrands and GetAgentCard.
func TestBrandCommands(t *testing.T) {
	dbtest.Engines(t, func(t *testing.T, dbURL string) {
		p := startPactd(t, dbURL)
		ctx := t.Context()
		getBrand := func(id string) *pactv1.Brand {
			t.Helper()
			r, err := p.brands().GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: id})
			if err != nil {
				t.Fatal(err)
			}
			return r.GetBrand()
		}

		// create, identity only.
		r := p.must(t, "brand", "create", "acme", "-name", "Acme", "-description", "Acme support")
		got, notes := fields(t, r.stdout)
		acme := getBrand("acme")
		if len(notes) != 1 || notes[0] != "created Brand acme" {
			t.Errorf("brand create said %q", notes)
		}
		for k, v := range map[string]string{"brand id": "acme", "name": "Acme", "description": "Acme support",
			"interface url": "https://provider.example/a2a/acme", "delegation": "off"} {
			if got[k] != v {
				t.Errorf("brand create table %q = %q, want %q\n%s", k, got[k], v, r.stdout)
			}
		}
		if acme.GetDisplayName() != "Acme" || acme.GetDescription() != "Acme support" || acme.GetDelegation().GetEnabled() {
			t.Errorf("stored Brand = %v", acme)
		}
		sameMessage(t, "brand get -o json", decode(t, p.must(t, "brand", "get", "acme", "-o", "json"), &pactv1.GetBrandResponse{}).GetBrand(), acme)

		// create with delegation and skills from the flags.
		skills := filepath.Join(t.TempDir(), "skills.json")
		if err := os.WriteFile(skills, []byte(`[{"id":"orders","name":"Orders","description":"Your orders","tags":["orders"]}]`), 0o600); err != nil {
			t.Fatal(err)
		}
		created := decode(t, p.must(t, "brand", "create", "globex", "-o", "json", "-name", "Globex", "-skills-file", skills,
			"-delegation", "-scope", "orders:read=See your orders", "-scope", "orders:cancel=Cancel your orders",
			"-login-url", "https://login.globex.example", "-login-mode", "trusted-frontend"), &pactv1.CreateBrandResponse{})
		globex := getBrand("globex")
		sameMessage(t, "brand create -o json", created.GetBrand(), globex)
		d := globex.GetDelegation()
		if !d.GetEnabled() || d.GetLoginUrl() != "https://login.globex.example" || d.GetLoginMode() != pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND ||
			len(d.GetScopes()) != 2 || d.GetScopes()[0].GetId() != "orders:read" || d.GetScopes()[1].GetDescription() != "Cancel your orders" ||
			len(globex.GetSkills()) != 1 || globex.GetSkills()[0].GetTags()[0] != "orders" {
			t.Fatalf("stored Brand = %v", globex)
		}

		// list: table and json against ListBrands.
		list, err := p.brands().ListBrands(ctx, &pactv1.ListBrandsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		rows := table(t, p.must(t, "brand", "list").stdout)
		wantRows := []map[string]string{
			{"BRAND": "acme", "NAME": "Acme", "DELEGATION": "off", "SCOPES": "-", "INTERFACE URL": "https://provider.example/a2a/acme"},
			{"BRAND": "globex", "NAME": "Globex", "DELEGATION": "on", "SCOPES": "orders:read orders:cancel", "INTERFACE URL": "https://provider.example/a2a/globex"},
		}
		if !reflect.DeepEqual(rows, wantRows) {
			t.Errorf("brand list rows = %v\nwant %v", rows, wantRows)
		}
		sameMessage(t, "brand list -o json", decode(t, p.must(t, "brand", "list", "-o", "json"), &pactv1.ListBrandsResponse{}), list)

		// update: scopes replaced, the login settings kept (the command
		// changes the current settings).
		r = p.must(t, "brand", "update", "globex", "-scope", "profile:read=See your profile", "-skip-consent")
		globex = getBrand("globex")
		d = globex.GetDelegation()
		if len(d.GetScopes()) != 1 || d.GetScopes()[0].GetId() != "profile:read" || d.GetLoginUrl() != "https://login.globex.example" ||
			d.GetLoginMode() != pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND || !d.GetSkipConsentWhenGranted() || !d.GetEnabled() {
			t.Fatalf("after brand update: %v", d)
		}
		got, _ = fields(t, r.stdout)
		if got["scope profile:read"] != "See your profile" || got["skip consent"] != "yes" || got["login url"] != "https://login.globex.example" || got["login mode"] != "trusted-frontend" {
			t.Errorf("brand update printed %v", got)
		}
		p.must(t, "brand", "update", "acme", "-name", "Acme Inc.")
		if b := getBrand("acme"); b.GetDisplayName() != "Acme Inc." || b.GetDescription() != "Acme support" {
			t.Errorf("after renaming: %v", b)
		}

		// A refusal names the field and changes nothing.
		before := getBrand("globex")
		refused(t, p.cli(t, "brand", "update", "globex", "-login-url", "ftp://login.globex.example"),
			"invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "brand.delegation.login_url")
		refused(t, p.cli(t, "brand", "update", "globex", "-scope", "bad scope=has a space"),
			"invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "brand.delegation.scopes[0].id")
		refused(t, p.cli(t, "brand", "create", "bad/id", "-name", "Bad"), "invalid_argument", "ERROR_REASON_INVALID_ARGUMENT", "brand_id")
		refused(t, p.cli(t, "brand", "create", "acme", "-name", "Again"), "already_exists", "ERROR_REASON_ALREADY_EXISTS")
		refused(t, p.cli(t, "brand", "get", "nobody"), "not_found", "ERROR_REASON_NOT_FOUND")
		sameMessage(t, "globex after the refusals", getBrand("globex"), before)
		if after, err := p.brands().ListBrands(ctx, &pactv1.ListBrandsRequest{}); err != nil || len(after.GetBrands()) != 2 {
			t.Errorf("Brands after the refusals: %v, %v", after, err)
		}

		// The whole settings from a file: resource-bound types too.
		settings := filepath.Join(t.TempDir(), "delegation.json")
		if err := os.WriteFile(settings, []byte(`{"enabled":true,"login_url":"https://login.globex.example",
			"login_mode":"BRAND_LOGIN_MODE_TRUSTED_FRONTEND",
			"scopes":[{"id":"orders:cancel","description":"Cancel your orders"}],
			"authorization_details_types":[{"type":"https://globex.example/order-cancel/v1","description":"Cancel one order",
			  "scope":"orders:cancel","combination":"AUTHORIZATION_DETAILS_COMBINATION_UNION",
			  "fields":[{"name":"order_id","kind":"AUTHORIZATION_DETAILS_FIELD_KIND_STRING","required":true,"label":"order","pattern":"^[0-9]{4}$"}]}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		upd := decode(t, p.must(t, "brand", "update", "globex", "-delegation-file", settings, "-o", "json"), &pactv1.UpdateBrandResponse{})
		globex = getBrand("globex")
		sameMessage(t, "brand update -o json", upd.GetBrand(), globex)
		if ts := globex.GetDelegation().GetAuthorizationDetailsTypes(); len(ts) != 1 || ts[0].GetType() != "https://globex.example/order-cancel/v1" || globex.GetDelegation().GetSkipConsentWhenGranted() {
			t.Fatalf("after -delegation-file: %v", globex.GetDelegation())
		}

		// card: the Agent Card as GetAgentCard builds it.
		card, err := p.brands().GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: "globex"})
		if err != nil {
			t.Fatal(err)
		}
		var printed, want any
		out := p.must(t, "brand", "card", "globex").stdout
		if err := json.Unmarshal([]byte(out), &printed); err != nil {
			t.Fatalf("brand card printed no JSON: %v\n%s", err, out)
		}
		if err := json.Unmarshal([]byte(card.GetCardJson()), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(printed, want) || !strings.Contains(out, "\n  \"") {
			t.Errorf("brand card printed\n%s\nwant (indented) %s", out, card.GetCardJson())
		}
		sameMessage(t, "brand card -o json", decode(t, p.must(t, "brand", "card", "globex", "-o", "json"), &pactv1.GetAgentCardResponse{}), card)
		refused(t, p.cli(t, "brand", "card", "nobody"), "not_found", "ERROR_REASON_NOT_FOUND")
		// A frontend credential may read cards and list the Brands (the
		// frontend's root page), and nothing else here.
		ok(t, run(t, []string{"PACT_ADDR=" + p.url, "PACT_ADMIN_TOKEN=" + frontendToken}, "brand", "card", "acme"))
		ok(t, run(t, []string{"PACT_ADDR=" + p.url, "PACT_ADMIN_TOKEN=" + frontendToken}, "brand", "list"))
		refused(t, run(t, []string{"PACT_ADDR=" + p.url, "PACT_ADMIN_TOKEN=" + frontendToken}, "brand", "get", "acme"), "permission_denied", "ERROR_REASON_PERMISSION_DENIED")
	})
}

// TestBrandCommandUsage: bad brand command lines exit 2 and change nothing.
func TestBrandCommandUsage(t *testing.T) {
	p := startPactd(t, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"brand", "create", "-name", "x"}, "name the Brand id"},
		{[]string{"brand", "create", "acme"}, "-name is required"},
		{[]string{"brand", "create", "acme", "-name", "Acme", "-scope", "no-description"}, "write ID=DESCRIPTION"},
		{[]string{"brand", "create", "acme", "-name", "Acme", "-login-mode", "magic"}, "must be signed-assertion or trusted-frontend"},
		{[]string{"brand", "update", "acme"}, "name what to change"},
		{[]string{"brand", "card"}, "missing ID"},
	} {
		r := p.cli(t, tc.args...)
		if hint := `run "pactd brand ` + tc.args[1] + ` -h" for usage`; r.code != 2 || !strings.Contains(r.stderr, tc.want) ||
			!strings.HasSuffix(r.stderr, "\n"+hint+"\n") || strings.Contains(r.stderr, "usage: pactd") {
			t.Errorf("pactd %q: exit %d, stderr:\n%s\nwant exit 2, %q and then %q, without the usage", tc.args, r.code, r.stderr, tc.want, hint)
		}
	}
	list, err := p.brands().ListBrands(t.Context(), &pactv1.ListBrandsRequest{})
	if err != nil || len(list.GetBrands()) != 0 {
		t.Fatalf("Brands after usage errors: %v, %v", list, err)
	}
	// A settings file that is not JSON is named; nothing is created.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"enabled": tru`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := p.cli(t, "brand", "create", "acme", "-name", "Acme", "-delegation-file", bad); r.code != 1 || !strings.Contains(r.stderr, "-delegation-file "+bad) {
		t.Errorf("a bad -delegation-file: exit %d\n%s", r.code, r.stderr)
	}
	p.must(t, "brand", "create", "acme", "-name", "Acme") // positive control
}

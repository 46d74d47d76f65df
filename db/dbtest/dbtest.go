// Package dbtest is the store contract suite: one set of behaviour tests that
// every engine must pass, plus helpers that give tests a real database.
package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// Factory returns a fresh, empty, migrated store for one subtest. It
// registers the store's cleanup with t.
type Factory func(t *testing.T) db.Store

// Run runs the whole contract against the engine the factory builds.
func Run(t *testing.T, newStore Factory) {
	t.Run("agents", func(t *testing.T) { t.Parallel(); testAgents(t, newStore(t)) })
	t.Run("agents/paging", func(t *testing.T) { t.Parallel(); testAgentPaging(t, newStore(t)) })
	t.Run("brands", func(t *testing.T) { t.Parallel(); testBrands(t, newStore(t)) })
	t.Run("credentials", func(t *testing.T) { t.Parallel(); testCredentials(t, newStore(t)) })
	t.Run("credentials/lifecycle", func(t *testing.T) { t.Parallel(); testCredentialLifecycle(t, newStore(t)) })
	t.Run("conversations", func(t *testing.T) { runConversations(t, newStore) })
	runKeys(t, newStore)
	runDelegation(t, newStore)
	runAuthorizationDetails(t, newStore)
	runFeed(t, newStore)
	runAudit(t, newStore)
	runWebhooks(t, newStore)
	runBrandAgents(t, newStore)
	runRegistration(t, newStore)
	runHDTP(t, newStore)
	runConsole(t, newStore)
	runHDTPHost(t, newStore)
}

// at is a fixed instant with a sub-second part that the store must drop.
var at = time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.FixedZone("X", 3600))

func mustAgent(t *testing.T, s db.Store, id, issuer string) db.Agent {
	t.Helper()
	a, err := s.CreateAgent(t.Context(), db.Agent{
		ID: id, Issuer: issuer, JWKSURI: issuer + "/jwks.json", DisplayName: "PA " + id,
		Enabled: true, CreateTime: at, UpdateTime: at,
	})
	if err != nil {
		t.Fatalf("CreateAgent(%s): %v", id, err)
	}
	return a
}

func testAgents(t *testing.T, s db.Store) {
	ctx := t.Context()
	a := mustAgent(t, s, "agt_1", "https://pa.example")
	if want := at.Truncate(time.Second).UTC(); !a.CreateTime.Equal(want) || a.CreateTime.Location() != time.UTC {
		t.Fatalf("CreateTime = %v, want %v in UTC", a.CreateTime, want)
	}
	got, err := s.GetAgent(ctx, "agt_1")
	if err != nil || got != a {
		t.Fatalf("GetAgent = %+v, %v; want %+v", got, err, a)
	}
	got, err = s.GetAgentByIssuer(ctx, "https://pa.example")
	if err != nil || got != a {
		t.Fatalf("GetAgentByIssuer = %+v, %v; want %+v", got, err, a)
	}
	// Issuers compare exactly: case and a trailing slash matter.
	for _, iss := range []string{"https://PA.example", "https://pa.example/"} {
		if _, err := s.GetAgentByIssuer(ctx, iss); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("GetAgentByIssuer(%q) err = %v, want ErrNotFound", iss, err)
		}
	}
	if _, err := s.GetAgent(ctx, "agt_missing"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetAgent(missing) err = %v, want ErrNotFound", err)
	}
	dup := a
	dup.ID = "agt_2"
	if _, err := s.CreateAgent(ctx, dup); !errors.Is(err, db.ErrConflict) {
		t.Errorf("CreateAgent(same issuer) err = %v, want ErrConflict", err)
	}
	if _, err := s.GetAgent(ctx, "agt_2"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("conflicting CreateAgent left a row: err = %v", err)
	}

	upd := a
	upd.Enabled = false
	upd.DisplayName = "Renamed"
	upd.JWKSURI = "https://pa.example/keys"
	upd.Audience = "https://provider.example/custom"
	upd.Issuer = "https://ignored.example" // the issuer is immutable
	upd.UpdateTime = at.Add(time.Hour)
	got, err = s.UpdateAgent(ctx, upd)
	if err != nil {
		t.Fatalf("UpdateAgent: %v", err)
	}
	if got.Enabled || got.DisplayName != "Renamed" || got.JWKSURI != upd.JWKSURI || got.Audience != upd.Audience ||
		got.Issuer != a.Issuer || !got.UpdateTime.Equal(upd.UpdateTime.Truncate(time.Second)) || !got.CreateTime.Equal(a.CreateTime) {
		t.Fatalf("UpdateAgent = %+v", got)
	}
	upd.ID = "agt_missing"
	if _, err := s.UpdateAgent(ctx, upd); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("UpdateAgent(missing) err = %v, want ErrNotFound", err)
	}
	if err := s.DeleteAgent(ctx, "agt_1"); err != nil {
		t.Fatalf("DeleteAgent: %v", err)
	}
	if err := s.DeleteAgent(ctx, "agt_1"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("DeleteAgent twice err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetAgentByIssuer(ctx, a.Issuer); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("deleted agent still found: %v", err)
	}
}

func testAgentPaging(t *testing.T, s db.Store) {
	for i := range 7 {
		mustAgent(t, s, fmt.Sprintf("agt_%02d", i), fmt.Sprintf("https://pa%d.example", i))
	}
	var ids []string
	after := ""
	for range 10 {
		page, err := s.ListAgents(t.Context(), after, 3)
		if err != nil {
			t.Fatalf("ListAgents: %v", err)
		}
		if len(page) > 3 {
			t.Fatalf("page of %d > limit 3", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			ids = append(ids, a.ID)
		}
		after = page[len(page)-1].ID
	}
	want := "[agt_00 agt_01 agt_02 agt_03 agt_04 agt_05 agt_06]"
	if got := fmt.Sprint(ids); got != want {
		t.Fatalf("paged ids = %s, want %s", got, want)
	}
}

func testBrands(t *testing.T, s db.Store) {
	ctx := t.Context()
	b, err := s.CreateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Acme", Description: "Support", CreateTime: at, UpdateTime: at})
	if err != nil {
		t.Fatalf("CreateBrand: %v", err)
	}
	if b.Skills == nil || len(b.Skills) != 0 {
		t.Errorf("nil skills stored as %#v, want an empty slice", b.Skills)
	}
	if _, err := s.CreateBrand(ctx, db.Brand{ID: "acme", DisplayName: "Other", CreateTime: at, UpdateTime: at}); !errors.Is(err, db.ErrConflict) {
		t.Errorf("CreateBrand(dup) err = %v, want ErrConflict", err)
	}
	b.Skills = []db.Skill{{ID: "orders", Name: "Orders", Description: "Track orders", Tags: []string{"orders"}, Examples: []string{"Where is my order?"}}}
	b.Delegation = db.Delegation{Enabled: true, Scopes: []db.Scope{{ID: "orders:read", Description: "See your orders"}}, LoginURL: "https://acme.example"}
	b.UpdateTime = at.Add(time.Minute)
	if _, err := s.UpdateBrand(ctx, b); err != nil {
		t.Fatalf("UpdateBrand: %v", err)
	}
	got, err := s.GetBrand(ctx, "acme")
	if err != nil {
		t.Fatalf("GetBrand: %v", err)
	}
	if fmt.Sprintf("%+v %+v", got.Skills, got.Delegation) != fmt.Sprintf("%+v %+v", b.Skills, b.Delegation) {
		t.Fatalf("GetBrand = %+v, want skills/delegation of %+v", got, b)
	}
	if _, err := s.GetBrand(ctx, "nope"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetBrand(missing) err = %v", err)
	}
	if _, err := s.UpdateBrand(ctx, db.Brand{ID: "nope"}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("UpdateBrand(missing) err = %v", err)
	}
	if _, err := s.CreateBrand(ctx, db.Brand{ID: "beta", DisplayName: "Beta", CreateTime: at, UpdateTime: at}); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListBrands(ctx, "", 10)
	if err != nil || len(list) != 2 || list[0].ID != "acme" || list[1].ID != "beta" {
		t.Fatalf("ListBrands = %+v, %v", list, err)
	}
	list, err = s.ListBrands(ctx, "acme", 10)
	if err != nil || len(list) != 1 || list[0].ID != "beta" {
		t.Fatalf("ListBrands(after acme) = %+v, %v", list, err)
	}
}

func testCredentials(t *testing.T, s db.Store) {
	ctx := t.Context()
	hash := bytes.Repeat([]byte{7}, 32)
	c := db.Credential{ID: "cred_1", Role: db.RoleAdmin, TokenHash: hash, Label: "bootstrap", CreateTime: at}
	created, err := s.CreateCredential(ctx, c)
	if err != nil || !created {
		t.Fatalf("CreateCredential = %v, %v", created, err)
	}
	c2 := c
	c2.ID, c2.Role = "cred_2", db.RoleFrontend
	created, err = s.CreateCredential(ctx, c2)
	if err != nil || created {
		t.Fatalf("CreateCredential(same hash) = %v, %v; want false, nil", created, err)
	}
	got, err := s.GetCredentialByHash(ctx, hash)
	if err != nil || got.ID != "cred_1" || got.Role != db.RoleAdmin {
		t.Fatalf("GetCredentialByHash = %+v, %v", got, err)
	}
	if _, err := s.GetCredentialByHash(ctx, bytes.Repeat([]byte{8}, 32)); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetCredentialByHash(unknown) err = %v", err)
	}
	for role, want := range map[db.Role]int64{db.RoleAdmin: 1, db.RoleFrontend: 0} {
		if n, err := s.CountCredentials(ctx, role); err != nil || n != want {
			t.Errorf("CountCredentials(%s) = %d, %v; want %d", role, n, err, want)
		}
	}
}

// Credential lifecycle: expiry, listing, revocation (once), revoking a
// rotated bootstrap token's predecessors, and last use kept to the minute.
func testCredentialLifecycle(t *testing.T, s db.Store) {
	ctx := t.Context()
	at := at.Truncate(time.Second) // the store keeps whole seconds
	mk := func(id string, role db.Role, b byte, label string, exp time.Time) db.Credential {
		t.Helper()
		c := db.Credential{ID: id, Role: role, TokenHash: bytes.Repeat([]byte{b}, 32), Label: label, CreateTime: at, ExpireTime: exp}
		if created, err := s.CreateCredential(ctx, c); err != nil || !created {
			t.Fatalf("CreateCredential(%s) = %v, %v", id, created, err)
		}
		return c
	}
	mk("cred_a", db.RoleAdmin, 1, "bootstrap admin", time.Time{})
	mk("cred_b", db.RoleAdmin, 2, "bootstrap admin", time.Time{})
	mk("cred_c", db.RoleAdmin, 3, "ops", at.Add(time.Hour))
	mk("cred_d", db.RoleFrontend, 4, "bootstrap admin", time.Time{}) // same label, other role: still a match by label

	got, err := s.GetCredential(ctx, "cred_c")
	if err != nil || !got.ExpireTime.Equal(at.Add(time.Hour)) || !got.RevokeTime.IsZero() || !got.LastUseTime.IsZero() || got.Label != "ops" {
		t.Fatalf("GetCredential(cred_c) = %+v, %v", got, err)
	}
	if !got.LiveAt(at.Add(time.Hour-time.Second)) || got.LiveAt(at.Add(time.Hour)) {
		t.Fatalf("LiveAt around the expiry is wrong: %+v", got)
	}
	if _, err := s.GetCredential(ctx, "cred_zz"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("GetCredential(unknown) err = %v", err)
	}
	for _, tc := range []struct {
		now  time.Time
		want int64
	}{{at, 3}, {at.Add(time.Hour), 2}} {
		if n, err := s.CountLiveCredentials(ctx, db.RoleAdmin, tc.now); err != nil || n != tc.want {
			t.Fatalf("CountLiveCredentials(admin, %v) = %d, %v; want %d", tc.now, n, err, tc.want)
		}
	}

	// Revoking the predecessors of the bootstrap token with hash 2.
	revoked, err := s.RevokeCredentialsByLabel(ctx, "bootstrap admin", bytes.Repeat([]byte{2}, 32), at.Add(time.Minute))
	slices.Sort(revoked)
	if err != nil || !slices.Equal(revoked, []string{"cred_a", "cred_d"}) {
		t.Fatalf("RevokeCredentialsByLabel = %v, %v; want cred_a and cred_d", revoked, err)
	}
	if again, err := s.RevokeCredentialsByLabel(ctx, "bootstrap admin", bytes.Repeat([]byte{2}, 32), at.Add(2*time.Minute)); err != nil || len(again) != 0 {
		t.Fatalf("RevokeCredentialsByLabel again = %v, %v; want none", again, err)
	}
	a, _ := s.GetCredentialByHash(ctx, bytes.Repeat([]byte{1}, 32))
	if !a.RevokeTime.Equal(at.Add(time.Minute)) || a.LiveAt(at.Add(time.Minute)) {
		t.Fatalf("revoked bootstrap predecessor = %+v", a)
	}

	// RevokeCredential: once; unknown and already revoked are ErrNotFound.
	r, err := s.RevokeCredential(ctx, "cred_c", at.Add(3*time.Minute))
	if err != nil || r.ID != "cred_c" || !r.RevokeTime.Equal(at.Add(3*time.Minute)) {
		t.Fatalf("RevokeCredential = %+v, %v", r, err)
	}
	for _, id := range []string{"cred_c", "cred_a", "cred_zz"} {
		if _, err := s.RevokeCredential(ctx, id, at.Add(4*time.Minute)); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("RevokeCredential(%s) err = %v; want ErrNotFound", id, err)
		}
	}
	if c, _ := s.GetCredential(ctx, "cred_c"); !c.RevokeTime.Equal(at.Add(3 * time.Minute)) {
		t.Fatalf("a second revocation moved the revoke time: %+v", c)
	}

	// Last use: recorded, then not again within the minute, then again.
	for _, tc := range []struct{ at, want time.Time }{
		{at.Add(10 * time.Minute), at.Add(10 * time.Minute)},
		{at.Add(10*time.Minute + 59*time.Second), at.Add(10 * time.Minute)},
		{at.Add(11 * time.Minute), at.Add(11 * time.Minute)},
	} {
		if err := s.TouchCredential(ctx, "cred_b", tc.at); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.GetCredential(ctx, "cred_b"); !c.LastUseTime.Equal(tc.want) {
			t.Fatalf("after a use at %v last use = %v; want %v", tc.at, c.LastUseTime, tc.want)
		}
	}

	// Listing: all four, by id, in pages.
	var ids []string
	after := ""
	for {
		page, err := s.ListCredentials(ctx, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			ids = append(ids, c.ID)
		}
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(ids, []string{"cred_a", "cred_b", "cred_c", "cred_d"}) {
		t.Fatalf("ListCredentials = %v", ids)
	}
}

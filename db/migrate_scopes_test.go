package db_test

import (
	"crypto/sha256"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	"pactd.dev/pactd/token/authzdetails"
)

// Entry types of the backfill test.
const (
	bfCancel  = "https://acme.example/authorization/order-cancel/v1"
	bfRefund  = "https://acme.example/authorization/order-refund/v1"
	bfProfile = "https://acme.example/authorization/profile-view/v1"
)

// bfRow is one row written before migration 0013 and the scopes its
// entries must be backfilled with.
type bfRow struct {
	id, brand string
	scopes    []string
	details   string
	want      []string
}

// The rows, derived from the rule the migration documents: an entry gets
// its type's scope in the Brand's declarations at migration time when that
// scope is one the row holds; otherwise (type no longer declared, or its
// scope not on the row, so the mapping cannot be the accepted one) it is
// unknown (""). The lookup is per Brand: "beta" maps the cancel type to
// another scope than "acme".
var bfRows = []bfRow{
	{"da_mixed", "acme", []string{"orders:cancel", "profile:read", "orders:read"},
		`[{"order_id":"1002","type":"` + bfCancel + `"},{"section":"email","type":"` + bfProfile + `"},{"order_id":"1003","type":"` + bfRefund + `"}]`,
		[]string{"orders:cancel", db.EntryScopeUnknown, db.EntryScopeUnknown}},
	{"da_refund", "acme", []string{"orders:write"}, `[{"order_id":"1004","type":"` + bfRefund + `"}]`, []string{"orders:write"}},
	{"da_two_same_scope", "acme", []string{"orders:cancel"},
		`[{"order_id":"1005","type":"` + bfCancel + `"},{"order_id":"1006","type":"` + bfCancel + `"}]`, []string{"orders:cancel", "orders:cancel"}},
	{"da_beta", "beta", []string{"orders:read"}, `[{"order_id":"1007","type":"` + bfCancel + `"}]`, []string{"orders:read"}},
	{"da_scope_only", "acme", []string{"orders:read"}, "", nil},
}

// TestMigration0013BackfillsEntryScopes writes device authorizations and
// grants at the latest schema, moves the schema back below 0013 (the
// column goes) and up again, and checks what the backfill recorded, on
// both engines.
func TestMigration0013BackfillsEntryScopes(t *testing.T) {
	ctx := t.Context()
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.db")
		s, err := db.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		bfSeed(t, s)
		_ = s.Close()
		sdb, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer sdb.Close()
		bfMigrate(t, func(v int64) error { return db.MigrateSQLiteTo(ctx, sdb, v) })
		s, err = db.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		bfCheck(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		u := dbtest.PostgresURL(t)
		s, err := db.Open(ctx, u, "")
		if err != nil {
			t.Fatal(err)
		}
		bfSeed(t, s)
		_ = s.Close()
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		bfMigrate(t, func(v int64) error { return db.MigratePostgresTo(ctx, pool, v) })
		s, err = db.Open(ctx, u, "")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		bfCheck(t, s)
	})
}

var bfAt = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func bfHash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

// bfSeed stores the Brands with the mapping the migration will see, and
// each row twice: as a device authorization (pending) and, for a copy, as
// the grant of an approval. The scopes written now are placeholders ("x"),
// which going below 0013 discards.
func bfSeed(t *testing.T, s db.Store) {
	t.Helper()
	ctx := t.Context()
	typ := func(uri, scope string) authzdetails.Type {
		return authzdetails.Type{Type: uri, Description: "d", Scope: scope,
			Fields: []authzdetails.Field{{Name: "order_id", Kind: authzdetails.KindString, Label: "order", Pattern: `^[0-9]{4}$`}}}
	}
	brands := map[string][]authzdetails.Type{
		// acme: cancel under orders:cancel, refund moved to orders:write,
		// the profile type removed.
		"acme": {typ(bfCancel, "orders:cancel"), typ(bfRefund, "orders:write")},
		"beta": {typ(bfCancel, "orders:read")},
	}
	for id, types := range brands {
		if _, err := s.CreateBrand(ctx, db.Brand{ID: id, DisplayName: id, CreateTime: bfAt, UpdateTime: bfAt,
			Delegation: db.Delegation{Enabled: true, AuthorizationDetailsTypes: types}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateAgent(ctx, db.Agent{ID: "agt_1", Issuer: "https://pa.example", JWKSURI: "https://pa.example/j",
		DisplayName: "PA", Enabled: true, CreateTime: bfAt, UpdateTime: bfAt}); err != nil {
		t.Fatal(err)
	}
	for _, r := range bfRows {
		var placeholder []string
		for range r.want {
			placeholder = append(placeholder, "x")
		}
		for _, id := range []string{r.id, r.id + "_g"} {
			if _, err := s.CreateDeviceAuthorization(ctx, db.DeviceAuthorization{
				ID: id, BrandID: r.brand, AgentID: "agt_1", ClientID: "https://pa.example",
				DeviceCodeHash: bfHash("d" + id), UserCodeHash: bfHash("u" + id), Scopes: r.scopes, Interval: 3 * time.Second,
				ExpiresAt: bfAt.Add(10 * time.Minute), CreateTime: bfAt, AuthorizationDetails: r.details, AuthorizationDetailsScopes: placeholder,
			}); err != nil {
				t.Fatalf("device %s: %v", id, err)
			}
		}
		if _, _, err := s.ApproveDeviceAuthorization(ctx, r.id+"_g", db.Grant{
			ID: "a2agrant_" + r.id, BrandID: r.brand, AgentID: "agt_1", ClientID: "https://pa.example", BrandUser: "user-7",
			Scopes: r.scopes, CreateTime: bfAt, ExpireTime: bfAt.Add(time.Hour),
			AuthorizationDetails: r.details, AuthorizationDetailsScopes: placeholder,
		}, bfAt.Add(time.Minute)); err != nil {
			t.Fatalf("grant %s: %v", r.id, err)
		}
	}
}

// bfMigrate goes below 0013 (12: the numbers before it may be taken by
// other migrations) and back to the latest.
func bfMigrate(t *testing.T, migrateTo func(int64) error) {
	t.Helper()
	if err := migrateTo(12); err != nil {
		t.Fatalf("migrate down to 12: %v", err)
	}
	if err := migrateTo(-1); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
}

func bfCheck(t *testing.T, s db.Store) {
	t.Helper()
	ctx := t.Context()
	for _, r := range bfRows {
		d, err := s.GetDeviceAuthorizationByDeviceCode(ctx, r.brand, bfHash("d"+r.id))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.AuthorizationDetailsScopes, r.want) || d.AuthorizationDetails != r.details {
			t.Errorf("device %s backfilled %q; want %q", r.id, d.AuthorizationDetailsScopes, r.want)
		}
		g, err := s.GetGrant(ctx, "a2agrant_"+r.id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.AuthorizationDetailsScopes, r.want) || g.AuthorizationDetails != r.details {
			t.Errorf("grant %s backfilled %q; want %q", r.id, g.AuthorizationDetailsScopes, r.want)
		}
	}
}

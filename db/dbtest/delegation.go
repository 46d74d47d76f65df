package dbtest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// runDelegation is the DelegationStore part of the contract.
func runDelegation(t *testing.T, newStore Factory) {
	t.Run("delegation/device-lifecycle", func(t *testing.T) { t.Parallel(); testDeviceLifecycle(t, newStore(t)) })
	t.Run("delegation/poll-and-slow-down", func(t *testing.T) { t.Parallel(); testDevicePoll(t, newStore(t)) })
	t.Run("delegation/decide-once", func(t *testing.T) { t.Parallel(); testDeviceDecideOnce(t, newStore(t)) })
	t.Run("delegation/concurrent-redeem", func(t *testing.T) { t.Parallel(); testDeviceConcurrentRedeem(t, newStore(t)) })
	t.Run("delegation/refresh-rotation", func(t *testing.T) { t.Parallel(); testRefreshRotation(t, newStore(t)) })
	t.Run("delegation/concurrent-rotation", func(t *testing.T) { t.Parallel(); testRefreshConcurrent(t, newStore(t)) })
	t.Run("delegation/grants", func(t *testing.T) { t.Parallel(); testGrants(t, newStore(t)) })
	t.Run("delegation/purge", func(t *testing.T) { t.Parallel(); testDelegationPurge(t, newStore(t)) })
	t.Run("delegation/brand-assertion-single-use", func(t *testing.T) { t.Parallel(); testAssertionSingleUse(t, newStore(t)) })
	t.Run("delegation/brand-assertion-concurrent", func(t *testing.T) { t.Parallel(); testAssertionConcurrent(t, newStore(t)) })
	t.Run("delegation/brand-assertion-purge", func(t *testing.T) { t.Parallel(); testAssertionPurge(t, newStore(t)) })
	t.Run("delegation/brand-assertion-use-alone", func(t *testing.T) { t.Parallel(); testAssertionUseAlone(t, newStore(t)) })
	t.Run("delegation/user-code-failures", func(t *testing.T) { t.Parallel(); testUserCodeFailures(t, newStore(t)) })
	t.Run("delegation/pending-count", func(t *testing.T) { t.Parallel(); testPendingCount(t, newStore(t)) })
}

func delegHash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

// delegationFixture creates two Brands and two agents.
func delegFixture(t *testing.T, s db.Store) {
	t.Helper()
	for _, id := range []string{"acme", "beta"} {
		if _, err := s.CreateBrand(t.Context(), db.Brand{ID: id, DisplayName: id, CreateTime: at, UpdateTime: at}); err != nil {
			t.Fatalf("CreateBrand(%s): %v", id, err)
		}
	}
	mustAgent(t, s, "agt_1", "https://pa.example")
	mustAgent(t, s, "agt_2", "https://other-pa.example")
}

func delegDevice(id, brand, agent, client string) db.DeviceAuthorization {
	return db.DeviceAuthorization{
		ID: id, BrandID: brand, AgentID: agent, ClientID: client,
		DeviceCodeHash: delegHash("dc-" + id), UserCodeHash: delegHash("uc-" + id),
		Scopes: []string{"orders:read", "orders:write"}, Interval: 3 * time.Second,
		ExpiresAt: at.Add(10 * time.Minute), CreateTime: at,
	}
}

func mustDelegDevice(t *testing.T, s db.Store, d db.DeviceAuthorization) db.DeviceAuthorization {
	t.Helper()
	got, err := s.CreateDeviceAuthorization(t.Context(), d)
	if err != nil {
		t.Fatalf("CreateDeviceAuthorization(%s): %v", d.ID, err)
	}
	return got
}

func delegGrant(id, brand, agent, client, user string, create time.Time) db.Grant {
	return db.Grant{
		ID: id, BrandID: brand, AgentID: agent, ClientID: client, BrandUser: user,
		Scopes: []string{"orders:read"}, CreateTime: create, ExpireTime: create.Add(30 * 24 * time.Hour),
	}
}

func delegRefresh(secret string, expires time.Time) db.RefreshToken {
	return db.RefreshToken{TokenHash: delegHash(secret), ExpiresAt: expires, CreateTime: at}
}

func testDeviceLifecycle(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	d := mustDelegDevice(t, s, delegDevice("da_1", "acme", "agt_1", "https://pa.example"))
	if d.Status != db.DevicePending || !d.LastPolledAt.IsZero() || d.Interval != 3*time.Second ||
		!d.ExpiresAt.Equal(at.Add(10*time.Minute).Truncate(time.Second)) || d.ExpiresAt.Location() != time.UTC ||
		fmt.Sprint(d.Scopes) != "[orders:read orders:write]" || d.BrandUser != "" || d.GrantID != "" {
		t.Fatalf("created = %+v", d)
	}
	// Either code hash clashing is a conflict and stores nothing.
	for name, mut := range map[string]func(*db.DeviceAuthorization){
		"device-code": func(x *db.DeviceAuthorization) { x.DeviceCodeHash = delegHash("dc-da_1") },
		"user-code":   func(x *db.DeviceAuthorization) { x.UserCodeHash = delegHash("uc-da_1") },
	} {
		x := delegDevice("da_dup_"+name, "acme", "agt_1", "https://pa.example")
		mut(&x)
		if _, err := s.CreateDeviceAuthorization(ctx, x); !errors.Is(err, db.ErrConflict) {
			t.Errorf("duplicate %s: err = %v, want ErrConflict", name, err)
		}
	}
	got, err := s.GetDeviceAuthorizationByDeviceCode(ctx, "acme", delegHash("dc-da_1"))
	if err != nil || got.ID != "da_1" {
		t.Fatalf("GetDeviceAuthorizationByDeviceCode = %+v, %v", got, err)
	}
	got, err = s.GetDeviceAuthorizationByUserCode(ctx, "acme", delegHash("uc-da_1"))
	if err != nil || got.ID != "da_1" {
		t.Fatalf("GetDeviceAuthorizationByUserCode = %+v, %v", got, err)
	}
	// Lookups are bound to the Brand.
	if _, err := s.GetDeviceAuthorizationByDeviceCode(ctx, "beta", delegHash("dc-da_1")); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("device code at another Brand: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetDeviceAuthorizationByUserCode(ctx, "beta", delegHash("uc-da_1")); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("user code at another Brand: err = %v, want ErrNotFound", err)
	}
	for _, id := range []string{"da_dup_device-code", "da_dup_user-code"} {
		if _, err := s.GetDeviceAuthorizationByDeviceCode(ctx, "acme", delegHash("dc-"+id)); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("a conflicting create stored %s: %v", id, err)
		}
	}
}

func testDevicePoll(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	mustDelegDevice(t, s, delegDevice("da_1", "acme", "agt_1", "https://pa.example"))
	step := 5 * time.Second
	steps := []struct {
		after    time.Duration
		want     db.PollOutcome
		interval time.Duration
	}{
		{0, db.PollPending, 3 * time.Second},                  // the first poll is always pending
		{1 * time.Second, db.PollSlowDown, 8 * time.Second},   // too early: interval grows
		{2 * time.Second, db.PollSlowDown, 13 * time.Second},  // measured from the last poll
		{15 * time.Second, db.PollPending, 13 * time.Second},  // 13 s after the last poll: on time
		{27 * time.Second, db.PollSlowDown, 18 * time.Second}, // 12 s: too early
		{45 * time.Second, db.PollPending, 18 * time.Second},  // 18 s: on time
		{45*time.Second + 400*time.Millisecond, db.PollSlowDown, 23 * time.Second},
	}
	for i, st := range steps {
		d, out, err := s.PollDeviceAuthorization(ctx, "da_1", at.Add(st.after), step)
		if err != nil || out != st.want || d.Interval != st.interval || !d.LastPolledAt.Equal(at.Add(st.after).Truncate(time.Second)) {
			t.Fatalf("poll %d (+%s) = %v, interval %s, last %v, err %v; want %v, %s", i, st.after, out, d.Interval, d.LastPolledAt, err, st.want, st.interval)
		}
	}
	if _, _, err := s.PollDeviceAuthorization(ctx, "da_missing", at, step); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("poll of unknown id: err = %v", err)
	}
	if _, err := s.DenyDeviceAuthorization(ctx, "da_1", at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.PollDeviceAuthorization(ctx, "da_1", at.Add(5*time.Minute), step); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("poll of a denied authorization: err = %v, want ErrNotFound", err)
	}
}

func testDeviceDecideOnce(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	now := at.Add(time.Minute)
	mustDelegDevice(t, s, delegDevice("da_1", "acme", "agt_1", "https://pa.example"))
	g := delegGrant("a2agrant_1", "acme", "agt_1", "https://pa.example", "user-7", now)
	d, stored, err := s.ApproveDeviceAuthorization(ctx, "da_1", g, now)
	if err != nil || d.Status != db.DeviceApproved || d.BrandUser != "user-7" || d.GrantID != "a2agrant_1" ||
		stored.ID != "a2agrant_1" || !stored.RevokeTime.IsZero() || !stored.ExpireTime.Equal(g.ExpireTime.Truncate(time.Second)) {
		t.Fatalf("Approve = %+v, %+v, %v", d, stored, err)
	}
	// A second decision of either kind matches nothing and changes nothing.
	g2 := delegGrant("a2agrant_2", "acme", "agt_1", "https://pa.example", "user-8", now)
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_1", g2, now); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("second Approve err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetGrant(ctx, "a2agrant_2"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a refused approval stored its grant: %v", err)
	}
	if _, err := s.DenyDeviceAuthorization(ctx, "da_1", now); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("Deny after approve err = %v, want ErrNotFound", err)
	}
	if got, _ := s.GetDeviceAuthorizationByDeviceCode(ctx, "acme", delegHash("dc-da_1")); got.Status != db.DeviceApproved || got.BrandUser != "user-7" {
		t.Fatalf("after refused decisions: %+v", got)
	}

	// Redeem: approved → consumed, with the first refresh token; once only.
	rt := delegRefresh("rt-1", g.ExpireTime)
	d, err = s.RedeemDeviceAuthorization(ctx, "da_1", now, rt)
	if err != nil || d.Status != db.DeviceConsumed || d.GrantID != "a2agrant_1" {
		t.Fatalf("Redeem = %+v, %v", d, err)
	}
	if got, err := s.GetRefreshToken(ctx, delegHash("rt-1")); err != nil || got.GrantID != "a2agrant_1" || !got.UsedAt.IsZero() {
		t.Fatalf("first refresh token = %+v, %v", got, err)
	}
	if _, err := s.RedeemDeviceAuthorization(ctx, "da_1", now, delegRefresh("rt-2", g.ExpireTime)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("second Redeem err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetRefreshToken(ctx, delegHash("rt-2")); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a refused redemption stored a refresh token: %v", err)
	}

	// Deny, then approve: blocked.
	mustDelegDevice(t, s, delegDevice("da_2", "acme", "agt_1", "https://pa.example"))
	if d, err := s.DenyDeviceAuthorization(ctx, "da_2", now); err != nil || d.Status != db.DeviceDenied {
		t.Fatalf("Deny = %+v, %v", d, err)
	}
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_2", delegGrant("a2agrant_3", "acme", "agt_1", "https://pa.example", "u", now), now); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("Approve after deny err = %v, want ErrNotFound", err)
	}
	if _, err := s.RedeemDeviceAuthorization(ctx, "da_2", now, delegRefresh("rt-3", now.Add(time.Hour))); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("Redeem of denied err = %v, want ErrNotFound", err)
	}

	// Expired: no decision and no redemption.
	mustDelegDevice(t, s, delegDevice("da_3", "acme", "agt_1", "https://pa.example"))
	late := at.Add(10 * time.Minute)
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_3", delegGrant("a2agrant_4", "acme", "agt_1", "https://pa.example", "u", late), late); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("Approve at expiry err = %v, want ErrNotFound", err)
	}
	if _, err := s.DenyDeviceAuthorization(ctx, "da_3", late); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("Deny at expiry err = %v, want ErrNotFound", err)
	}
	mustDelegDevice(t, s, delegDevice("da_4", "acme", "agt_1", "https://pa.example"))
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_4", delegGrant("a2agrant_5", "acme", "agt_1", "https://pa.example", "u", now), now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RedeemDeviceAuthorization(ctx, "da_4", late, delegRefresh("rt-4", late.Add(time.Hour))); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("Redeem at expiry err = %v, want ErrNotFound", err)
	}
}

func testDeviceConcurrentRedeem(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	now := at.Add(time.Minute)
	mustDelegDevice(t, s, delegDevice("da_1", "acme", "agt_1", "https://pa.example"))
	g := delegGrant("a2agrant_1", "acme", "agt_1", "https://pa.example", "user-7", now)
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_1", g, now); err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wins, lost atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.RedeemDeviceAuthorization(ctx, "da_1", now, delegRefresh(fmt.Sprintf("rt-%d", i), g.ExpireTime))
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, db.ErrNotFound):
				lost.Add(1)
			default:
				t.Errorf("redeem %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || lost.Load() != n-1 {
		t.Fatalf("%d concurrent redemptions: %d won, %d lost; want exactly 1 winner", n, wins.Load(), lost.Load())
	}
	stored := 0
	for i := range n {
		if _, err := s.GetRefreshToken(ctx, delegHash(fmt.Sprintf("rt-%d", i))); err == nil {
			stored++
		}
	}
	if stored != 1 {
		t.Fatalf("%d refresh tokens stored, want 1", stored)
	}
}

// rotationFixture makes a live grant of agt_1 at acme with refresh token "rt-0".
func delegRotationFixture(t *testing.T, s db.Store, now time.Time) db.Grant {
	t.Helper()
	delegFixture(t, s)
	mustDelegDevice(t, s, delegDevice("da_1", "acme", "agt_1", "https://pa.example"))
	g := delegGrant("a2agrant_1", "acme", "agt_1", "https://pa.example", "user-7", now)
	if _, _, err := s.ApproveDeviceAuthorization(t.Context(), "da_1", g, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RedeemDeviceAuthorization(t.Context(), "da_1", now, delegRefresh("rt-0", g.ExpireTime)); err != nil {
		t.Fatal(err)
	}
	return g
}

func testRefreshRotation(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Add(time.Minute)
	g := delegRotationFixture(t, s, now)
	const brand, client = "acme", "https://pa.example"

	// Another Brand or client cannot use the token, and does not burn it.
	for name, bc := range map[string][2]string{"other-brand": {"beta", client}, "other-client": {brand, "https://other-pa.example"}} {
		if _, err := s.RotateRefreshToken(ctx, delegHash("rt-0"), bc[0], bc[1], now, delegRefresh("rt-x-"+name, g.ExpireTime)); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("%s: err = %v, want ErrNotFound", name, err)
		}
	}
	if rt, _ := s.GetRefreshToken(ctx, delegHash("rt-0")); !rt.UsedAt.IsZero() {
		t.Fatalf("a refused rotation burned the token: %+v", rt)
	}

	next, err := s.RotateRefreshToken(ctx, delegHash("rt-0"), brand, client, now, delegRefresh("rt-1", g.ExpireTime))
	if err != nil || next.GrantID != g.ID || !bytes.Equal(next.TokenHash, delegHash("rt-1")) {
		t.Fatalf("rotate = %+v, %v", next, err)
	}
	old, err := s.GetRefreshToken(ctx, delegHash("rt-0"))
	if err != nil || !old.UsedAt.Equal(now.Truncate(time.Second)) {
		t.Fatalf("old token after rotation = %+v, %v; want used at %v", old, err, now)
	}
	// Reuse of the old token: refused, nothing stored.
	if _, err := s.RotateRefreshToken(ctx, delegHash("rt-0"), brand, client, now, delegRefresh("rt-2", g.ExpireTime)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("reuse err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetRefreshToken(ctx, delegHash("rt-2")); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a refused rotation stored its successor: %v", err)
	}
	// An expired token, or one whose grant is expired or revoked, is refused.
	if _, err := s.RotateRefreshToken(ctx, delegHash("rt-1"), brand, client, g.ExpireTime, delegRefresh("rt-3", g.ExpireTime)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("rotation at expiry err = %v, want ErrNotFound", err)
	}
	if revoked, err := s.RevokeGrant(ctx, g.ID, now); err != nil || !revoked {
		t.Fatalf("RevokeGrant = %v, %v", revoked, err)
	}
	if _, err := s.RotateRefreshToken(ctx, delegHash("rt-1"), brand, client, now, delegRefresh("rt-4", g.ExpireTime)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("rotation of a revoked grant err = %v, want ErrNotFound", err)
	}
	if rt, _ := s.GetRefreshToken(ctx, delegHash("rt-1")); !rt.UsedAt.IsZero() {
		t.Fatalf("refused rotations burned rt-1: %+v", rt)
	}
	if _, err := s.RotateRefreshToken(ctx, delegHash("rt-unknown"), brand, client, now, delegRefresh("rt-5", g.ExpireTime)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("unknown token err = %v, want ErrNotFound", err)
	}
}

func testRefreshConcurrent(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Add(time.Minute)
	g := delegRotationFixture(t, s, now)
	const n = 20
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.RotateRefreshToken(ctx, delegHash("rt-0"), "acme", "https://pa.example", now, delegRefresh(fmt.Sprintf("rt-%d", i+1), g.ExpireTime))
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, db.ErrNotFound):
				t.Errorf("rotation %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d concurrent rotations: %d succeeded, want exactly 1", n, wins.Load())
	}
}

func testGrants(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	// Grants are created directly through approvals, oldest first.
	ids := []string{"a2agrant_01", "a2agrant_02", "a2agrant_03", "a2agrant_04", "a2agrant_05"}
	for i, id := range ids {
		da := delegDevice(fmt.Sprintf("da_%d", i), "acme", "agt_1", "https://pa.example")
		user := "user-7"
		if i == 2 {
			da.AgentID, da.ClientID = "agt_2", "https://other-pa.example"
		}
		mustDelegDevice(t, s, da)
		g := delegGrant(id, "acme", da.AgentID, da.ClientID, user, at.Add(time.Duration(i)*time.Minute))
		if _, _, err := s.ApproveDeviceAuthorization(ctx, da.ID, g, at); err != nil {
			t.Fatal(err)
		}
	}
	// Another user and another Brand are not listed.
	da := delegDevice("da_other", "beta", "agt_1", "https://pa.example")
	mustDelegDevice(t, s, da)
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_other", delegGrant("a2agrant_09", "beta", "agt_1", "https://pa.example", "user-7", at), at); err != nil {
		t.Fatal(err)
	}

	var got []string
	before := ""
	for range 10 {
		page, err := s.ListGrants(ctx, "acme", "user-7", before, 2)
		if err != nil {
			t.Fatalf("ListGrants: %v", err)
		}
		if len(page) == 0 {
			break
		}
		for _, g := range page {
			got = append(got, g.ID)
			want := "PA agt_1"
			if g.ID == "a2agrant_03" {
				want = "PA agt_2"
			}
			if g.AgentDisplayName != want || g.BrandID != "acme" {
				t.Fatalf("listed grant %+v; want agent display name %q", g, want)
			}
		}
		before = page[len(page)-1].ID
	}
	if fmt.Sprint(got) != "[a2agrant_05 a2agrant_04 a2agrant_03 a2agrant_02 a2agrant_01]" {
		t.Fatalf("ListGrants newest first = %v", got)
	}
	if page, err := s.ListGrants(ctx, "acme", "user-8", "", 10); err != nil || len(page) != 0 {
		t.Fatalf("ListGrants(other user) = %v, %v", page, err)
	}

	now := at.Add(time.Hour)
	g, err := s.GetGrant(ctx, "a2agrant_01")
	if err != nil {
		t.Fatal(err)
	}
	live := func(grant, brand, client, user string, when time.Time) bool {
		t.Helper()
		ok, err := s.GrantLiveAt(ctx, grant, brand, client, user, when)
		if err != nil {
			t.Fatalf("GrantLiveAt: %v", err)
		}
		return ok
	}
	if !live(g.ID, "acme", "https://pa.example", "user-7", now) {
		t.Fatal("positive control: a fresh grant is not live")
	}
	for name, c := range map[string][4]string{
		"other-brand":  {g.ID, "beta", "https://pa.example", "user-7"},
		"other-client": {g.ID, "acme", "https://other-pa.example", "user-7"},
		"other-user":   {g.ID, "acme", "https://pa.example", "user-8"},
		"unknown":      {"a2agrant_nope", "acme", "https://pa.example", "user-7"},
	} {
		if live(c[0], c[1], c[2], c[3], now) {
			t.Errorf("%s: grant reported live", name)
		}
	}
	if live(g.ID, "acme", "https://pa.example", "user-7", g.ExpireTime) {
		t.Error("grant live at its expiry time")
	}
	if revoked, err := s.RevokeGrant(ctx, g.ID, now); err != nil || !revoked {
		t.Fatalf("RevokeGrant = %v, %v", revoked, err)
	}
	if revoked, err := s.RevokeGrant(ctx, g.ID, now.Add(time.Hour)); err != nil || revoked {
		t.Fatalf("RevokeGrant twice = %v, %v; want false, nil", revoked, err)
	}
	if g2, _ := s.GetGrant(ctx, g.ID); !g2.RevokeTime.Equal(now.Truncate(time.Second)) {
		t.Fatalf("revoke time = %v, want the first revocation %v", g2.RevokeTime, now)
	}
	if live(g.ID, "acme", "https://pa.example", "user-7", now) {
		t.Fatal("revoked grant reported live")
	}
	if _, err := s.RevokeGrant(ctx, "a2agrant_nope", now); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("RevokeGrant(unknown) err = %v, want ErrNotFound", err)
	}

	// GrantLive judges by the wall clock: a grant made now is live, the
	// revoked one is not.
	wall := time.Now()
	mustDelegDevice(t, s, delegDevice("da_wall", "acme", "agt_1", "https://pa.example"))
	if _, _, err := s.ApproveDeviceAuthorization(ctx, "da_wall", delegGrant("a2agrant_10", "acme", "agt_1", "https://pa.example", "user-7", wall), at); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.GrantLiveAt(ctx, "a2agrant_10", "acme", "https://pa.example", "user-7", time.Now()); err != nil || !ok {
		t.Fatalf("GrantLiveAt(fresh) = %v, %v; want true", ok, err)
	}
	if ok, err := s.GrantLiveAt(ctx, g.ID, "acme", "https://pa.example", "user-7", time.Now()); err != nil || ok {
		t.Fatalf("GrantLiveAt(revoked) = %v, %v; want false", ok, err)
	}
}

func testDelegationPurge(t *testing.T, s db.Store) {
	ctx := t.Context()
	now := at.Add(time.Minute)
	g := delegRotationFixture(t, s, now)
	mustDelegDevice(t, s, delegDevice("da_2", "acme", "agt_1", "https://pa.example"))
	n, err := s.PurgeExpiredDelegation(ctx, now)
	if err != nil || n != 0 {
		t.Fatalf("purge before expiry = %d, %v; want 0", n, err)
	}
	n, err = s.PurgeExpiredDelegation(ctx, at.Add(10*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("purge at device expiry = %d, %v; want the 2 device authorizations", n, err)
	}
	if _, err := s.GetRefreshToken(ctx, delegHash("rt-0")); err != nil {
		t.Fatalf("an unexpired refresh token was purged: %v", err)
	}
	if n, err := s.PurgeExpiredDelegation(ctx, g.ExpireTime); err != nil || n != 1 {
		t.Fatalf("purge at grant expiry = %d, %v; want the refresh token", n, err)
	}
}

func delegAssertion(brand, jti string, expire time.Time) db.BrandAssertionUse {
	return db.BrandAssertionUse{BrandID: brand, JTI: jti, ExpireTime: expire}
}

// testAssertionSingleUse: a Brand assertion's jti decides at most one
// authorization; a replay, or a decision that fails, changes nothing.
func testAssertionSingleUse(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	now := at.Add(time.Minute)
	exp := now.Truncate(time.Second).Add(2 * time.Minute) // whole seconds
	for _, id := range []string{"da_1", "da_2", "da_3", "da_4", "da_5", "da_6"} {
		mustDelegDevice(t, s, delegDevice(id, "acme", "agt_1", "https://pa.example"))
	}
	mustDelegDevice(t, s, delegDevice("db_1", "beta", "agt_1", "https://pa.example"))

	// ok: the first use approves and stores the grant.
	g := delegGrant("a2agrant_1", "acme", "agt_1", "https://pa.example", "user-7", now)
	d, stored, err := s.ApproveDeviceAuthorizationWithAssertion(ctx, "da_1", g, delegAssertion("acme", "jti-1", exp), now)
	if err != nil || d.Status != db.DeviceApproved || d.BrandUser != "user-7" || stored.ID != "a2agrant_1" {
		t.Fatalf("first use = %+v, %+v, %v", d, stored, err)
	}
	// fail: the same jti again, for another pending authorization, approve
	// or deny: ErrAssertionReplayed (an ErrConflict), nothing stored.
	g2 := delegGrant("a2agrant_2", "acme", "agt_1", "https://pa.example", "user-7", now)
	if _, _, err := s.ApproveDeviceAuthorizationWithAssertion(ctx, "da_2", g2, delegAssertion("acme", "jti-1", exp), now); !errors.Is(err, db.ErrAssertionReplayed) || !errors.Is(err, db.ErrConflict) {
		t.Fatalf("replayed approve err = %v, want ErrAssertionReplayed", err)
	}
	if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_2", delegAssertion("acme", "jti-1", exp), now); !errors.Is(err, db.ErrAssertionReplayed) {
		t.Fatalf("replayed deny err = %v, want ErrAssertionReplayed", err)
	}
	if _, err := s.GetGrant(ctx, "a2agrant_2"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a replay stored its grant: %v", err)
	}
	if got, _ := s.GetDeviceAuthorizationByDeviceCode(ctx, "acme", delegHash("dc-da_2")); got.Status != db.DevicePending {
		t.Fatalf("a replay decided da_2: %+v", got)
	}
	// ok: the jti is per Brand; another Brand may use the same one.
	if d, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "db_1", delegAssertion("beta", "jti-1", exp), now); err != nil || d.Status != db.DeviceDenied {
		t.Fatalf("same jti at another Brand = %+v, %v", d, err)
	}

	// fail: a decision that fails (not pending) does not use the assertion
	// up: the same jti then decides a pending authorization.
	if _, _, err := s.ApproveDeviceAuthorizationWithAssertion(ctx, "da_1", delegGrant("a2agrant_3", "acme", "agt_1", "https://pa.example", "u", now), delegAssertion("acme", "jti-2", exp), now); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("approve of a decided authorization err = %v, want ErrNotFound", err)
	}
	if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_1", delegAssertion("acme", "jti-2", exp), now); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("deny of a decided authorization err = %v, want ErrNotFound", err)
	}
	if d, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_3", delegAssertion("acme", "jti-2", exp), now); err != nil || d.Status != db.DeviceDenied {
		t.Fatalf("jti after a failed decision = %+v, %v; want it unused", d, err)
	}
	if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_4", delegAssertion("acme", "jti-2", exp), now); !errors.Is(err, db.ErrAssertionReplayed) {
		t.Fatalf("jti-2 reused err = %v, want ErrAssertionReplayed", err)
	}

	// The record lives through its expire time (inclusive) and may be taken
	// over after it: an expired record guards nothing.
	if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_4", delegAssertion("acme", "jti-1", exp.Add(time.Minute)), exp); !errors.Is(err, db.ErrAssertionReplayed) {
		t.Fatalf("jti at its expire time err = %v, want ErrAssertionReplayed", err)
	}
	late := exp.Add(time.Second)
	if d, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_4", delegAssertion("acme", "jti-1", late.Add(time.Minute)), late); err != nil || d.Status != db.DeviceDenied {
		t.Fatalf("jti after its expire time = %+v, %v; want recorded anew", d, err)
	}
	if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_5", delegAssertion("acme", "jti-1", late.Add(time.Minute)), late); !errors.Is(err, db.ErrAssertionReplayed) {
		t.Fatalf("jti taken over, reused err = %v, want ErrAssertionReplayed", err)
	}
	// An expire time inside a second is rounded up, never down.
	if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_5", delegAssertion("acme", "jti-3", exp.Add(500*time.Millisecond)), now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_6", delegAssertion("acme", "jti-3", late.Add(time.Minute)), late); !errors.Is(err, db.ErrAssertionReplayed) {
		t.Fatalf("jti-3 one second after its fractional expire time err = %v, want ErrAssertionReplayed (rounded up)", err)
	}
	// The plain decisions still work beside the assertion ones.
	if d, err := s.DenyDeviceAuthorization(ctx, "da_6", now); err != nil || d.Status != db.DeviceDenied {
		t.Fatalf("plain deny = %+v, %v", d, err)
	}
}

// testAssertionConcurrent: one assertion posted many times at once, for the
// same or different authorizations, decides exactly one.
func testAssertionConcurrent(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	now := at.Add(time.Minute)
	const n = 20
	for i := range n {
		mustDelegDevice(t, s, delegDevice(fmt.Sprintf("da_%d", i), "acme", "agt_1", "https://pa.example"))
	}
	var wins, replays atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("da_%d", i%2) // two authorizations, ten tries each
			g := delegGrant(fmt.Sprintf("a2agrant_%d", i), "acme", "agt_1", "https://pa.example", "user-7", now)
			_, _, err := s.ApproveDeviceAuthorizationWithAssertion(ctx, id, g, delegAssertion("acme", "jti-race", now.Add(time.Minute)), now)
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, db.ErrAssertionReplayed):
				replays.Add(1)
			default:
				t.Errorf("approve %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || replays.Load() != n-1 {
		t.Fatalf("%d concurrent uses of one assertion: %d approved, %d replays; want exactly 1 approval", n, wins.Load(), replays.Load())
	}
	grants := 0
	for i := range n {
		if _, err := s.GetGrant(ctx, fmt.Sprintf("a2agrant_%d", i)); err == nil {
			grants++
		}
	}
	if grants != 1 {
		t.Fatalf("%d grants stored, want 1", grants)
	}
}

// testAssertionPurge: the purge drops used assertions after their expire
// time (and counts them), never before.
func testAssertionPurge(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	now := at.Add(time.Minute)
	exp := at.Truncate(time.Second).Add(time.Hour) // whole seconds, beyond the device authorizations' expiry
	for i, id := range []string{"da_1", "da_2"} {
		mustDelegDevice(t, s, delegDevice(id, "acme", "agt_1", "https://pa.example"))
		if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, id, delegAssertion("acme", fmt.Sprintf("jti-%d", i), exp.Add(time.Duration(i)*time.Minute)), now); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.PurgeExpiredDelegation(ctx, at.Add(10*time.Minute)); err != nil || n != 2 {
		t.Fatalf("purge at device expiry = %d, %v; want the 2 device authorizations only", n, err)
	}
	if n, err := s.PurgeExpiredDelegation(ctx, exp); err != nil || n != 0 {
		t.Fatalf("purge at the first assertion's expire time = %d, %v; want 0 (kept through it)", n, err)
	}
	if n, err := s.PurgeExpiredDelegation(ctx, exp.Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("purge after the first assertion's expire time = %d, %v; want 1", n, err)
	}
	if n, err := s.PurgeExpiredDelegation(ctx, exp.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("purge after both = %d, %v; want 1", n, err)
	}
}

// testAssertionUseAlone: UseBrandAssertion records a jti once per Brand,
// shares the record with the decisions' single use, and takes over only an
// expired record.
func testAssertionUseAlone(t *testing.T, s db.Store) {
	ctx := t.Context()
	delegFixture(t, s)
	now := at.Add(time.Minute)
	exp := now.Truncate(time.Second).Add(2 * time.Minute)
	mustDelegDevice(t, s, delegDevice("da_1", "acme", "agt_1", "https://pa.example"))
	// ok: the first use.
	if err := s.UseBrandAssertion(ctx, delegAssertion("acme", "jti-1", exp), now); err != nil {
		t.Fatalf("first use: %v", err)
	}
	// fail: again, alone or with a decision: ErrAssertionReplayed, and the
	// decision is not made.
	if err := s.UseBrandAssertion(ctx, delegAssertion("acme", "jti-1", exp), now); !errors.Is(err, db.ErrAssertionReplayed) {
		t.Fatalf("second use err = %v, want ErrAssertionReplayed", err)
	}
	if _, err := s.DenyDeviceAuthorizationWithAssertion(ctx, "da_1", delegAssertion("acme", "jti-1", exp), now); !errors.Is(err, db.ErrAssertionReplayed) {
		t.Fatalf("decision with a used jti err = %v, want ErrAssertionReplayed", err)
	}
	if got, _ := s.GetDeviceAuthorizationByDeviceCode(ctx, "acme", delegHash("dc-da_1")); got.Status != db.DevicePending {
		t.Fatalf("a replay decided da_1: %+v", got)
	}
	// ok: per Brand; and an expired record is taken over.
	if err := s.UseBrandAssertion(ctx, delegAssertion("beta", "jti-1", exp), now); err != nil {
		t.Fatalf("same jti at another Brand: %v", err)
	}
	late := exp.Add(time.Second)
	if err := s.UseBrandAssertion(ctx, delegAssertion("acme", "jti-1", late.Add(time.Minute)), late); err != nil {
		t.Fatalf("after its expire time: %v", err)
	}
	if err := s.UseBrandAssertion(ctx, delegAssertion("acme", "jti-1", late.Add(time.Minute)), late); !errors.Is(err, db.ErrAssertionReplayed) {
		t.Fatalf("taken over, reused err = %v, want ErrAssertionReplayed", err)
	}
}

// User-code failure counters: concurrent additions each see a distinct
// count, removal never goes below zero, scopes and windows are separate,
// and the purge drops windows older than an hour.
func testUserCodeFailures(t *testing.T, s db.Store) {
	ctx := t.Context()
	w := at.Truncate(time.Minute)
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			n, err := s.AddUserCodeFailure(ctx, "brand:acme", w)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen[n] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	for n := int64(1); n <= 20; n++ {
		if !seen[n] {
			t.Fatalf("20 concurrent additions saw counts %v; want each of 1..20 once", seen)
		}
	}
	if err := s.RemoveUserCodeFailure(ctx, "brand:acme", w); err != nil {
		t.Fatal(err)
	}
	if n, err := s.AddUserCodeFailure(ctx, "brand:acme", w); err != nil || n != 20 {
		t.Fatalf("after one removal the next addition = %d, %v; want 20", n, err)
	}
	for _, other := range []struct {
		scope string
		w     time.Time
	}{{"brand:beta", w}, {"brand:acme", w.Add(time.Minute)}} {
		if n, err := s.AddUserCodeFailure(ctx, other.scope, other.w); err != nil || n != 1 {
			t.Fatalf("AddUserCodeFailure(%s, %v) = %d, %v; want a fresh count", other.scope, other.w, n, err)
		}
	}
	// Removal never goes below zero, and of an absent window is a no-op.
	for range 3 {
		if err := s.RemoveUserCodeFailure(ctx, "brand:beta", w); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveUserCodeFailure(ctx, "brand:none", w); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.AddUserCodeFailure(ctx, "brand:beta", w); n != 1 {
		t.Fatalf("after removals past zero the count is %d, want 1", n)
	}
	// The purge drops windows that started more than an hour ago.
	if _, err := s.PurgeExpiredDelegation(ctx, w.Add(time.Hour+30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.AddUserCodeFailure(ctx, "brand:acme", w); n != 1 {
		t.Fatalf("the purged window still counts %d", n-1)
	}
	if n, _ := s.AddUserCodeFailure(ctx, "brand:acme", w.Add(time.Minute)); n != 2 {
		t.Fatalf("the window an hour old was purged too (count %d, want 2)", n)
	}
}

// Pending device authorizations are counted per agent and per (agent,
// Brand); decided and expired ones do not count.
func testPendingCount(t *testing.T, s db.Store) {
	delegFixture(t, s)
	ctx := t.Context()
	for _, d := range []db.DeviceAuthorization{
		delegDevice("da_p1", "acme", "agt_1", "https://pa.example"),
		delegDevice("da_p2", "acme", "agt_1", "https://pa.example"),
		delegDevice("da_p3", "beta", "agt_1", "https://pa.example"),
		delegDevice("da_p4", "acme", "agt_2", "https://pb.example"),
		delegDevice("da_denied", "acme", "agt_1", "https://pa.example"),
	} {
		mustDelegDevice(t, s, d)
	}
	if _, err := s.DenyDeviceAuthorization(ctx, "da_denied", at); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agent, brand   string
		now            time.Time
		total, atBrand int64
	}{
		{"agt_1", "acme", at, 3, 2},
		{"agt_1", "beta", at, 3, 1},
		{"agt_2", "acme", at, 1, 1},
		{"agt_1", "acme", at.Add(10 * time.Minute), 0, 0}, // all expired
	} {
		total, atBrand, err := s.CountPendingDeviceAuthorizations(ctx, tc.agent, tc.brand, tc.now)
		if err != nil || total != tc.total || atBrand != tc.atBrand {
			t.Fatalf("CountPendingDeviceAuthorizations(%s, %s, %v) = %d, %d, %v; want %d, %d", tc.agent, tc.brand, tc.now, total, atBrand, err, tc.total, tc.atBrand)
		}
	}
}

package console

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// The lifetimes on a clock the test moves: a session lives while used,
// ends IdleLifetime after its last recorded use and AbsoluteLifetime after
// sign-in whatever the use, and with its credential.
func TestSessionLifetimes(t *testing.T) {
	store := dbtest.Open(t, "", t.TempDir())
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := start
	s := sessions{store: store, now: func() time.Time { return now }}
	ctx := t.Context()
	cred := db.Credential{ID: "cred_op", Role: db.RoleAdmin, TokenHash: []byte("0123456789abcdef0123456789abcdef"), Label: "op", CreateTime: start}
	if _, err := store.CreateCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	open := func() string {
		t.Helper()
		id, err := s.open(ctx, cred.ID)
		if err != nil || !wellFormedID(id) {
			t.Fatalf("open = %q, %v", id, err)
		}
		return id
	}
	live := func(id string) bool {
		t.Helper()
		_, err := s.check(ctx, id)
		if err != nil && !errors.Is(err, errNoSession) {
			t.Fatal(err)
		}
		return err == nil
	}

	// Used every 10 minutes, a session lives until the absolute end.
	id := open()
	for now = start; now.Before(start.Add(AbsoluteLifetime)); now = now.Add(10 * time.Minute) {
		if !live(id) {
			t.Fatalf("ok/used-session ended at %v", now.Sub(start))
		}
	}
	now = start.Add(AbsoluteLifetime)
	if live(id) {
		t.Fatalf("the session outlived AbsoluteLifetime")
	}

	// Idle: alive 14 minutes after the last use, ended at 15.
	id = open()
	t0 := now
	if now = t0.Add(14 * time.Minute); !live(id) {
		t.Fatalf("ok/idle-14m: ended")
	}
	if now = now.Add(IdleLifetime); live(id) {
		t.Fatalf("the session outlived IdleLifetime after its last use")
	}
	// Ended sessions are deleted: checking again, even back in time, fails.
	if now = t0; live(id) {
		t.Fatalf("an ended session came back")
	}

	// The credential: revoked, expired or not admin ends it.
	id = open()
	if _, err := store.RevokeCredential(ctx, cred.ID, now); err != nil {
		t.Fatal(err)
	}
	if live(id) {
		t.Fatalf("the session outlived its credential's revocation")
	}

	// Malformed ids never reach the store; ending twice is no error.
	for _, bad := range []string{"", "short", strings.Repeat("a", 42) + "=", strings.Repeat("a", 44)} {
		if live(bad) {
			t.Fatalf("id %q is live", bad)
		}
	}
	if err := s.end(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := s.end(ctx, id); err != nil {
		t.Fatalf("ending twice: %v", err)
	}
}

// The anti-forgery token belongs to its session and differs between
// sessions.
func TestCSRFToken(t *testing.T) {
	a, b := newRandomID(), newRandomID()
	again := csrfToken(a)
	if csrfToken(a) != again || csrfToken(a) == csrfToken(b) || len(csrfToken(a)) != 43 || strings.Contains(csrfToken(a), a) {
		t.Fatalf("csrf tokens %q %q", csrfToken(a), csrfToken(b))
	}
	if tokenEqual(csrfToken(a), csrfToken(b)) || !tokenEqual(csrfToken(a), csrfToken(a)) || tokenEqual("", csrfToken(a)) {
		t.Fatal("tokenEqual")
	}
}

// FuzzParseScopes: whatever the form sends, parseScopes never panics, and
// what it reads survives formatScopes and a second read unchanged.
func FuzzParseScopes(f *testing.F) {
	for _, s := range []string{"orders:read = See your orders\norders:cancel=Cancel them", "", "=", "a=b=c\r\n\n x = y ", "no equals sign", strings.Repeat("a=b\n", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := parseScopes(text)
		if err != nil {
			return
		}
		again, err := parseScopes(formatScopes(got))
		if err != nil || len(again) != len(got) {
			t.Fatalf("formatScopes(%q) reads back as %v, %v", text, again, err)
		}
		for i := range got {
			if again[i].GetId() != got[i].GetId() || again[i].GetDescription() != got[i].GetDescription() || strings.Contains(got[i].GetId(), "=") {
				t.Fatalf("scope %d: %v then %v", i, got[i], again[i])
			}
		}
	})
}

// A grant is live until its expiry, expired from it, revoked once revoked.
func TestGrantState(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	d := grantListData{Now: now}
	for _, c := range []struct {
		expire  time.Time
		revoked bool
		want    string
	}{{now.Add(time.Second), false, "live"}, {now, false, "expired"}, {now.Add(-time.Hour), false, "expired"}, {now.Add(time.Hour), true, "revoked"}} {
		g := &pactv1.Grant{ExpireTime: timestamppb.New(c.expire)}
		if c.revoked {
			g.RevokeTime = timestamppb.New(now)
		}
		if got := d.State(g); got != c.want {
			t.Errorf("State(expire %v, revoked %v) = %q, want %q", c.expire.Sub(now), c.revoked, got, c.want)
		}
	}
}

package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"pactd.dev/pactd/db"
)

// runKeys is the KeyStore part of the contract.
func runKeys(t *testing.T, newStore Factory) {
	t.Run("keys/add-list-retire", func(t *testing.T) { t.Parallel(); testKeysLifecycle(t, newStore(t)) })
	t.Run("keys/conflict-changes-nothing", func(t *testing.T) { t.Parallel(); testKeysConflict(t, newStore(t)) })
	t.Run("keys/concurrent-first-key", func(t *testing.T) { t.Parallel(); testKeysConcurrent(t, newStore(t)) })
}

func signingKey(seq int64, activate time.Time) db.SigningKey {
	return db.SigningKey{
		KID: fmt.Sprintf("kid-%d", seq), Seq: seq, Alg: "ES256",
		PublicJWK:        fmt.Sprintf(`{"kty":"EC","crv":"P-256","x":"x%d","y":"y%d"}`, seq, seq),
		SealedPrivateKey: append([]byte{1, 0, 0xff}, bytes.Repeat([]byte{byte(seq)}, 40)...),
		CreateTime:       at, ActivateTime: activate,
	}
}

func kids(ks []db.SigningKey) string {
	var b bytes.Buffer
	for i, k := range ks {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k.KID)
	}
	return b.String()
}

func testKeysLifecycle(t *testing.T, s db.Store) {
	ctx := t.Context()
	sec := at.Truncate(time.Second).UTC()
	list, err := s.ListPublishedSigningKeys(ctx, at)
	if err != nil || len(list) != 0 || list == nil {
		t.Fatalf("ListPublishedSigningKeys(empty) = %#v, %v; want an empty, non-nil list", list, err)
	}

	k1 := signingKey(1, at)
	if err := s.AddSigningKey(ctx, k1, at.Add(time.Hour)); err != nil {
		t.Fatalf("AddSigningKey(1): %v", err)
	}
	list, err = s.ListPublishedSigningKeys(ctx, at)
	if err != nil || len(list) != 1 {
		t.Fatalf("after the first key: %v, %v", kids(list), err)
	}
	got := list[0]
	if got.KID != k1.KID || got.Seq != 1 || got.Alg != "ES256" || got.PublicJWK != k1.PublicJWK ||
		!bytes.Equal(got.SealedPrivateKey, k1.SealedPrivateKey) ||
		!got.CreateTime.Equal(sec) || got.CreateTime.Location() != time.UTC || !got.ActivateTime.Equal(sec) ||
		!got.RetireTime.IsZero() || !got.ExpireTime.IsZero() {
		t.Fatalf("stored key = %+v, want %+v with times at whole seconds, zero retire/expire", got, k1)
	}

	// A second key retires the first at its own activation; the first
	// stays published until the expiry given.
	act2 := at.Add(5 * time.Minute)
	exp1 := act2.Add(65 * time.Minute)
	if err := s.AddSigningKey(ctx, signingKey(2, act2), exp1); err != nil {
		t.Fatalf("AddSigningKey(2): %v", err)
	}
	list, err = s.ListPublishedSigningKeys(ctx, at)
	if err != nil || kids(list) != "kid-1 kid-2" {
		t.Fatalf("after rotation: %q, %v; want kid-1 kid-2 in seq order", kids(list), err)
	}
	if r, e := list[0].RetireTime, list[0].ExpireTime; !r.Equal(act2.Truncate(time.Second)) || !e.Equal(exp1.Truncate(time.Second)) {
		t.Fatalf("retired key times = %v / %v, want %v / %v", r, e, act2, exp1)
	}
	if !list[1].RetireTime.IsZero() || !list[1].ExpireTime.IsZero() {
		t.Fatalf("new key is retired: %+v", list[1])
	}

	// A third key while the second is still pending retires only the
	// second; the first keeps the times it had.
	act3 := at.Add(10 * time.Minute)
	exp2 := act3.Add(65 * time.Minute)
	if err := s.AddSigningKey(ctx, signingKey(3, act3), exp2); err != nil {
		t.Fatalf("AddSigningKey(3): %v", err)
	}
	list, err = s.ListPublishedSigningKeys(ctx, at)
	if err != nil || kids(list) != "kid-1 kid-2 kid-3" {
		t.Fatalf("after second rotation: %q, %v", kids(list), err)
	}
	if !list[0].ExpireTime.Equal(exp1.Truncate(time.Second)) || !list[1].RetireTime.Equal(act3.Truncate(time.Second)) ||
		!list[1].ExpireTime.Equal(exp2.Truncate(time.Second)) {
		t.Fatalf("retire times after second rotation: %+v", list[:2])
	}

	// Published means ExpireTime unset or after now: at exp1 the first key
	// is gone, a second earlier it is still there.
	list, err = s.ListPublishedSigningKeys(ctx, exp1.Add(-time.Second))
	if err != nil || kids(list) != "kid-1 kid-2 kid-3" {
		t.Fatalf("just before expiry: %q, %v", kids(list), err)
	}
	list, err = s.ListPublishedSigningKeys(ctx, exp1)
	if err != nil || kids(list) != "kid-2 kid-3" {
		t.Fatalf("at expiry: %q, %v; want kid-2 kid-3", kids(list), err)
	}

	// Deleting expired keys removes exactly those.
	n, err := s.DeleteExpiredSigningKeys(ctx, exp1.Add(-time.Second))
	if err != nil || n != 0 {
		t.Fatalf("DeleteExpiredSigningKeys(before any expiry) = %d, %v; want 0", n, err)
	}
	n, err = s.DeleteExpiredSigningKeys(ctx, exp1)
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpiredSigningKeys = %d, %v; want 1", n, err)
	}
	list, err = s.ListPublishedSigningKeys(ctx, at)
	if err != nil || kids(list) != "kid-2 kid-3" {
		t.Fatalf("after delete: %q, %v", kids(list), err)
	}
}

func testKeysConflict(t *testing.T, s db.Store) {
	ctx := t.Context()
	if err := s.AddSigningKey(ctx, signingKey(1, at), at); err != nil {
		t.Fatal(err)
	}
	// Same seq, other kid: a concurrent rotation lost.
	other := signingKey(2, at.Add(time.Minute))
	other.Seq = 1
	if err := s.AddSigningKey(ctx, other, at.Add(time.Hour)); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("AddSigningKey(same seq) err = %v, want ErrConflict", err)
	}
	// Same kid, new seq: the key exists.
	dup := signingKey(1, at.Add(time.Minute))
	dup.Seq = 2
	if err := s.AddSigningKey(ctx, dup, at.Add(time.Hour)); !errors.Is(err, db.ErrConflict) {
		t.Fatalf("AddSigningKey(same kid) err = %v, want ErrConflict", err)
	}
	// Nothing changed: one key, not retired.
	list, err := s.ListPublishedSigningKeys(ctx, at)
	if err != nil || kids(list) != "kid-1" || !list[0].RetireTime.IsZero() || !list[0].ExpireTime.IsZero() {
		t.Fatalf("after refused adds: %+v, %v; want kid-1 alone, not retired", list, err)
	}
	// Positive control: the next seq with a new kid is accepted.
	if err := s.AddSigningKey(ctx, signingKey(2, at.Add(time.Minute)), at.Add(time.Hour)); err != nil {
		t.Fatalf("AddSigningKey(2): %v", err)
	}
}

func testKeysConcurrent(t *testing.T, s db.Store) {
	// Replicas starting together each try to create key 1; exactly one wins.
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			k := signingKey(1, at)
			k.KID = fmt.Sprintf("kid-replica-%d", i)
			errs[i] = s.AddSigningKey(t.Context(), k, at)
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, db.ErrConflict):
			t.Errorf("replica %d: err = %v, want nil or ErrConflict", i, err)
		}
	}
	list, err := s.ListPublishedSigningKeys(t.Context(), at)
	if ok != 1 || err != nil || len(list) != 1 {
		t.Fatalf("%d winners, keys %q (%v); want exactly one", ok, kids(list), err)
	}
}

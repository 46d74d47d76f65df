package es256

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"runtime"
	"sync"
	"testing"
	"time"
)

// signed is one key with a genuine signature and a refused one.
type signed struct {
	pub         *ecdsa.PublicKey
	digest      [32]byte
	good, wrong []byte
}

func newSigned(t testing.TB) signed {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := signed{pub: &priv.PublicKey, digest: sha256.Sum256([]byte("signing input"))}
	r, ss, err := ecdsa.Sign(rand.Reader, priv, s.digest[:])
	if err != nil {
		t.Fatal(err)
	}
	s.good = make([]byte, 64)
	r.FillBytes(s.good[:32])
	ss.FillBytes(s.good[32:])
	s.wrong = append([]byte{}, s.good...)
	s.wrong[63] ^= 1
	return s
}

// fakeClock is a settable clock for the build rate.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// verifyN verifies s's good signature n times through k, failing on a
// wrong answer, and the wrong one once (refused, and not counted).
func verifyN(t *testing.T, k *Key, s signed, n int) {
	t.Helper()
	for range n {
		if !k.Verify(&s.digest, s.good) {
			t.Fatal("ok/genuine: refused")
		}
	}
	if k.Verify(&s.digest, s.wrong) {
		t.Fatal("fail/flipped-bit: accepted")
	}
}

func TestBuildAfterSuccesses(t *testing.T) {
	t.Parallel()
	c := NewCache(Config{BuildAfter: 4})
	s := newSigned(t)
	k := c.NewKey(s.pub)
	for range 10 {
		if k.Verify(&s.digest, s.wrong) {
			t.Fatal("fail/flipped-bit: accepted")
		}
	}
	if k.HasTable() {
		t.Fatal("refused verifications earned a table")
	}
	verifyN(t, k, s, 3)
	if k.HasTable() {
		t.Fatal("a table after 3 successes, BuildAfter is 4")
	}
	verifyN(t, k, s, 1)
	if !k.HasTable() {
		t.Fatal("no table after 4 successes")
	}
	verifyN(t, k, s, 5)
	st := c.Stats()
	if st.Builds != 1 || st.Tables != 1 || st.Bytes != TableBytes || st.ViaTable != 7 || st.ViaStock != 15 {
		t.Fatalf("stats %+v", st)
	}
}

func TestBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := NewCache(Config{BuildAfter: 1, MaxBytes: 2 * TableBytes, BuildsPerSecond: 1000})
	var ks []*Key
	var ss []signed
	for range 3 {
		s := newSigned(t)
		ss, ks = append(ss, s), append(ks, c.NewKey(s.pub))
	}
	verifyN(t, ks[0], ss[0], 1)
	verifyN(t, ks[1], ss[1], 1)
	if !ks[0].HasTable() || !ks[1].HasTable() {
		t.Fatal("two tables fit the budget")
	}
	verifyN(t, ks[2], ss[2], 1) // evicts one of them: both were fresh
	st := c.Stats()
	if st.Tables != 2 || st.Bytes > 2*TableBytes || st.Evicted != 1 {
		t.Fatalf("after the third build: %+v", st)
	}
	held := 0
	for _, k := range ks {
		if k.HasTable() {
			held++
		}
	}
	if held != 2 || !ks[2].HasTable() {
		t.Fatalf("%d tables held; the newest must be one", held)
	}
	// The survivor of the first two has not been used since the clock
	// passed it; the newest has. When the evicted key earns its table
	// again, the idle survivor is the one to go.
	survivor, evicted := 0, 1
	if !ks[0].HasTable() {
		survivor, evicted = 1, 0
	}
	ks[survivor].used.Store(false)
	ks[2].used.Store(true)
	verifyN(t, ks[evicted], ss[evicted], 1)
	if !ks[evicted].HasTable() || ks[survivor].HasTable() || !ks[2].HasTable() {
		t.Fatalf("second-chance eviction chose wrong: tables %v %v %v", ks[0].HasTable(), ks[1].HasTable(), ks[2].HasTable())
	}
	if st := c.Stats(); st.Bytes > 2*TableBytes || st.Evicted != 2 {
		t.Fatalf("%+v", st)
	}
}

func TestBudgetSmallerThanATable(t *testing.T) {
	t.Parallel()
	c := NewCache(Config{BuildAfter: 1, MaxBytes: TableBytes - 1})
	s := newSigned(t)
	k := c.NewKey(s.pub)
	verifyN(t, k, s, 3)
	if k.HasTable() {
		t.Fatal("a table beyond the budget")
	}
	if st := c.Stats(); st.RefusedBudget == 0 || st.Bytes != 0 {
		t.Fatalf("%+v", st)
	}
}

func TestBuildRate(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1_780_000_000, 0)}
	c := NewCache(Config{BuildAfter: 1, BuildsPerSecond: 1, Now: clk.now})
	a, b := newSigned(t), newSigned(t)
	ka, kb := c.NewKey(a.pub), c.NewKey(b.pub)
	verifyN(t, ka, a, 1)
	verifyN(t, kb, b, 1)
	if !ka.HasTable() || kb.HasTable() {
		t.Fatal("ok/first-build, fail/second-build-within-the-second")
	}
	if st := c.Stats(); st.RefusedRate != 1 {
		t.Fatalf("%+v", st)
	}
	clk.add(time.Second)
	verifyN(t, kb, b, 1)
	if !kb.HasTable() {
		t.Fatal("ok/build-after-a-second: no table")
	}
}

func TestReleaseFreesAndForbidsBuilds(t *testing.T) {
	t.Parallel()
	c := NewCache(Config{BuildAfter: 1})
	s := newSigned(t)
	k := c.NewKey(s.pub)
	verifyN(t, k, s, 1)
	if !k.HasTable() {
		t.Fatal("no table")
	}
	k.Release()
	if k.HasTable() {
		t.Fatal("the table outlived its key")
	}
	verifyN(t, k, s, 5) // still verifies, stock
	st := c.Stats()
	if k.HasTable() || st.Tables != 0 || st.Bytes != 0 || st.Released != 1 || st.Builds != 1 {
		t.Fatalf("%+v", st)
	}
	stock := (*Cache)(nil).NewKey(s.pub) // a nil cache: always stock, Release does nothing
	verifyN(t, stock, s, 1)
	stock.Release()
	if (*Key)(nil).Verify(&s.digest, s.good) {
		t.Fatal("a nil key verified")
	}
}

// TestConcurrentUse verifies with many keys from many goroutines while
// keys are released, the budget forces evictions and the collector runs;
// run with -race. The answers stay right and the bytes never pass the
// budget.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	c := NewCache(Config{BuildAfter: 2, MaxBytes: 3 * TableBytes, BuildsPerSecond: 1e6})
	var ss []signed
	var ks []*Key
	for range 6 {
		s := newSigned(t)
		ss, ks = append(ss, s), append(ks, c.NewKey(s.pub))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	maxBytes := int64(0)
	// Collections run throughout, so evicted tables (outside the Go heap)
	// are unmapped while other verifications may still hold them.
	stop := make(chan struct{})
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	for g := range 4 {
		wg.Go(func() {
			for i := range 60 {
				j := (g + i) % len(ks)
				if !ks[j].Verify(&ss[j].digest, ss[j].good) || ks[j].Verify(&ss[j].digest, ss[j].wrong) {
					t.Error("wrong answer under concurrency")
					return
				}
				if b := c.Stats().Bytes; b > maxBytes {
					mu.Lock()
					maxBytes = max(maxBytes, b)
					mu.Unlock()
				}
				if g == 0 && i == 30 {
					ks[5].Release()
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-gcDone
	st := c.Stats()
	if maxBytes > 3*TableBytes || st.Bytes > 3*TableBytes || st.Builds == 0 || ks[5].HasTable() {
		t.Fatalf("max bytes %d, %+v", maxBytes, st)
	}
}

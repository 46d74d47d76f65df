package ttlcache

import (
	"testing"
	"time"
)

func TestCacheExpiresAndBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	c := New[string, int](time.Second, 2, func() time.Time { return now })
	c.Put("a", 1)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	now = now.Add(999 * time.Millisecond)
	if _, ok := c.Get("a"); !ok {
		t.Fatal("entry expired early")
	}
	now = now.Add(time.Millisecond)
	if _, ok := c.Get("a"); ok {
		t.Fatal("entry outlived its ttl")
	}
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("c", 3) // full: cleared, then c stored
	if _, ok := c.Get("a"); ok {
		t.Fatal("cache grew past its bound")
	}
	if v, ok := c.Get("c"); !ok || v != 3 {
		t.Fatalf("Get(c) = %v, %v", v, ok)
	}
	c.Delete("c")
	if _, ok := c.Get("c"); ok {
		t.Fatal("Delete kept the entry")
	}
}

// GetWithin applies the caller's limit on top of the TTL, counting age from
// the time given to PutAt.
func TestCacheGetWithin(t *testing.T) {
	now := time.Unix(1000, 0)
	c := New[string, int](time.Minute, 10, func() time.Time { return now })
	c.PutAt("a", 1, now.Add(-2*time.Second)) // read two seconds ago
	limit := time.Second
	within := func(time.Time) time.Duration { return limit }
	if _, ok := c.GetWithin("a", within); ok {
		t.Fatal("a value read 2 s ago passed a 1 s limit")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get (TTL only) = %v, %v", v, ok)
	}
	limit = 3 * time.Second
	if v, ok := c.GetWithin("a", within); !ok || v != 1 {
		t.Fatalf("GetWithin(3 s) = %v, %v", v, ok)
	}
	if v, ok := c.GetWithin("a", nil); !ok || v != 1 {
		t.Fatalf("GetWithin(nil) = %v, %v", v, ok)
	}
	now = now.Add(time.Minute)
	if _, ok := c.GetWithin("a", nil); ok {
		t.Fatal("GetWithin outlived the TTL")
	}
	c.Put("b", 2)
	c.Put("c", 3)
	c.DeleteFunc(func(k string, v int) bool { return v == 2 })
	if _, ok := c.Get("b"); ok {
		t.Fatal("DeleteFunc kept the entry it was asked to drop")
	}
	if _, ok := c.Get("c"); !ok {
		t.Fatal("DeleteFunc dropped an entry it was not asked to")
	}
}

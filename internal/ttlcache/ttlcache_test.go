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

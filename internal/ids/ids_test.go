package ids

import (
	"strings"
	"testing"
	"time"
)

func TestNewSortsByTimeAndIsUnique(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := New("agt_", t0.Add(time.Duration(i)*time.Millisecond))
		if len(id) != 4+26 || !strings.HasPrefix(id, "agt_") {
			t.Fatalf("id %q has the wrong shape", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if id <= prev {
			t.Fatalf("id %q does not sort after %q", id, prev)
		}
		prev = id
	}
}

func TestEncodeKnownValue(t *testing.T) {
	var b [16]byte
	b[15] = 31
	if got := encode(b); got != "0000000000000000000000000Z" {
		t.Fatalf("encode = %q", got)
	}
	for i := range b {
		b[i] = 0xff
	}
	if got := encode(b); got != "7ZZZZZZZZZZZZZZZZZZZZZZZZZ" {
		t.Fatalf("encode(max) = %q", got)
	}
}

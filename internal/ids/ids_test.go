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

// Ids minted at the same instant, or with a clock that steps back, still
// sort in the order they were minted, and keep the time of the newest id.
func TestNewIsMonotonicWithinAMillisecond(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	first := New("a2agrant_", t0)
	prev := first
	for i := range 2000 {
		at := t0
		if i%3 == 0 {
			at = t0.Add(-time.Hour) // a clock that stepped back
		}
		id := New("a2agrant_", at)
		if id <= prev {
			t.Fatalf("id %d %q does not sort after %q", i, id, prev)
		}
		if id[:len("a2agrant_")+10] != first[:len("a2agrant_")+10] {
			t.Fatalf("id %q left the time part of %q", id, first)
		}
		prev = id
	}
	// A later millisecond starts over from fresh random bits, still after.
	if next := New("a2agrant_", t0.Add(time.Millisecond)); next <= prev {
		t.Fatalf("next millisecond's id %q does not sort after %q", next, prev)
	}
}

func TestIncrementCarriesAndOverflows(t *testing.T) {
	r := [10]byte{9: 0xff}
	if !increment(&r) || r != [10]byte{8: 1} {
		t.Fatalf("carry: %v", r)
	}
	var full [10]byte
	for i := range full {
		full[i] = 0xff
	}
	if increment(&full) {
		t.Fatal("overflow not reported")
	}
}

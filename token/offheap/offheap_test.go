package offheap

import (
	"runtime"
	"testing"
	"unsafe"
)

type pair struct {
	a uint64
	b [3]byte
}

// Slices and byte runs come out zeroed, aligned for their type, with the
// capacity asked for, and do not overlap: writing one leaves the others
// as they were.
func TestTakesAreZeroedAlignedAndDisjoint(t *testing.T) {
	r := New(1 << 16)
	if runtime.GOOS == "linux" && r.OnHeap() {
		t.Fatal("the region fell back to the Go heap on Linux")
	}
	b1 := Bytes(r, 3)
	ps := Slice[pair](r, 10)
	b2 := Bytes(r, 100)
	if len(b1) != 3 || cap(b1) != 3 || len(ps) != 0 || cap(ps) != 10 || len(b2) != 100 {
		t.Fatalf("lengths: %d/%d, %d/%d, %d", len(b1), cap(b1), len(ps), cap(ps), len(b2))
	}
	ps = ps[:10]
	if p := uintptr(unsafe.Pointer(&ps[0])); p%unsafe.Alignof(pair{}) != 0 {
		t.Fatalf("slice at %#x is not aligned to %d", p, unsafe.Alignof(pair{}))
	}
	for _, v := range b1 {
		if v != 0 {
			t.Fatal("bytes not zeroed")
		}
	}
	for _, p := range ps {
		if p != (pair{}) {
			t.Fatal("slice not zeroed")
		}
	}
	for i := range b1 {
		b1[i] = 0xff
	}
	for i := range ps {
		ps[i] = pair{a: ^uint64(0), b: [3]byte{1, 2, 3}}
	}
	for _, v := range b2 {
		if v != 0 {
			t.Fatal("a later take overlaps an earlier one")
		}
	}
	if b1[0] != 0xff || ps[0].a != ^uint64(0) {
		t.Fatal("a later take overwrote an earlier one")
	}
	// Capacity is capped: appending past it cannot run into the next take.
	before := b2[0]
	_ = append(b1, 1)
	if b2[0] != before {
		t.Fatal("append past a take's capacity wrote into the region")
	}
}

// A region too small for what is taken is a sizing bug: it panics rather
// than hand out memory it does not have.
func TestTakingMoreThanTheRegionPanics(t *testing.T) {
	r := New(64)
	_ = Bytes(r, 60)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a take past the end")
		}
	}()
	_ = Slice[pair](r, 1) // 60 rounded up to 64, + 16 > 64
}

// Memory taken from a region is not Go heap: a region of 64 MiB, written
// through, leaves the collector's live heap where it was.
func TestRegionIsNotGoHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapping is checked on Linux")
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	r := New(64 << 20)
	b := Bytes(r, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if grew := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grew > 8<<20 {
		t.Fatalf("the Go heap grew by %d bytes for a 64 MiB region", grew)
	}
	runtime.KeepAlive(r)
}

// Zero-sized requests need no memory.
func TestEmpty(t *testing.T) {
	r := New(0)
	if r.Len() != 0 {
		t.Fatalf("Len %d", r.Len())
	}
	if s := Slice[pair](r, 0); cap(s) != 0 {
		t.Fatalf("cap %d", cap(s))
	}
}

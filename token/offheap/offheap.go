// Package offheap hands out memory outside the Go heap for large,
// long-lived, pointer-free tables.
//
// Memory the collector manages costs it twice: the heap goal is a multiple
// of the live heap, so every live byte lets as much garbage pile up before
// the next collection, and that garbage is then swept span by span. On one
// core that sweep runs ahead of every request (docs/benchmarks.md, "The collector and memory"). A
// table kept here is neither counted toward the goal nor swept; it is
// mapped once and its pages are touched (and become resident) only as the
// table fills.
//
// Nothing stored in such memory may be a Go pointer: the collector does
// not see it, so a pointer kept only there would be freed under it.
package offheap

import (
	"runtime"
	"unsafe"
)

// Region is one mapping, carved up by Bytes and Slice (not safe for
// concurrent use while carving). It is unmapped once the Region itself is
// unreachable, so whoever holds slices of it must hold the Region too
// (a field beside them will do).
type Region struct {
	mem  []byte
	heap bool
	next int
}

// New maps size bytes of zeroed memory. Where mapping is unavailable, or
// fails, the memory comes from the Go heap instead (OnHeap reports it):
// the table still works, only the collector sees it again.
func New(size int) *Region {
	r := &Region{}
	if size <= 0 {
		return r
	}
	if mem, err := mmap(size); err == nil {
		r.mem = mem
		runtime.AddCleanup(r, func(m []byte) { _ = munmap(m) }, mem)
	} else {
		r.mem = make([]byte, size)
		r.heap = true
	}
	return r
}

// OnHeap reports whether the region fell back to the Go heap.
func (r *Region) OnHeap() bool { return r.heap }

// Len returns the region's size in bytes.
func (r *Region) Len() int { return len(r.mem) }

// take returns the next n bytes, aligned to align, or panics when the
// region is too small (a sizing bug in the caller, not an input error).
func (r *Region) take(n, align int) []byte {
	off := (r.next + align - 1) &^ (align - 1)
	if n < 0 || off+n > len(r.mem) {
		panic("offheap: region too small")
	}
	r.next = off + n
	return r.mem[off : off+n : off+n]
}

// Bytes returns n zeroed bytes of the region.
func Bytes(r *Region, n int) []byte { return r.take(n, 1) }

// Slice returns a zero-length slice of capacity n of the region, for a
// type T that holds no Go pointer (the caller's tests check that).
func Slice[T any](r *Region, n int) []T {
	var zero T
	size, align := int(unsafe.Sizeof(zero)), int(unsafe.Alignof(zero))
	if n == 0 || size == 0 {
		return make([]T, 0, n)
	}
	b := r.take(n*size, align)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)[:0]
}

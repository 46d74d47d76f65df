package es256

import (
	"reflect"
	"testing"

	"filippo.io/nistec"
)

// hasPointers reports whether a value of t holds a Go pointer.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	}
	return true
}

// TestTablePointsHoldNoPointer: the table's points live outside the Go
// heap, where the collector would not see a pointer; nistec's P256Point
// must hold none. The control: a type with a pointer is caught.
func TestTablePointsHoldNoPointer(t *testing.T) {
	t.Parallel()
	if hasPointers(reflect.TypeFor[nistec.P256Point]()) {
		t.Fatal("nistec.P256Point holds a pointer: it cannot live outside the Go heap")
	}
	if !hasPointers(reflect.TypeFor[struct {
		a [2]uint64
		p *int
	}]()) {
		t.Fatal("the check misses a pointer field")
	}
	if got := int64(reflect.TypeFor[nistec.P256Point]().Size()) * windows * rowLen; got != TableBytes {
		t.Fatalf("TableBytes %d, the points take %d", TableBytes, got)
	}
}

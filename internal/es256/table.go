package es256

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"errors"
	"math/big"
	"runtime"
	"sync"
	"unsafe"

	"filippo.io/nistec"

	"pactd.dev/pactd/internal/offheap"
)

// The table's shape: windows of window bits, each holding the multiples
// 1..rowLen of its base point, enough windows for a 256-bit scalar plus the
// carry of the signed recoding (37 × 7 = 259 bits; the top window holds at
// most 15 plus a carry, below rowLen, so nothing carries out of it).
const (
	window  = 7
	rowLen  = 1 << (window - 1)
	windows = (256 + window) / window
)

// TableBytes is the memory one Table holds.
const TableBytes = int64(windows * rowLen * unsafe.Sizeof(nistec.P256Point{}))

// order is n, the order of P-256's group.
var order = elliptic.P256().Params().N

// Table holds the precomputed multiples of one P-256 public key Q:
// pts[i*rowLen+j] = (j+1)·2^(window·i)·Q. It is immutable and safe for
// concurrent use.
//
// The points live outside the Go heap (package offheap: a P256Point holds
// no pointer): a budget's worth of tables would otherwise raise the
// collector's heap goal by as much again, and every evicted table would
// be garbage to sweep. The mapping is released once the Table is
// unreachable, so a verification still holding an evicted table reads
// valid memory to its end.
type Table struct {
	mem *offheap.Region
	pts []nistec.P256Point
}

// ErrNotP256 is returned for a key that is not on P-256.
var ErrNotP256 = errors.New("es256: not a P-256 public key")

// NewTable computes the table of pub (windows × rowLen point additions).
func NewTable(pub *ecdsa.PublicKey) (*Table, error) {
	if pub == nil || pub.Curve != elliptic.P256() {
		return nil, ErrNotP256
	}
	enc, err := pub.Bytes()
	if err != nil {
		return nil, ErrNotP256
	}
	base, err := nistec.NewP256Point().SetBytes(enc)
	if err != nil {
		return nil, ErrNotP256
	}
	t := &Table{mem: offheap.New(int(TableBytes))}
	t.pts = offheap.Slice[nistec.P256Point](t.mem, windows*rowLen)[:windows*rowLen]
	for i := range windows {
		row := t.pts[i*rowLen : (i+1)*rowLen]
		row[0].Set(base)
		row[1].Double(base)
		for j := 2; j < rowLen; j++ {
			row[j].Add(&row[j-1], base)
		}
		// 2·(rowLen·B) = 2^window·B, the next window's base.
		base.Double(&row[rowLen-1])
	}
	return t, nil
}

// scalars are the math/big values of one verification, pooled so that a
// verification allocates only what ModInverse does.
type scalars struct {
	r, s, e, w, u1, u2, x, prod, quo big.Int
}

var scalarPool = sync.Pool{New: func() any { return new(scalars) }}

// Verify checks a raw 64-byte R||S signature over digest, deciding exactly
// as crypto/ecdsa does (see the package doc): r and s in [1, n-1],
// w = s⁻¹, u1 = e·w, u2 = r·w, R = u1·G + u2·Q not at infinity, and
// R.x mod n = r.
func (t *Table) Verify(digest *[32]byte, sig []byte) bool {
	if t == nil || len(sig) != 64 {
		return false
	}
	sc := scalarPool.Get().(*scalars)
	defer scalarPool.Put(sc)
	r := sc.r.SetBytes(sig[:32])
	s := sc.s.SetBytes(sig[32:])
	if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(order) >= 0 || s.Cmp(order) >= 0 {
		return false
	}
	// e < 2^256 < 2n: one subtraction reduces it.
	e := sc.e.SetBytes(digest[:])
	if e.Cmp(order) >= 0 {
		e.Sub(e, order)
	}
	w := sc.w.ModInverse(s, order) // n is prime and 0 < s < n: it exists
	_, u1 := sc.quo.QuoRem(sc.prod.Mul(e, w), order, &sc.u1)
	_, u2 := sc.quo.QuoRem(sc.prod.Mul(r, w), order, &sc.u2)
	var b1, b2 [32]byte
	u1.FillBytes(b1[:])
	u2.FillBytes(b2[:])

	acc := nistec.NewP256Point()
	if _, err := acc.ScalarBaseMult(b1[:]); err != nil {
		return false
	}
	t.mulAdd(acc, &b2)
	x, err := acc.BytesX() // fails for the point at infinity
	if err != nil {
		return false
	}
	// R.x < p < 2n: one subtraction reduces it.
	v := sc.x.SetBytes(x)
	if v.Cmp(order) >= 0 {
		v.Sub(v, order)
	}
	return v.Cmp(r) == 0
}

// mulAdd adds k·Q to acc, k a 32-byte big-endian scalar, one table entry
// (or its negation) per non-zero signed digit.
func (t *Table) mulAdd(acc *nistec.P256Point, k *[32]byte) {
	// Little-endian 64-bit limbs, with a zero limb above for the last
	// window's read.
	var l [5]uint64
	for i := range 4 {
		o := 24 - 8*i
		l[i] = uint64(k[o])<<56 | uint64(k[o+1])<<48 | uint64(k[o+2])<<40 | uint64(k[o+3])<<32 |
			uint64(k[o+4])<<24 | uint64(k[o+5])<<16 | uint64(k[o+6])<<8 | uint64(k[o+7])
	}
	var neg nistec.P256Point
	carry := 0
	for i := range windows {
		pos := uint(i * window)
		bits := l[pos/64] >> (pos % 64)
		if pos%64+window > 64 {
			bits |= l[pos/64+1] << (64 - pos%64)
		}
		d := int(bits&(1<<window-1)) + carry
		carry = 0
		if d > rowLen {
			d -= 1 << window
			carry = 1
		}
		switch {
		case d > 0:
			acc.Add(acc, &t.pts[i*rowLen+d-1])
		case d < 0:
			neg.Negate(&t.pts[i*rowLen-d-1])
			acc.Add(acc, &neg)
		}
	}
	// The points are outside the Go heap: t (and its Region) must stay
	// reachable until the last read, or an evicted table could be
	// unmapped under this verification.
	runtime.KeepAlive(t)
}

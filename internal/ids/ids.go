// Package ids mints pactd's identifiers: a prefix and a ULID (48-bit
// millisecond time, 80 random bits, Crockford base32), so ids sort by
// creation time and listings ordered by id are in creation order.
//
// Within one process the ids are strictly increasing even when several are
// minted in the same millisecond or the clock steps back: as in the ULID
// spec's monotonic mode, such an id keeps the previous id's time and adds
// one to its random part. Ids of different replicas minted within the same
// millisecond sort in no particular order.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// last is the most recent id's time and random part (monotonic mode).
var last struct {
	sync.Mutex
	ms   uint64   // 48-bit milliseconds
	rand [10]byte // 80 bits, big-endian
}

// New returns prefix + a 26-character ULID for the given time, greater
// than every id this process minted before.
func New(prefix string, now time.Time) string {
	ms := uint64(now.UnixMilli()) & (1<<48 - 1)
	last.Lock()
	if ms > last.ms {
		last.ms = ms
		_, _ = rand.Read(last.rand[:]) // crypto/rand.Read never fails (Go 1.24+)
	} else if !increment(&last.rand) {
		// 2^80 ids in one millisecond: move on to the next one.
		last.ms++
		_, _ = rand.Read(last.rand[:])
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], last.ms<<16)
	copy(b[6:], last.rand[:])
	last.Unlock()
	return prefix + encode(b)
}

// increment adds one to r as a big-endian number; false on overflow.
func increment(r *[10]byte) bool {
	for i := len(r) - 1; i >= 0; i-- {
		r[i]++
		if r[i] != 0 {
			return true
		}
	}
	return false
}

// encode writes 128 bits as 26 base32 characters (the top 2 bits of the
// first character are zero).
func encode(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

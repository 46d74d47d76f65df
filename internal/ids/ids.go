// Package ids mints pactd's identifiers: a prefix and a ULID (48-bit
// millisecond time, 80 random bits, Crockford base32), so ids sort by
// creation time and listings ordered by id are in creation order.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// New returns prefix + a 26-character ULID for the given time.
func New(prefix string, now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	_, _ = rand.Read(b[6:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + encode(b)
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

// Package reqlog gives every request a request id and keeps pactd's fault
// logs to one line per fault: the id travels in the context, a slog handler
// adds it to every record logged with that context, and repeated identical
// faults (a database outage fails every call the same way) are rate-limited
// with a count of what was left out.
package reqlog

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Header is the HTTP header (and gRPC metadata key, lower-cased) that
// carries a request id in both directions.
const Header = "X-Request-Id"

// MaxIDBytes bounds a request id accepted from a caller.
const MaxIDBytes = 128

// ValidID reports whether a caller's request id is well-formed: 1 to 128
// bytes of letters, digits and ._:- (so it is safe in any log format).
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// NewID returns a fresh request id: 64 random bits, hex. An id correlates
// log lines and is no secret, so it comes from math/rand/v2's per-thread
// ChaCha8 generator, a few nanoseconds, rather than the kernel's.
func NewID() string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// IDFrom returns the caller's id when it is well-formed, else a new one.
func IDFrom(callerID string) string {
	if ValidID(callerID) {
		return callerID
	}
	return NewID()
}

type request struct {
	id     string
	logged atomic.Bool
}

type key struct{}

// With returns a context carrying the request id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, &request{id: id})
}

// ID returns the context's request id, or "".
func ID(ctx context.Context) string {
	if r, ok := ctx.Value(key{}).(*request); ok {
		return r.id
	}
	return ""
}

// MarkFaultLogged records that the request's fault was logged with its
// cause, so the RPC boundary does not log it a second time.
func MarkFaultLogged(ctx context.Context) {
	if r, ok := ctx.Value(key{}).(*request); ok {
		r.logged.Store(true)
	}
}

// FaultLogged reports whether MarkFaultLogged was called for the request.
func FaultLogged(ctx context.Context) bool {
	r, ok := ctx.Value(key{}).(*request)
	return ok && r.logged.Load()
}

// Limits of the fault log.
const (
	// Burst is how many identical warnings or errors are logged at once.
	Burst = 3
	// Window is how often one more identical record is logged after the
	// burst; it carries "suppressed": how many were left out.
	Window = 10 * time.Second
	// maxKeys bounds the distinct faults tracked (cleared when full).
	maxKeys = 1024
)

// Handler wraps a slog.Handler: it adds request_id to records logged with a
// request's context, and rate-limits records at warn level and above that
// repeat the same message and attributes.
type Handler struct {
	next  slog.Handler
	state *limiter
	now   func() time.Time
}

type limiter struct {
	mu   sync.Mutex
	keys map[string]*bucket
}

type bucket struct {
	sent       int       // records sent in the current burst
	since      time.Time // start of the current window
	suppressed int
}

// NewHandler wraps next; now is the clock (time.Now when nil).
func NewHandler(next slog.Handler, now func() time.Time) *Handler {
	if now == nil {
		now = time.Now
	}
	return &Handler{next: next, state: &limiter{keys: map[string]*bucket{}}, now: now}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		// The key is the message and every attribute but the timings, so
		// only truly identical records collapse: an audit line of one
		// Brand or source never hides another's.
		k := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if !strings.HasSuffix(a.Key, "_ms") {
				k += "\x00" + a.Key + "=" + a.Value.String()
			}
			return true
		})
		suppressed, ok := h.state.allow(k, h.now())
		if !ok {
			return nil
		}
		if suppressed > 0 {
			r = r.Clone()
			r.AddAttrs(slog.Int("suppressed", suppressed))
		}
	}
	if id := ID(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.next.Handle(ctx, r)
}

// allow reports whether a record with key k may be logged at now, and how
// many were suppressed since the last one that was.
func (l *limiter) allow(k string, now time.Time) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.keys[k]
	if !ok {
		if len(l.keys) >= maxKeys {
			clear(l.keys)
		}
		b = &bucket{since: now}
		l.keys[k] = b
	}
	if now.Sub(b.since) >= Window {
		b.since, b.sent = now, 0
		if b.suppressed > 0 { // the window's one record, with the count
			n := b.suppressed
			b.suppressed, b.sent = 0, Burst
			return n, true
		}
	}
	if b.sent < Burst {
		b.sent++
		return 0, true
	}
	b.suppressed++
	return 0, false
}

// WithAttrs implements slog.Handler; the limiter is shared.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(as), state: h.state, now: h.now}
}

// WithGroup implements slog.Handler; the limiter is shared.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), state: h.state, now: h.now}
}

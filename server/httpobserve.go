package server

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/server/reqlog"
)

// withRequestID gives every request on the main port a request id: the
// caller's X-Request-Id when it is well-formed, else a new one. It is
// returned in the response's X-Request-Id (a gRPC client sees it as the
// x-request-id header metadata) and logged with every line the request
// causes.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := reqlog.IDFrom(r.Header.Get(reqlog.Header))
		w.Header().Set(reqlog.Header, id)
		next.ServeHTTP(w, r.WithContext(reqlog.With(r.Context(), id)))
	})
}

// httpMetrics are the OAuth HTTP endpoints' metrics, the RPC metrics' twins.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactd_http_requests_total",
			Help: "OAuth HTTP endpoint requests handled, by endpoint and HTTP status.",
		}, []string{"endpoint", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pactd_http_duration_seconds",
			Help:    "OAuth HTTP endpoint handling time, by endpoint.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5},
		}, []string{"endpoint"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// oauthEndpoint names the OAuth endpoint of a path /a2a/{brand}/oauth/…
// for metrics: a fixed set, so made-up paths cannot grow the label space.
func oauthEndpoint(path string) string {
	_, rest, ok := strings.Cut(path, "/oauth/")
	if !ok {
		return "other"
	}
	switch rest {
	case "device_authorization", "token", "revoke", "jwks.json":
		return rest
	case ".well-known/oauth-authorization-server":
		return "metadata"
	}
	return "other"
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// observeHTTP gives the OAuth HTTP endpoints what the RPCs get from the
// observer and connect's recovery: metrics for every request, one log line
// for a server fault (none when the fault was logged with its cause
// already), and a panic turned into an RFC 6749 server_error.
func (s *Server) observeHTTP(m *httpMetrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		endpoint := oauthEndpoint(r.URL.Path)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p) // net/http's own way to abort a response: not a fault
				}
				s.log.ErrorContext(r.Context(), "panic in OAuth endpoint", slog.String("endpoint", endpoint), slog.Any("panic", p))
				reqlog.MarkFaultLogged(r.Context())
				if sw.status == 0 {
					sw.Header().Set("Content-Type", "application/json")
					sw.Header().Set("Cache-Control", "no-store")
					sw.WriteHeader(http.StatusInternalServerError)
					_, _ = io.WriteString(sw, oauthwire.Error(http.StatusInternalServerError, oauthwire.ErrServerError, "").GetBodyJson())
				}
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			d := time.Since(start)
			m.requests.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
			m.duration.WithLabelValues(endpoint).Observe(d.Seconds())
			if status >= 500 && !reqlog.FaultLogged(r.Context()) {
				s.log.ErrorContext(r.Context(), "OAuth request failed", slog.String("endpoint", endpoint),
					slog.Int("status", status), slog.Float64("duration_ms", float64(d.Microseconds())/1000))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

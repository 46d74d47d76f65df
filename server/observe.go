package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/server/buildinfo"
	"pactd.dev/pactd/server/reqlog"
	"pactd.dev/pactd/token/pajwt"
)

// rpcMetrics are the per-procedure RPC metrics.
type rpcMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newRPCMetrics(reg prometheus.Registerer) *rpcMetrics {
	m := &rpcMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactd_rpc_requests_total",
			Help: "RPCs handled, by procedure and result code.",
		}, []string{"procedure", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pactd_rpc_duration_seconds",
			Help:    "RPC handling time, by procedure.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5},
		}, []string{"procedure"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// observer logs each failed RPC once, at the boundary, and records metrics
// for every RPC. It runs outside authentication so refused calls count too.
type observer struct {
	log *slog.Logger
	m   *rpcMetrics
}

func (o observer) record(ctx context.Context, procedure string, start time.Time, err error) {
	d := time.Since(start)
	code := "ok"
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	o.m.requests.WithLabelValues(procedure, code).Inc()
	o.m.duration.WithLabelValues(procedure).Observe(d.Seconds())
	if err == nil {
		return
	}
	level := slog.LevelInfo
	switch connect.CodeOf(err) {
	case connect.CodeInternal, connect.CodeUnavailable, connect.CodeUnknown, connect.CodeDataLoss:
		if rpcerr.Logged(err) || reqlog.FaultLogged(ctx) {
			return // logged once already, with its cause and this request's id
		}
		level = slog.LevelError
	}
	msg := err.Error()
	var ce *connect.Error
	if errors.As(err, &ce) {
		msg = ce.Message()
	}
	o.log.LogAttrs(ctx, level, "rpc failed",
		slog.String("procedure", procedure), slog.String("code", code),
		slog.Float64("duration_ms", ms(d)), slog.String("error", msg))
}

func (o observer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		resp, err := next(ctx, req)
		o.record(ctx, req.Spec().Procedure, start, err)
		return resp, err
	}
}

func (o observer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (o observer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		start := time.Now()
		err := next(ctx, conn)
		o.record(ctx, conn.Spec().Procedure, start, err)
		return err
	}
}

// ms is a duration in milliseconds for logs: every duration pactd logs is a
// number named *_ms, never slog's bare nanoseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// registerProcessMetrics registers pactd_build_info (always 1, its labels
// name the binary) and pactd_database_up (1 while the store answers a ping
// within a second at scrape time, else 0).
func registerProcessMetrics(reg prometheus.Registerer, store interface {
	Ping(context.Context) error
	Statements() []db.StatementCount
}) {
	bi := buildinfo.Get()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "pactd_build_info",
		Help:        "Always 1; the labels say which pactd this is (version, commit, Go version).",
		ConstLabels: prometheus.Labels{"version": bi.Version, "commit": bi.Commit, "goversion": bi.GoVersion},
	}, func() float64 { return 1 }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pactd_database_up",
		Help: "1 if the database answered a ping (1 s bound) at scrape time, else 0.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if store.Ping(ctx) != nil {
			return 0
		}
		return 1
	}))
	reg.MustRegister(statementsCollector{store.Statements})
}

// statementsDesc describes pactd_db_statements_total.
var statementsDesc = prometheus.NewDesc("pactd_db_statements_total",
	"SQL statements run, by sqlc query name (every one on PostgreSQL, those outside transactions on SQLite): what each replica asks of the database.",
	[]string{"statement"}, nil)

// statementsCollector exports the store's statement counts at scrape time.
type statementsCollector struct{ counts func() []db.StatementCount }

func (statementsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- statementsDesc }

func (c statementsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.counts() {
		ch <- prometheus.MustNewConstMetric(statementsDesc, prometheus.CounterValue, float64(s.N), s.Name)
	}
}

// registerTokenCacheMetric exports pactd_pa_token_cache_entries: the
// repeat-token cache is the main cause of RSS growth under load, and this
// says how full it is (it stops growing at PACT_TOKEN_CACHE_SIZE).
func registerTokenCacheMetric(reg prometheus.Registerer, v *pajwt.Verifier) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pactd_pa_token_cache_entries",
		Help: "PA tokens in the repeat-token cache (at most PACT_TOKEN_CACHE_SIZE, each at most about 1.2 KiB).",
	}, func() float64 { return float64(v.CacheEntries()) }))
}

// jwksFetches counts PA JWKS fetches by result (ok or error) in
// pactd_jwks_fetches_total.
func jwksFetches(reg prometheus.Registerer) func(error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pactd_jwks_fetches_total",
		Help: "PA JWKS fetches, by result (ok or error: network, status, size or parse).",
	}, []string{"result"})
	reg.MustRegister(c)
	ok, failed := c.WithLabelValues("ok"), c.WithLabelValues("error")
	return func(err error) {
		if err != nil {
			failed.Inc()
			return
		}
		ok.Inc()
	}
}

// httpSpans gives each plain-HTTP request (the OAuth endpoints) a server
// span, the child of the caller's W3C traceparent, named after the route.
func httpSpans(next http.Handler) http.Handler {
	tr := otel.Tracer("pactd/oauthhttp")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tr.Start(ctx, r.Method+" /a2a/{brandId}/oauth", trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		r = r.WithContext(ctx)
		next.ServeHTTP(rec, r)
		if r.Pattern != "" { // set by the mux: the route, never the Brand id
			span.SetName(r.Pattern)
		}
		span.SetAttributes(attribute.Int("http.response.status_code", rec.status))
		if rec.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(rec.status))
		}
	})
}

// statusRecorder remembers the status code written.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// auditMetrics count the audit trail's writes and prunes.
type auditMetrics struct {
	events *prometheus.CounterVec
	prunes prometheus.Counter
}

// newAuditMetrics registers pactd_audit_events_recorded_total (by kind) and
// pactd_audit_events_pruned_total.
func newAuditMetrics(reg prometheus.Registerer) *auditMetrics {
	m := &auditMetrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactd_audit_events_recorded_total",
			Help: "Audit events this replica recorded, by kind (receipt.signed, grant.created, grant.refreshed, ...).",
		}, []string{"kind"}),
		prunes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pactd_audit_events_pruned_total",
			Help: "Audit events this replica deleted as older than PACT_AUDIT_RETENTION.",
		}),
	}
	for _, k := range db.AuditKinds {
		m.events.WithLabelValues(string(k)) // every kind reads 0 before its first event
	}
	reg.MustRegister(m.events, m.prunes)
	return m
}

func (m *auditMetrics) recorded(kind db.AuditKind) { m.events.WithLabelValues(string(kind)).Inc() }

func (m *auditMetrics) pruned(n int64) { m.prunes.Add(float64(n)) }

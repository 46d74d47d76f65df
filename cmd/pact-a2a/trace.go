package main

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/propagation"
)

// w3c is the W3C Trace Context propagator (traceparent, tracestate).
var w3c = propagation.TraceContext{}

// withTraceContext reads the caller's W3C trace context into the request's
// context, so the calls to pactd made while serving it carry it on.
func withTraceContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(w3c.Extract(r.Context(), propagation.HeaderCarrier(r.Header))))
	})
}

// traceTransport writes the request context's trace context into each call
// to pactd: pactd's spans then belong to the PA's (or the load balancer's)
// trace. The frontend makes no spans of its own.
type traceTransport struct{ base http.RoundTripper }

func (t traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	w3c.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	return t.base.RoundTrip(req)
}

// pactdClient is the HTTP client for pactd: bounded, and carrying the trace
// context on.
func pactdClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: traceTransport{base: http.DefaultTransport}}
}

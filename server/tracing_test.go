package server_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"pactd.dev/pactd/db/dbtest"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/server/tracing"
)

// otlpReceiver is an in-process OTLP/HTTP trace receiver.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	var msg collectortrace.ExportTraceServiceRequest
	if err != nil || req.URL.Path != "/v1/traces" || proto.Unmarshal(body, &msg) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range msg.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *otlpReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans)
}

// trace returns the received spans of one trace.
func (r *otlpReceiver) trace(traceID []byte) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if bytes.Equal(s.GetTraceId(), traceID) {
			out = append(out, s)
		}
	}
	return out
}

// TestTraceparentReachesTheSQLSpan: a caller's W3C traceparent becomes the
// parent of pactd's server span, and the store's SQL span is in the same
// trace under it, exported over OTLP/HTTP as configured by the standard
// OTEL_EXPORTER_OTLP_ENDPOINT variable; on both stores.
func TestTraceparentReachesTheSQLSpan(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // ms: export soon
	shutdown, err := tracing.Setup(t.Context(), os.Getenv, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = shutdown(t.Context()) }()

	for i, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			dbURL := ""
			if engine == "postgres" {
				dbURL = dbtest.PostgresURL(t)
			}
			// The server reads the variable from its configuration (the injected
			// environment); the exporter reads the process environment.
			inst := start(t, testConfig(t, dbURL, t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL))
			traceHex := strings.Repeat("0", 30) + "a" + string(rune('1'+i))
			parentHex := "00f067aa0ba902b7"
			traceID, _ := hex.DecodeString(traceHex)
			parentID, _ := hex.DecodeString(parentHex)
			// The caller (a frontend) sends its W3C trace context.
			withTraceparent := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
				return func(ctx context.Context, r connect.AnyRequest) (connect.AnyResponse, error) {
					r.Header().Set("traceparent", "00-"+traceHex+"-"+parentHex+"-01")
					return next(ctx, r)
				}
			}))
			if _, err := agents(inst, adminToken, withTraceparent).ListAgents(t.Context(), &pactv1.ListAgentsRequest{}); err != nil {
				t.Fatal(err)
			}

			var server, sql *tracepb.Span
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && (server == nil || sql == nil); time.Sleep(50 * time.Millisecond) {
				server, sql = nil, nil
				for _, s := range recv.trace(traceID) {
					if s.GetKind() == tracepb.Span_SPAN_KIND_SERVER && strings.Contains(s.GetName(), "AgentService/ListAgents") {
						server = s
					}
					if strings.HasPrefix(s.GetName(), "sql ") {
						sql = s
					}
				}
			}
			if server == nil || sql == nil {
				t.Fatalf("trace %s: server span %v, SQL span %v; received %d spans in all", traceHex, server, sql, recv.count())
			}
			if !bytes.Equal(server.GetParentSpanId(), parentID) {
				t.Errorf("the server span's parent is %x, want the caller's %s", server.GetParentSpanId(), parentHex)
			}
			if !bytes.Equal(sql.GetParentSpanId(), server.GetSpanId()) {
				t.Errorf("the SQL span %q's parent is %x, want the server span %x", sql.GetName(), sql.GetParentSpanId(), server.GetSpanId())
			}

			// The OAuth endpoints in RFC wire form get a server span too.
			oauthTrace := strings.Repeat("0", 30) + "b" + string(rune('1'+i))
			oauthID, _ := hex.DecodeString(oauthTrace)
			hreq, _ := http.NewRequest(http.MethodGet, inst.url+"/a2a/acme/oauth/jwks.json", nil)
			hreq.Header.Set("traceparent", "00-"+oauthTrace+"-"+parentHex+"-01")
			res, err := http.DefaultClient.Do(hreq)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			var oauth *tracepb.Span
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && oauth == nil; time.Sleep(50 * time.Millisecond) {
				for _, s := range recv.trace(oauthID) {
					if s.GetName() == "GET /a2a/{brandId}/oauth/jwks.json" && s.GetKind() == tracepb.Span_SPAN_KIND_SERVER {
						oauth = s
					}
				}
			}
			if oauth == nil || !bytes.Equal(oauth.GetParentSpanId(), parentID) {
				t.Errorf("OAuth JWKS endpoint: span %v, want a server span under the caller's %s", oauth, parentHex)
			}
		})
	}
}

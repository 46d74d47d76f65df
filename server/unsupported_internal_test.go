package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"

	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
)

// TestServedContentTypesAreAccepted: every Content-Type explainUnsupported
// lets through without its wrapper is one the handlers accept, by
// connect-go's own Accept-Post list, so a 415 can never pass unexplained:
// for a pactd service (pactd's codecs), for health (connect-go's
// defaults) and for reflection (a bidirectional stream). The control: the
// types a handler does not serve are outside the list it is checked with.
func TestServedContentTypesAreAccepted(t *testing.T) {
	acceptPost := func(h http.Handler, path string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}"))
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0 // a bidirectional stream needs HTTP/2
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnsupportedMediaType || rec.Header().Get("Accept-Post") == "" {
			t.Fatalf("POST %s without a Content-Type: %d, Accept-Post %q; want 415 and the list", path, rec.Code, rec.Header().Get("Accept-Post"))
		}
		return rec.Header().Get("Accept-Post")
	}
	_, agents := pactv1connect.NewAgentServiceHandler(pactv1connect.UnimplementedAgentServiceHandler{}, strictJSONCodecs()...)
	_, health := grpchealth.NewHandler(grpchealth.NewStaticChecker())
	_, reflection := grpcreflect.NewHandlerV1(grpcreflect.NewStaticReflector("pact.v1.AgentService"))
	for _, tc := range []struct {
		name, path string
		h          http.Handler
		served     func(string) bool
		notServed  []string
	}{
		{"service", pactv1connect.AgentServiceListAgentsProcedure, agents, servedUnary, []string{"application/connect+proto", "application/connect+json"}},
		{"health", grpchealth.HealthV1ServiceName + "/Check", health, servedUnary, []string{"application/connect+proto"}},
		{"reflection", "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", reflection, servedStream, []string{"application/json", "application/proto"}},
	} {
		accepted := map[string]bool{}
		for _, ct := range strings.Split(acceptPost(tc.h, "/"+strings.TrimPrefix(tc.path, "/")), ",") {
			accepted[strings.TrimSpace(ct)] = true
		}
		n := 0
		for ct := range accepted {
			if tc.served(ct) {
				n++
			}
		}
		for _, ct := range []string{"application/proto", "application/json", "application/json; charset=utf-8",
			"application/connect+proto", "application/connect+json", "application/grpc", "application/grpc+proto",
			"application/grpc+json", "application/grpc-web", "application/grpc-web+proto", "application/grpc-web+json"} {
			if tc.served(ct) && !accepted[ct] {
				t.Errorf("%s: %q skips the wrapper, but the handler's Accept-Post does not list it: a 415 would go unexplained", tc.name, ct)
			}
		}
		if n < 6 {
			t.Errorf("%s: only %d of the handler's types skip the wrapper: the list is broken", tc.name, n)
		}
		for _, ct := range tc.notServed {
			if accepted[ct] || tc.served(ct) {
				t.Errorf("%s: %q is accepted (%v) or skips the wrapper (%v); the control wants neither", tc.name, ct, accepted[ct], tc.served(ct))
			}
		}
	}
}

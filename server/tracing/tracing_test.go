package tracing

import (
	"context"
	"strings"
	"testing"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestEnabled: off by default; an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp
// turns it on; OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none win.
func TestEnabled(t *testing.T) {
	cases := []struct {
		env  func(string) string
		want bool
	}{
		{env(), false},
		{env("OTEL_SERVICE_NAME", "pactd-staging"), false},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"), true},
		{env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces"), true},
		{env("OTEL_TRACES_EXPORTER", "otlp"), true},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", "OTEL_TRACES_EXPORTER", "none"), false},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", "OTEL_SDK_DISABLED", "true"), false},
	}
	for i, c := range cases {
		if got := Enabled(c.env); got != c.want {
			t.Errorf("case %d: Enabled = %v, want %v", i, got, c.want)
		}
	}
}

// TestSetupRefusesGRPCProtocol: pactd exports over http/protobuf only and
// says so rather than silently exporting to the wrong port.
func TestSetupRefusesGRPCProtocol(t *testing.T) {
	_, err := Setup(context.Background(), env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), "test")
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc") {
		t.Fatalf("Setup with protocol grpc: %v, want a refusal naming OTEL_EXPORTER_OTLP_PROTOCOL", err)
	}
	stop, err := Setup(context.Background(), env(), "test") // positive control: off is fine
	if err != nil || stop(context.Background()) != nil {
		t.Fatalf("Setup off: %v", err)
	}
}

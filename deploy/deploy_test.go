// Package deploy holds deployment examples (Kubernetes, Prometheus, Grafana);
// its test keeps the Kubernetes example true to pactd.
package deploy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

// manifest is the part of a Kubernetes object the test reads.
type manifest struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					Env []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom *struct {
							SecretKeyRef *struct {
								Name string `yaml:"name"`
								Key  string `yaml:"key"`
							} `yaml:"secretKeyRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					StartupProbe   *probe `yaml:"startupProbe"`
					ReadinessProbe *probe `yaml:"readinessProbe"`
					LivenessProbe  *probe `yaml:"livenessProbe"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
		Ports []struct {
			Port        int    `yaml:"port"`
			TargetPort  string `yaml:"targetPort"`
			AppProtocol string `yaml:"appProtocol"`
		} `yaml:"ports"`
		MinAvailable int `yaml:"minAvailable"`
	} `yaml:"spec"`
	Replicas int
}

type probe struct {
	GRPC *struct {
		Port    int    `yaml:"port"`
		Service string `yaml:"service"`
	} `yaml:"grpc"`
}

func readManifests(t *testing.T) map[string]manifest {
	t.Helper()
	raw, err := os.ReadFile("kubernetes/pactd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]manifest{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var node yaml.Node
		if err := dec.Decode(&node); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var m manifest
		if err := node.Decode(&m); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Spec struct {
				Replicas int `yaml:"replicas"`
			} `yaml:"spec"`
		}
		_ = node.Decode(&r)
		m.Replicas = r.Spec.Replicas
		out[m.Kind] = m
	}
	return out
}

// TestKubernetesExample: the Deployment sets only PACT_* variables pactd
// knows, its values pass pactd's own validation, credentials and the
// key-encryption key come from a Secret, its ports are the ones its
// PACT_*_LISTEN values open, the Service speaks h2c to the API port, the PDB
// leaves room for a disruption, and each probe's service answers SERVING
// from a real pactd.
func TestKubernetesExample(t *testing.T) {
	ms := readManifests(t)
	dep, svc, pdb := ms["Deployment"], ms["Service"], ms["PodDisruptionBudget"]
	if len(dep.Spec.Template.Spec.Containers) != 1 || len(svc.Spec.Ports) == 0 || pdb.Kind == "" {
		t.Fatalf("want a Deployment with one container, a Service and a PodDisruptionBudget; got %v", ms)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	known := config.EnvNames()
	env := []string{}
	fromSecret := map[string]bool{}
	for _, e := range c.Env {
		if !slices.Contains(known, e.Name) {
			t.Errorf("the Deployment sets %s, which pactd does not know (known: %v)", e.Name, known)
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "" {
			fromSecret[e.Name] = true
			continue
		}
		env = append(env, e.Name+"="+e.Value)
	}
	for _, n := range []string{"PACT_DATABASE_URL", "PACT_ADMIN_TOKEN", "PACT_FRONTEND_TOKEN", "PACT_KEY_ENCRYPTION_KEY"} {
		if !fromSecret[n] {
			t.Errorf("%s must come from a Secret (secretKeyRef)", n)
		}
	}
	// The literal values, with stand-ins for the secrets, pass pactd's config.
	cfg, err := config.Load(nil, append(env, "PACT_DATABASE_URL=postgres://pactd@db.internal/pactd",
		"PACT_ADMIN_TOKEN=stand-in-admin-token-0123", "PACT_FRONTEND_TOKEN=stand-in-frontend-token-01",
		"PACT_KEY_ENCRYPTION_KEY=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="), io.Discard)
	if err != nil {
		t.Fatalf("pactd refuses the Deployment's environment: %v", err)
	}

	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	portOf := func(hostport string) int {
		_, p, err := net.SplitHostPort(hostport)
		if err != nil {
			t.Fatalf("%q: %v", hostport, err)
		}
		n, _ := strconv.Atoi(p)
		return n
	}
	if ports["api"] != portOf(cfg.Listen) {
		t.Errorf("containerPort api = %d, but PACT_LISTEN is %s", ports["api"], cfg.Listen)
	}
	if cfg.MetricsListen != "" && ports["metrics"] != portOf(cfg.MetricsListen) {
		t.Errorf("containerPort metrics = %d, but PACT_METRICS_LISTEN is %s", ports["metrics"], cfg.MetricsListen)
	}
	// The native gRPC port is where gRPC frontends should call: the example
	// opens it on all interfaces (pactd's default is loopback only).
	if cfg.GRPCListen == "" {
		t.Error("the Deployment turns the native gRPC port off; gRPC frontends should have it")
	} else if h, _, _ := net.SplitHostPort(cfg.GRPCListen); h != "0.0.0.0" {
		t.Errorf("PACT_GRPC_LISTEN is %s, want 0.0.0.0:PORT so the Service reaches it", cfg.GRPCListen)
	} else if ports["grpc-native"] != portOf(cfg.GRPCListen) {
		t.Errorf("containerPort grpc-native = %d, but PACT_GRPC_LISTEN is %s", ports["grpc-native"], cfg.GRPCListen)
	}
	// The Service: the API port first (the probes' and Connect clients'),
	// then the native gRPC port, both h2c.
	targets := []string{}
	for _, sp := range svc.Spec.Ports {
		targets = append(targets, sp.TargetPort)
		if sp.AppProtocol != "kubernetes.io/h2c" {
			t.Errorf("Service port %+v: want appProtocol kubernetes.io/h2c", sp)
		}
	}
	if !slices.Equal(targets, []string{"api", "grpc-native"}) {
		t.Errorf("Service target ports %v, want [api grpc-native]", targets)
	}
	if dep.Replicas < 2 || pdb.Spec.MinAvailable >= dep.Replicas {
		t.Errorf("replicas %d, PDB minAvailable %d: the PDB must allow one disruption", dep.Replicas, pdb.Spec.MinAvailable)
	}

	// The probes, asked of a real pactd on SQLite over grpc.health.v1.
	// The native port off: its default 127.0.0.1:7071 would clash with
	// other tests and pactds on this machine, and the probes use the API port.
	srvCfg, err := config.Load(nil, []string{"PACT_DATA_DIR=" + t.TempDir(), "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off",
		"PACT_ADMIN_TOKEN=stand-in-admin-token-0123"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Build(t.Context(), srvCfg, server.Deps{Listeners: server.Listeners{API: ln}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); <-done }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	for name, p := range map[string]*probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.GRPC == nil {
			t.Errorf("%s probe: want a grpc probe", name)
			continue
		}
		if p.GRPC.Port != ports["api"] {
			t.Errorf("%s probe port %d, want the API port %d", name, p.GRPC.Port, ports["api"])
		}
		res, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: p.GRPC.Service})
		if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("%s probe service %q: %v, %v; want SERVING", name, p.GRPC.Service, res, err)
		}
	}
	// Positive control of the probe check: a service pactd does not serve fails.
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "pact.v1.NoSuchService"}); err == nil {
		t.Error("health of an unknown service succeeded; the probe check above proves nothing")
	}
}

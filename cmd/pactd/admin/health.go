package admin

import (
	"context"
	"flag"
	"fmt"
	"io"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// healthProcedure is grpc.health.v1's Check, which pactd answers on both
// ports without a credential.
const healthProcedure = "/grpc.health.v1.Health/Check"

func healthCommand() *command {
	return &command{group: "health", summary: "ask pactd whether it serves (grpc.health.v1 Check; exit status 1 unless SERVING)", noAuth: true,
		setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
			service := fs.String("service", "", "the `service` to ask about, e.g. pact.v1.VerificationService (default: pactd as a whole)")
			return func(ctx context.Context, s *session, _ []string) error {
				c := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](s.client, s.base+healthProcedure, s.bare...)
				resp, err := c.CallUnary(ctx, connect.NewRequest(&healthpb.HealthCheckRequest{Service: *service}))
				if err != nil {
					return err
				}
				st := resp.Msg.GetStatus()
				if err := s.emit(resp.Msg, func(w io.Writer) { fmt.Fprintln(w, st) }); err != nil {
					return err
				}
				if st != healthpb.HealthCheckResponse_SERVING {
					name := *service
					if name == "" {
						name = "pactd"
					}
					return failure("%s: %s is %s", s.op, name, st)
				}
				return nil
			}
		}}
}

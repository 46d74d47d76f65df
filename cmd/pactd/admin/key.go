package admin

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

func keyCommands() []*command {
	return []*command{
		{group: "key", name: "list", summary: "list the Provider's published signing keys (GetJwks: the active one first, then the next and the retired; the JWKS marks none)",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, _ []string) error {
					resp, err := s.tokens().GetJwks(ctx, &pactv1.GetJwksRequest{})
					if err != nil {
						return err
					}
					var set struct {
						Keys []struct {
							Kid, Kty, Crv, Alg, Use string
						} `json:"keys"`
					}
					if err := json.Unmarshal([]byte(resp.GetJwksJson()), &set); err != nil {
						return failure("%s: the JWKS pactd returned is not JSON: %v", s.op, err)
					}
					return s.emit(resp, func(w io.Writer) {
						row(w, "KID", "KTY", "CRV", "ALG", "USE")
						for _, k := range set.Keys {
							row(w, k.Kid, k.Kty, k.Crv, k.Alg, k.Use)
						}
					})
				}
			}},
		{group: "key", name: "rotate", summary: "make a new signing key: published at once, signing once every replica knows it",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, _ []string) error {
					resp, err := s.tokens().RotateSigningKey(ctx, &pactv1.RotateSigningKeyRequest{})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "new signing key %s, published now\n", resp.GetKid())
						row(w, "kid", resp.GetKid())
						row(w, "signs from", when(resp.GetActivateTime()))
					})
				}
			}},
	}
}

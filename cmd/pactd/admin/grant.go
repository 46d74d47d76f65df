package admin

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

func grantCommands() []*command {
	return []*command{
		{group: "grant", name: "list", args: "-brand ID -user USER", summary: "list a Brand user's delegation grants, newest first",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				brand := fs.String("brand", "", "the Brand `id` (required)")
				user := fs.String("user", "", "the User's `id` at the Brand (required)")
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					if err := required(s.op, map[string]string{"-brand": *brand, "-user": *user}); err != nil {
						return err
					}
					resp := &pactv1.ListGrantsResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.delegation().ListGrants(ctx, &pactv1.ListGrantsRequest{BrandId: *brand, BrandUser: *user, Page: page})
						if err != nil {
							return "", err
						}
						resp.Grants = append(resp.Grants, r.GetGrants()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "GRANT", "AGENT", "SCOPES", "CREATED", "EXPIRES", "REVOKED", "RESTRICTED TO")
						for _, g := range resp.GetGrants() {
							var words []string
							for _, d := range g.GetAuthorizationDetails() {
								words = append(words, d.GetWords())
							}
							row(w, g.GetGrantId(), g.GetAgentDisplayName()+" ("+g.GetAgentId()+")", strings.Join(g.GetScopes(), " "),
								when(g.GetCreateTime()), when(g.GetExpireTime()), when(g.GetRevokeTime()), strings.Join(words, "; "))
						}
						p.footer(w, next)
					})
				}
			}},
		{group: "grant", name: "find", args: "[-brand ID] [-user USER] [-agent ID]", summary: "find grants by Brand, by a User at a Brand, or by PA, newest first (admin)",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				brand := fs.String("brand", "", "only this Brand's grants (`id`)")
				user := fs.String("user", "", "only this User's grants (their `id` at -brand)")
				agent := fs.String("agent", "", "only this PA's grants (its agent `id`)")
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					resp := &pactv1.FindGrantsResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.delegation().FindGrants(ctx, &pactv1.FindGrantsRequest{BrandId: *brand, BrandUser: *user, AgentId: *agent, Page: page})
						if err != nil {
							return "", err
						}
						resp.Grants = append(resp.Grants, r.GetGrants()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "GRANT", "BRAND", "USER", "AGENT", "SCOPES", "CREATED", "EXPIRES", "REVOKED")
						for _, g := range resp.GetGrants() {
							row(w, g.GetGrantId(), g.GetBrandId(), g.GetBrandUser(), g.GetAgentDisplayName()+" ("+g.GetAgentId()+")", strings.Join(g.GetScopes(), " "),
								when(g.GetCreateTime()), when(g.GetExpireTime()), when(g.GetRevokeTime()))
						}
						p.footer(w, next)
					})
				}
			}},
		{group: "grant", name: "revoke", args: "-brand ID GRANT_ID", summary: "revoke a grant: its tokens are refused from the next request on", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				brand := fs.String("brand", "", "the Brand `id` (required)")
				user := fs.String("user", "", "only if the grant is this Brand `user`'s")
				return func(ctx context.Context, s *session, args []string) error {
					if err := required(s.op, map[string]string{"-brand": *brand}); err != nil {
						return err
					}
					resp, err := s.delegation().RevokeGrant(ctx, &pactv1.RevokeGrantRequest{BrandId: *brand, GrantId: args[0], BrandUser: *user})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { fmt.Fprintf(w, "revoked grant %s of Brand %s\n", args[0], *brand) })
				}
			}},
	}
}

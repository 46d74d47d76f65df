package admin

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

func credentialCommands() []*command {
	return []*command{
		{group: "credential", name: "create", args: "-role admin|frontend -name NAME", summary: "store a new caller credential and print its token, this once",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				role := fs.String("role", "", "what it may call: admin (everything) or frontend (the frontend procedures) (required)")
				name := fs.String("name", "", "a `name` for operators, e.g. \"checkout frontend\" (required)")
				expires := fs.String("expires", "", "when it stops working: an RFC 3339 `time` (2027-12-31T00:00:00Z) or a duration from now (720h); default never")
				return func(ctx context.Context, s *session, _ []string) error {
					if err := required(s.op, map[string]string{"-role": *role, "-name": *name}); err != nil {
						return err
					}
					r, ok := roles[strings.ToLower(*role)]
					if !ok {
						if v, known := pactv1.CallerRole_value[*role]; known {
							r, ok = pactv1.CallerRole(v), true
						}
					}
					if !ok {
						return usageError("%s: -role %q: must be admin or frontend", s.op, *role)
					}
					req := &pactv1.CreateCredentialRequest{Role: r, Name: *name}
					if *expires != "" {
						t, err := parseExpiry(*expires, time.Now())
						if err != nil {
							return usageError("%s: -expires %q: %v", s.op, *expires, err)
						}
						req.ExpireTime = timestamppb.New(t)
					}
					resp, err := s.credentials().CreateCredential(ctx, req)
					if err != nil {
						return err
					}
					if s.json {
						return s.emit(resp, nil)
					}
					// The token alone on standard output, so that
					// TOKEN=$(pactd credential create …) holds it; the rest
					// on standard error.
					c := resp.GetCredential()
					fmt.Fprintf(s.errOut, "pactd: created %s credential %s (%q), expires %s; its token, shown only this once:\n",
						roleName(c.GetRole()), c.GetId(), c.GetName(), orNever(c.GetExpireTime()))
					_, err = fmt.Fprintln(s.out, resp.GetToken())
					return err
				}
			}},
		{group: "credential", name: "list", summary: "list the caller credentials (never their tokens), revoked and expired ones too",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					resp := &pactv1.ListCredentialsResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.credentials().ListCredentials(ctx, &pactv1.ListCredentialsRequest{Page: page})
						if err != nil {
							return "", err
						}
						resp.Credentials = append(resp.Credentials, r.GetCredentials()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "ID", "ROLE", "NAME", "CREATED", "EXPIRES", "LAST USED", "REVOKED")
						for _, c := range resp.GetCredentials() {
							row(w, c.GetId(), roleName(c.GetRole()), c.GetName(), when(c.GetCreateTime()), orNever(c.GetExpireTime()), when(c.GetLastUseTime()), when(c.GetRevokeTime()))
						}
						p.footer(w, next)
					})
				}
			}},
		{group: "credential", name: "revoke", args: "ID", summary: "revoke a credential for good (every replica refuses it within 1 s)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.credentials().RevokeCredential(ctx, &pactv1.RevokeCredentialRequest{Id: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						c := resp.GetCredential()
						fmt.Fprintf(w, "revoked credential %s\n", c.GetId())
						row(w, "id", c.GetId())
						row(w, "role", roleName(c.GetRole()))
						row(w, "name", c.GetName())
						row(w, "created", when(c.GetCreateTime()))
						row(w, "revoked", when(c.GetRevokeTime()))
					})
				}
			}},
	}
}

var roles = map[string]pactv1.CallerRole{"admin": pactv1.CallerRole_CALLER_ROLE_ADMIN, "frontend": pactv1.CallerRole_CALLER_ROLE_FRONTEND}

func roleName(r pactv1.CallerRole) string {
	for name, v := range roles {
		if v == r {
			return name
		}
	}
	return r.String()
}

func orNever(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return "never"
	}
	return when(ts)
}

// parseExpiry reads -expires: an RFC 3339 time, or a positive duration
// from now.
func parseExpiry(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("must be an RFC 3339 time (2027-12-31T00:00:00Z) or a positive duration (720h)")
	}
	return now.Add(d), nil
}

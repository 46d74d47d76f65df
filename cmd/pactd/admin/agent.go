package admin

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

func agentCommands() []*command {
	return []*command{
		{group: "agent", name: "register", args: "-issuer URL -jwks-uri URL -name NAME", summary: "register a personal agent (again with the same details: unchanged)",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				issuer := fs.String("issuer", "", "the exact issuer (`iss`) the PA signs its JWTs with (required)")
				jwks := fs.String("jwks-uri", "", "the `URL` where the PA publishes its keys (required)")
				name := fs.String("name", "", "the `name` shown on consent pages (required)")
				aud := fs.String("audience", "", "an `audience` for this PA instead of the Provider's (PACT_AUDIENCE)")
				return func(ctx context.Context, s *session, _ []string) error {
					if err := required(s.op, map[string]string{"-issuer": *issuer, "-jwks-uri": *jwks, "-name": *name}); err != nil {
						return err
					}
					resp, err := s.agents().RegisterAgent(ctx, &pactv1.RegisterAgentRequest{Issuer: *issuer, JwksUri: *jwks, DisplayName: *name, Audience: *aud})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						if resp.GetCreated() {
							fmt.Fprintf(w, "registered agent %s\n", resp.GetAgent().GetId())
						} else {
							fmt.Fprintf(w, "agent %s was registered already with these details; nothing changed\n", resp.GetAgent().GetId())
						}
						agentFields(w, resp.GetAgent())
					})
				}
			}},
		{group: "agent", name: "list", summary: "list the registered agents, oldest first",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					resp := &pactv1.ListAgentsResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.agents().ListAgents(ctx, &pactv1.ListAgentsRequest{Page: page})
						if err != nil {
							return "", err
						}
						resp.Agents = append(resp.Agents, r.GetAgents()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "ID", "ISSUER", "NAME", "ENABLED", "CREATED")
						for _, a := range resp.GetAgents() {
							row(w, a.GetId(), a.GetIssuer(), a.GetDisplayName(), yesNo(a.GetEnabled()), when(a.GetCreateTime()))
						}
						p.footer(w, next)
					})
				}
			}},
		{group: "agent", name: "get", args: "ID|ISSUER", summary: "show one agent, by its id or its exact issuer", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.agents().GetAgent(ctx, agentKey(args[0]))
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { agentFields(w, resp.GetAgent()) })
				}
			}},
		agentSwitch("enable", true),
		agentSwitch("disable", false),
		{group: "agent", name: "update", args: "ID|ISSUER", summary: "change an agent's JWKS URI, name or audience", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				jwks := fs.String("jwks-uri", "", "the new JWKS `URL`")
				name := fs.String("name", "", "the new display `name`")
				aud := fs.String("audience", "", "the new `audience` (empty: the Provider's)")
				return func(ctx context.Context, s *session, args []string) error {
					a := &pactv1.Agent{JwksUri: *jwks, DisplayName: *name, Audience: *aud}
					mask := &fieldmaskpb.FieldMask{}
					fs.Visit(func(f *flag.Flag) {
						if p, ok := map[string]string{"jwks-uri": "jwks_uri", "name": "display_name", "audience": "audience"}[f.Name]; ok {
							mask.Paths = append(mask.Paths, p)
						}
					})
					if len(mask.Paths) == 0 {
						return usageError("%s: name what to change: -jwks-uri, -name or -audience", s.op)
					}
					return updateAgent(ctx, s, args[0], a, mask)
				}
			}},
		{group: "agent", name: "delete", args: "ID|ISSUER", summary: "delete an agent: its tokens stop verifying at once", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					id, err := agentID(ctx, s, args[0])
					if err != nil {
						return err
					}
					resp, err := s.agents().DeleteAgent(ctx, &pactv1.DeleteAgentRequest{Id: id})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { fmt.Fprintf(w, "deleted agent %s\n", id) })
				}
			}},
	}
}

// agentSwitch is agent enable and agent disable.
func agentSwitch(name string, enabled bool) *command {
	summary := "accept the agent's tokens again"
	if !enabled {
		summary = "refuse the agent's tokens (401) from its next request on"
	}
	return &command{group: "agent", name: name, args: "ID|ISSUER", summary: summary, minArgs: 1, maxArgs: 1,
		setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
			return func(ctx context.Context, s *session, args []string) error {
				return updateAgent(ctx, s, args[0], &pactv1.Agent{Enabled: enabled}, &fieldmaskpb.FieldMask{Paths: []string{"enabled"}})
			}
		}}
}

func updateAgent(ctx context.Context, s *session, key string, a *pactv1.Agent, mask *fieldmaskpb.FieldMask) error {
	id, err := agentID(ctx, s, key)
	if err != nil {
		return err
	}
	a.Id = id
	resp, err := s.agents().UpdateAgent(ctx, &pactv1.UpdateAgentRequest{Agent: a, UpdateMask: mask})
	if err != nil {
		return err
	}
	return s.emit(resp, func(w io.Writer) { agentFields(w, resp.GetAgent()) })
}

// agentKey reads an argument as an issuer when it is a URL, else as an id.
func agentKey(arg string) *pactv1.GetAgentRequest {
	if strings.Contains(arg, "://") {
		return &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Issuer{Issuer: arg}}
	}
	return &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: arg}}
}

// agentID returns the id of the agent an argument names (an issuer is
// looked up first: the changing RPCs take ids).
func agentID(ctx context.Context, s *session, arg string) (string, error) {
	if !strings.Contains(arg, "://") {
		return arg, nil
	}
	resp, err := s.agents().GetAgent(ctx, agentKey(arg))
	if err != nil {
		return "", err
	}
	return resp.GetAgent().GetId(), nil
}

func agentFields(w io.Writer, a *pactv1.Agent) {
	row(w, "id", a.GetId())
	row(w, "issuer", a.GetIssuer())
	row(w, "jwks uri", a.GetJwksUri())
	row(w, "name", a.GetDisplayName())
	row(w, "audience", a.GetAudience())
	row(w, "enabled", yesNo(a.GetEnabled()))
	row(w, "created", when(a.GetCreateTime()))
	row(w, "updated", when(a.GetUpdateTime()))
}

// required refuses a command line that lacks a required flag, naming it.
func required(op string, flags map[string]string) error {
	var missing []string
	for name, v := range flags {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return usageError("%s: %s required", op, strings.Join(missing, ", ")+map[bool]string{true: " is", false: " are"}[len(missing) == 1])
}

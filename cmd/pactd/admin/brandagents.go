package admin

import (
	"context"
	"flag"
	"fmt"
	"io"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// brandAgentCommands manage a Brand's agent policy: which enabled PAs may
// call it (SetBrandAgentPolicy, AddBrandAgent, RemoveBrandAgent,
// ListBrandAgents).
func brandAgentCommands() []*command {
	return []*command{
		{group: "brand", name: "agent-policy", args: "ID all|listed", summary: "admit every enabled PA (all, the default) or only the Brand's listed ones", minArgs: 2, maxArgs: 2,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					var p pactv1.BrandAgentPolicy
					switch args[1] {
					case "all":
						p = pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_ALL
					case "listed":
						p = pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED
					default:
						return usageError("%s: the policy must be all or listed, not %q", s.op, args[1])
					}
					resp, err := s.brands().SetBrandAgentPolicy(ctx, &pactv1.SetBrandAgentPolicyRequest{BrandId: args[0], Policy: p})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "Brand %s now admits %s\n", args[0], policyWords(resp.GetBrand().GetAgentPolicy()))
					})
				}
			}},
		{group: "brand", name: "add-agent", args: "ID AGENT_ID", summary: "put a PA on the Brand's list (in force under agent-policy listed)", minArgs: 2, maxArgs: 2,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.brands().AddBrandAgent(ctx, &pactv1.AddBrandAgentRequest{BrandId: args[0], AgentId: args[1]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						if resp.GetAdded() {
							fmt.Fprintf(w, "added agent %s to Brand %s's list\n", args[1], args[0])
						} else {
							fmt.Fprintf(w, "agent %s was on Brand %s's list already\n", args[1], args[0])
						}
					})
				}
			}},
		{group: "brand", name: "remove-agent", args: "ID AGENT_ID", summary: "take a PA off the Brand's list", minArgs: 2, maxArgs: 2,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.brands().RemoveBrandAgent(ctx, &pactv1.RemoveBrandAgentRequest{BrandId: args[0], AgentId: args[1]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { fmt.Fprintf(w, "removed agent %s from Brand %s's list\n", args[1], args[0]) })
				}
			}},
		{group: "brand", name: "agents", args: "ID", summary: "show the Brand's agent policy and its listed PAs", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, args []string) error {
					resp := &pactv1.ListBrandAgentsResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.brands().ListBrandAgents(ctx, &pactv1.ListBrandAgentsRequest{BrandId: args[0], Page: page})
						if err != nil {
							return "", err
						}
						resp.Policy = r.GetPolicy()
						resp.Agents = append(resp.Agents, r.GetAgents()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "Brand %s admits %s\n", args[0], policyWords(resp.GetPolicy()))
						row(w, "AGENT", "NAME", "ADDED")
						for _, a := range resp.GetAgents() {
							row(w, a.GetAgentId(), a.GetDisplayName(), when(a.GetAddTime()))
						}
						p.footer(w, next)
					})
				}
			}},
	}
}

// policyWords says what a policy admits.
func policyWords(p pactv1.BrandAgentPolicy) string {
	if p == pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED {
		return "only its listed PAs"
	}
	return "every enabled PA"
}

// policyName is a policy as agent-policy takes it.
func policyName(p pactv1.BrandAgentPolicy) string {
	if p == pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED {
		return "listed"
	}
	return "all"
}

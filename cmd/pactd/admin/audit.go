package admin

import (
	"context"
	"flag"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// auditKind reads -kind: the AuditEventKind name, with or without its
// AUDIT_EVENT_KIND_ prefix, in any case, '-' for '_' ("grant-revoked").
func auditKind(s string) (pactv1.AuditEventKind, bool) {
	if s == "" {
		return pactv1.AuditEventKind_AUDIT_EVENT_KIND_UNSPECIFIED, true
	}
	name := strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
	if !strings.HasPrefix(name, "AUDIT_EVENT_KIND_") {
		name = "AUDIT_EVENT_KIND_" + name
	}
	v, ok := pactv1.AuditEventKind_value[name]
	if !ok || v == 0 {
		return 0, false
	}
	return pactv1.AuditEventKind(v), true
}

// auditKindNames are the -kind values, for the usage and errors.
func auditKindNames() string {
	var out []string
	for i := int32(1); ; i++ {
		name, ok := pactv1.AuditEventKind_name[i]
		if !ok {
			return strings.Join(out, ", ")
		}
		out = append(out, strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "AUDIT_EVENT_KIND_"), "_", "-")))
	}
}

// auditTime reads -since/-until: an RFC 3339 time, or a duration meaning
// that long before now ("24h").
func auditTime(flagName, s string, now time.Time) (*timestamppb.Timestamp, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return timestamppb.New(t), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return timestamppb.New(now.Add(-d)), nil
	}
	return nil, usageError("%s %q is neither an RFC 3339 time (2026-12-01T09:00:00Z) nor a duration before now (24h)", flagName, s)
}

func auditCommands() []*command {
	return []*command{
		{group: "audit", name: "list", args: "[-brand ID] [-user USER] [-agent ID] [-grant ID] [-kind KIND] [-since T] [-until T]",
			summary: "list the audit trail (signed receipts and grant events), oldest first",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				brand := fs.String("brand", "", "only this Brand's events (`id`)")
				user := fs.String("user", "", "only this Brand `user`'s events (needs -brand)")
				agent := fs.String("agent", "", "only this PA's events (pactd's agent `id`)")
				grant := fs.String("grant", "", "only this grant's events (`id`)")
				kind := fs.String("kind", "", "only events of this `kind`: "+auditKindNames())
				since := fs.String("since", "", "only events at or after `T`: an RFC 3339 time or a duration before now (24h)")
				until := fs.String("until", "", "only events before `T` (as -since)")
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					k, ok := auditKind(*kind)
					if !ok {
						return usageError("-kind %q is not one of %s", *kind, auditKindNames())
					}
					now := time.Now()
					start, err := auditTime("-since", *since, now)
					if err != nil {
						return err
					}
					end, err := auditTime("-until", *until, now)
					if err != nil {
						return err
					}
					f := &pactv1.AuditFilter{BrandUser: *user, AgentId: *agent, GrantId: *grant, Kind: k, StartTime: start, EndTime: end}
					resp := &pactv1.ListAuditEventsResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.audit().ListAuditEvents(ctx, &pactv1.ListAuditEventsRequest{BrandId: *brand, Filter: f, Page: page})
						if err != nil {
							return "", err
						}
						resp.Events = append(resp.Events, r.GetEvents()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "ID", "TIME", "KIND", "BRAND", "USER", "AGENT", "GRANT", "SCOPES", "ACTIONS", "ACTOR")
						for _, e := range resp.GetEvents() {
							var tools []string
							for _, a := range e.GetActions() {
								tools = append(tools, a.GetTool())
							}
							row(w, e.GetId(), when(e.GetTime()), strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(e.GetKind().String(), "AUDIT_EVENT_KIND_"), "_", "-")),
								e.GetBrandId(), e.GetBrandUser(), e.GetAgentId(), e.GetGrantId(), strings.Join(e.GetScopes(), " "), strings.Join(tools, " "), e.GetActor())
						}
						p.footer(w, next)
					})
				}
			}},
	}
}

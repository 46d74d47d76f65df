package admin

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// webhookFilterFlags are the filters create and update take.
type webhookFilterFlags struct {
	fs                *flag.FlagSet
	url, desc         string
	kinds, brands     string
	enabled, disabled bool
}

func addWebhookFlags(fs *flag.FlagSet, withURL bool) *webhookFilterFlags {
	f := &webhookFilterFlags{fs: fs}
	if withURL {
		fs.StringVar(&f.url, "url", "", "the https `URL` deliveries are POSTed to")
	}
	fs.StringVar(&f.desc, "description", "", "a note on the destination (`text`)")
	fs.StringVar(&f.kinds, "kinds", "", "send only these event `kinds`, comma-separated: "+auditKindNames()+" (empty: every kind)")
	fs.StringVar(&f.brands, "brands", "", "send only these Brands' events, comma-separated `ids` (empty: every event)")
	return f
}

func (f *webhookFilterFlags) given(name string) bool { return given(f.fs, name) }

// given reports whether the flag name was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	seen := false
	fs.Visit(func(fl *flag.Flag) { seen = seen || fl.Name == name })
	return seen
}

// eventKinds reads -kinds.
func (f *webhookFilterFlags) eventKinds() ([]pactv1.AuditEventKind, error) {
	var out []pactv1.AuditEventKind
	for _, k := range splitList(f.kinds) {
		v, ok := auditKind(k)
		if !ok || v == pactv1.AuditEventKind_AUDIT_EVENT_KIND_UNSPECIFIED {
			return nil, usageError("-kinds: %q is not one of %s", k, auditKindNames())
		}
		out = append(out, v)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// kindName is an AuditEventKind as the commands write it (grant-revoked).
func kindName(k pactv1.AuditEventKind) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k.String(), "AUDIT_EVENT_KIND_"), "_", "-"))
}

func kindNames(ks []pactv1.AuditEventKind) string {
	if len(ks) == 0 {
		return "all"
	}
	var out []string
	for _, k := range ks {
		out = append(out, kindName(k))
	}
	return strings.Join(out, ",")
}

// lag is how long the oldest pending delivery has waited, or "-".
func lag(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return "-"
	}
	return time.Since(ts.AsTime()).Round(time.Second).String()
}

func webhookFields(w io.Writer, h *pactv1.Webhook) {
	st := h.GetDeliveryState()
	brands := strings.Join(h.GetBrandIds(), ",")
	if brands == "" {
		brands = "all"
	}
	row(w, "id", h.GetWebhookId())
	row(w, "url", h.GetUrl())
	row(w, "description", h.GetDescription())
	row(w, "enabled", fmt.Sprint(h.GetEnabled()))
	row(w, "kinds", kindNames(h.GetEventKinds()))
	row(w, "brands", brands)
	row(w, "pending", fmt.Sprint(st.GetPending()))
	row(w, "dead", fmt.Sprint(st.GetDead()))
	row(w, "delivered", fmt.Sprint(st.GetDelivered()))
	row(w, "lag", lag(st.GetOldestPendingTime()))
	row(w, "last delivered", when(st.GetLastDeliveredTime()))
	row(w, "last failure", when(st.GetLastFailureTime()))
	row(w, "last error", st.GetLastFailureError())
	row(w, "previous secret valid until", when(h.GetPreviousSecretExpireTime()))
}

var deliveryStatuses = map[string]pactv1.WebhookDeliveryStatus{
	"":          pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_UNSPECIFIED,
	"pending":   pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_PENDING,
	"delivered": pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_DELIVERED,
	"dead":      pactv1.WebhookDeliveryStatus_WEBHOOK_DELIVERY_STATUS_DEAD,
}

func statusName(s pactv1.WebhookDeliveryStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "WEBHOOK_DELIVERY_STATUS_"))
}

func webhookCommands() []*command {
	return []*command{
		{group: "webhook", name: "create", args: "-url URL [-kinds K,…] [-brands ID,…]",
			summary: "add a destination audit events are pushed to; prints its signing secret once",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				f := addWebhookFlags(fs, true)
				disabled := fs.Bool("disabled", false, "create it disabled (no events are queued until enabled)")
				return func(ctx context.Context, s *session, _ []string) error {
					if err := required(s.op, map[string]string{"-url": f.url}); err != nil {
						return err
					}
					kinds, err := f.eventKinds()
					if err != nil {
						return err
					}
					resp, err := s.webhooks().CreateWebhook(ctx, &pactv1.CreateWebhookRequest{Url: f.url, Description: f.desc, EventKinds: kinds,
						BrandIds: splitList(f.brands), Disabled: *disabled})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "created webhook %s; its signing secret is shown only this once:\n\n    %s\n\n", resp.GetWebhook().GetWebhookId(), resp.GetSecret())
						webhookFields(w, resp.GetWebhook())
					})
				}
			}},
		{group: "webhook", name: "list", summary: "list the destinations with their delivery state (pending, dead, lag, last error)",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					resp := &pactv1.ListWebhooksResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.webhooks().ListWebhooks(ctx, &pactv1.ListWebhooksRequest{Page: page})
						if err != nil {
							return "", err
						}
						resp.Webhooks = append(resp.Webhooks, r.GetWebhooks()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "WEBHOOK", "URL", "ENABLED", "KINDS", "PENDING", "DEAD", "DELIVERED", "LAG", "LAST ERROR")
						for _, h := range resp.GetWebhooks() {
							st := h.GetDeliveryState()
							row(w, h.GetWebhookId(), h.GetUrl(), fmt.Sprint(h.GetEnabled()), kindNames(h.GetEventKinds()), fmt.Sprint(st.GetPending()),
								fmt.Sprint(st.GetDead()), fmt.Sprint(st.GetDelivered()), lag(st.GetOldestPendingTime()),
								st.GetLastFailureError())
						}
						p.footer(w, next)
					})
				}
			}},
		{group: "webhook", name: "get", args: "ID", summary: "show a destination and its delivery state", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.webhooks().GetWebhook(ctx, &pactv1.GetWebhookRequest{WebhookId: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { webhookFields(w, resp.GetWebhook()) })
				}
			}},
		{group: "webhook", name: "update", args: "ID [-url URL] [-description D] [-kinds K,…] [-brands ID,…] [-enable|-disable]",
			summary: "change a destination (only the flags given)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				f := addWebhookFlags(fs, true)
				fs.BoolVar(&f.enabled, "enable", false, "queue new events for it again")
				fs.BoolVar(&f.disabled, "disable", false, "stop queueing and sending events (queued ones wait)")
				return func(ctx context.Context, s *session, args []string) error {
					h := &pactv1.Webhook{WebhookId: args[0], Url: f.url, Description: f.desc, BrandIds: splitList(f.brands)}
					var paths []string
					for flagName, path := range map[string]string{"url": "url", "description": "description", "kinds": "event_kinds", "brands": "brand_ids"} {
						if f.given(flagName) {
							paths = append(paths, path)
						}
					}
					var err error
					if h.EventKinds, err = f.eventKinds(); err != nil {
						return err
					}
					switch {
					case f.enabled && f.disabled:
						return usageError("%s: -enable and -disable contradict each other", s.op)
					case f.enabled || f.disabled:
						h.Enabled = f.enabled
						paths = append(paths, "enabled")
					}
					if len(paths) == 0 {
						return usageError("%s: give at least one of -url, -description, -kinds, -brands, -enable, -disable", s.op)
					}
					resp, err := s.webhooks().UpdateWebhook(ctx, &pactv1.UpdateWebhookRequest{Webhook: h, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "updated webhook %s\n", args[0])
						webhookFields(w, resp.GetWebhook())
					})
				}
			}},
		{group: "webhook", name: "delete", args: "ID", summary: "delete a destination and the deliveries queued for it", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.webhooks().DeleteWebhook(ctx, &pactv1.DeleteWebhookRequest{WebhookId: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { fmt.Fprintf(w, "deleted webhook %s\n", args[0]) })
				}
			}},
		{group: "webhook", name: "rotate-secret", args: "ID [-overlap 24h]",
			summary: "replace a destination's signing secret, the old one still signing during the overlap; prints the new one once", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				overlap := fs.Duration("overlap", 24*time.Hour,
					"how long the old secret stays valid, deliveries signed with both meanwhile (`duration`, 0 to 168h; 0 drops it at once)")
				return func(ctx context.Context, s *session, args []string) error {
					req := &pactv1.RotateWebhookSecretRequest{WebhookId: args[0]}
					if given(fs, "overlap") {
						req.PreviousValidFor = durationpb.New(*overlap) // otherwise the server's default, the same 24h
					}
					resp, err := s.webhooks().RotateWebhookSecret(ctx, req)
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "new signing secret of webhook %s, shown only this once:\n\n    %s\n\n", args[0], resp.GetSecret())
						if end := resp.GetPreviousSecretExpireTime(); end != nil {
							fmt.Fprintf(w, "until %s deliveries are signed with the new and the old secret: give the receiver the new one before then\n",
								when(end))
						} else {
							fmt.Fprintf(w, "the old secret is no longer valid: deliveries are signed with the new one alone\n")
						}
					})
				}
			}},
		{group: "webhook", name: "deliveries", args: "[-webhook ID] [-status pending|delivered|dead]",
			summary: "list deliveries, newest first, with their attempts and last error",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				id := fs.String("webhook", "", "only this destination's deliveries (`id`)")
				status := fs.String("status", "", "only deliveries in this `status`: pending, delivered or dead")
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					st, ok := deliveryStatuses[*status]
					if !ok {
						return usageError("-status %q is not one of pending, delivered, dead", *status)
					}
					resp := &pactv1.ListWebhookDeliveriesResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.webhooks().ListWebhookDeliveries(ctx, &pactv1.ListWebhookDeliveriesRequest{WebhookId: *id, Status: st, Page: page})
						if err != nil {
							return "", err
						}
						resp.Deliveries = append(resp.Deliveries, r.GetDeliveries()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "DELIVERY", "WEBHOOK", "EVENT", "KIND", "BRAND", "STATUS", "ATTEMPTS", "NEXT", "LAST ATTEMPT", "HTTP", "LAST ERROR")
						for _, d := range resp.GetDeliveries() {
							row(w, d.GetDeliveryId(), d.GetWebhookId(), d.GetEventId(), kindName(d.GetEventKind()), d.GetBrandId(), statusName(d.GetStatus()),
								fmt.Sprint(d.GetAttempts()), when(d.GetNextAttemptTime()), when(d.GetLastAttemptTime()), fmt.Sprint(d.GetLastStatus()), d.GetLastError())
						}
						p.footer(w, next)
					})
				}
			}},
		{group: "webhook", name: "retry", args: "ID [-delivery DELIVERY]", summary: "send a destination's dead deliveries again (all, or one)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				one := fs.String("delivery", "", "only this dead delivery (`id`)")
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.webhooks().RetryWebhookDeliveries(ctx, &pactv1.RetryWebhookDeliveriesRequest{WebhookId: args[0], DeliveryId: *one})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "%d dead deliveries of webhook %s are pending again\n", resp.GetRetried(), args[0])
					})
				}
			}},
	}
}

package console

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/paging"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// auditPage is how many events a page of the trail shows.
const auditPage = 50

// auditQuery is the trail's filters as the form sends them.
type auditQuery struct {
	Brand, User, Agent, Grant, Kind, Since, Until string
}

func auditQueryOf(v url.Values) auditQuery {
	return auditQuery{Brand: v.Get("brand"), User: v.Get("user"), Agent: v.Get("agent"), Grant: v.Get("grant"), Kind: v.Get("kind"),
		Since: v.Get("since"), Until: v.Get("until")}
}

func (q auditQuery) values() url.Values {
	v := url.Values{}
	for k, x := range map[string]string{"brand": q.Brand, "user": q.User, "agent": q.Agent, "grant": q.Grant, "kind": q.Kind, "since": q.Since, "until": q.Until} {
		if x != "" {
			v.Set(k, x)
		}
	}
	return v
}

// auditKinds are the kind filter's choices (every kind but UNSPECIFIED).
var auditKinds = func() []pactv1.AuditEventKind {
	var out []pactv1.AuditEventKind
	for k := range len(pactv1.AuditEventKind_name) {
		if k != 0 {
			out = append(out, pactv1.AuditEventKind(k))
		}
	}
	return out
}()

// auditListData is the trail page.
type auditListData struct {
	Query  auditQuery
	Events []*pactv1.AuditEvent
	// Next is the URL of the next page, "" on the last.
	Next string
}

// Kinds lists the kind filter's choices.
func (auditListData) Kinds() []pactv1.AuditEventKind { return auditKinds }

// request turns the form into ListAuditEventsRequest: the kind by name,
// the dates as whole UTC days (until included).
func (q auditQuery) request(page string) (*pactv1.ListAuditEventsRequest, string) {
	f := &pactv1.AuditFilter{BrandUser: q.User, AgentId: q.Agent, GrantId: q.Grant}
	if q.Kind != "" {
		k, ok := pactv1.AuditEventKind_value[q.Kind]
		if !ok || k == 0 {
			return nil, "Refused: kind: not an audit event kind."
		}
		f.Kind = pactv1.AuditEventKind(k)
	}
	for _, d := range []struct {
		name, val string
		set       func(time.Time)
	}{
		{"since", q.Since, func(t time.Time) { f.StartTime = timestamppb.New(t) }},
		{"until", q.Until, func(t time.Time) { f.EndTime = timestamppb.New(t.AddDate(0, 0, 1)) }},
	} {
		if d.val == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, d.val)
		if err != nil {
			return nil, "Refused: " + d.name + ": a date as YYYY-MM-DD."
		}
		d.set(t)
	}
	return &pactv1.ListAuditEventsRequest{BrandId: q.Brand, Filter: f, Page: &pactv1.PageRequest{PageSize: auditPage, PageToken: page}}, ""
}

// auditList is AuditService.ListAuditEvents with the page's filters.
func (c *Console) auditList(w http.ResponseWriter, r *http.Request, s session) {
	q := auditQueryOf(r.URL.Query())
	d := auditListData{Query: q}
	status := http.StatusOK
	req, msg := q.request(r.URL.Query().Get("page"))
	if req != nil {
		res, err := c.d.Audit.ListAuditEvents(s.ctx, req)
		if err != nil {
			status, msg = reason(err)
		} else {
			d.Events = res.GetEvents()
			if n := res.GetNextPageToken(); n != "" {
				v := q.values()
				v.Set("page", n)
				d.Next = "/audit?" + v.Encode()
			}
		}
	} else {
		status = http.StatusBadRequest
	}
	c.render(w, r, status, "audit", view{Title: "Audit trail", CSRF: s.csrf, Error: msg, Data: d})
}

// auditEventData is one event's page.
type auditEventData struct {
	Event *pactv1.AuditEvent
}

// Receipt reports whether the event is a signed receipt.
func (d auditEventData) Receipt() bool {
	return d.Event.GetKind() == pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED
}

// auditEvent shows one event: the page of ListAuditEvents that starts
// right after the previous id and holds one event.
func (c *Console) auditEvent(w http.ResponseWriter, r *http.Request, s session) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != raw {
		c.render(w, r, http.StatusNotFound, "message", view{Title: "Audit event", CSRF: s.csrf, Error: "Refused: not an audit event id."})
		return
	}
	tok := ""
	if id > 1 {
		tok = paging.Next(1, 1, db.AuditPageToken(id-1))
	}
	res, err := c.d.Audit.ListAuditEvents(s.ctx, &pactv1.ListAuditEventsRequest{Page: &pactv1.PageRequest{PageSize: 1, PageToken: tok}})
	if err != nil {
		status, msg := reason(err)
		c.render(w, r, status, "message", view{Title: "Audit event", CSRF: s.csrf, Error: msg})
		return
	}
	if ev := res.GetEvents(); len(ev) != 1 || ev[0].GetId() != raw {
		c.render(w, r, http.StatusNotFound, "message", view{Title: "Audit event " + raw, CSRF: s.csrf,
			Error: "There is no audit event " + raw + " (it may have been pruned: PACT_AUDIT_RETENTION)."})
		return
	}
	c.render(w, r, http.StatusOK, "event", view{Title: "Audit event " + raw, CSRF: s.csrf, Data: auditEventData{Event: res.GetEvents()[0]}})
}

// kindLabel is an event kind in words.
func kindLabel(k pactv1.AuditEventKind) string {
	switch k {
	case pactv1.AuditEventKind_AUDIT_EVENT_KIND_RECEIPT_SIGNED:
		return "receipt signed"
	case pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_CREATED:
		return "grant created"
	case pactv1.AuditEventKind_AUDIT_EVENT_KIND_CONSENT_SKIPPED:
		return "consent skipped"
	case pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REDEEMED:
		return "grant redeemed"
	case pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REFRESHED:
		return "grant refreshed"
	case pactv1.AuditEventKind_AUDIT_EVENT_KIND_STEP_UP:
		return "step-up"
	case pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REVOKED:
		return "grant revoked"
	case pactv1.AuditEventKind_AUDIT_EVENT_KIND_GRANT_REUSE_REVOKED:
		return "revoked on refresh-token reuse"
	}
	return k.String()
}

// policyLabel is a Brand's PA policy in words.
func policyLabel(p pactv1.BrandAgentPolicy) string {
	if p == pactv1.BrandAgentPolicy_BRAND_AGENT_POLICY_LISTED {
		return "only the PAs on its list"
	}
	return "every enabled PA"
}

// loginModeLabel is a Brand's login mode in words.
func loginModeLabel(m pactv1.BrandLoginMode) string {
	if m == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND {
		return "trusted frontend"
	}
	return "signed assertion"
}

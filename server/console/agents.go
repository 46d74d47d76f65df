package console

import (
	"errors"
	"log/slog"
	"net/http"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// agentListData is the PAs page: the self-registrations waiting for an
// operator, one page of every PA, and the register form.
type agentListData struct {
	Pending []pendingAgent
	Agents  []*pactv1.Agent
	Next    string
	// Form is what the register form shows again after a refusal.
	Form struct{ Issuer, JWKSURI, Name string }
}

// pendingAgent is a PA that registered itself while
// PACT_SELF_REGISTRATION was pending: created disabled, unchanged since.
type pendingAgent struct {
	*pactv1.Agent
	// Name is the name it registered under.
	Name string
}

func (c *Console) agentList(w http.ResponseWriter, r *http.Request, s session) {
	c.showAgents(w, r, s, http.StatusOK, "", agentListData{})
}

func (c *Console) showAgents(w http.ResponseWriter, r *http.Request, s session, status int, msg string, d agentListData) {
	ids, err := c.d.Store.ListPendingAgentIDs(s.ctx, "", listPage)
	if err != nil {
		c.d.Logger.ErrorContext(s.ctx, "console: pending agents", slog.String("error", err.Error()))
		if msg == "" {
			status, msg = http.StatusServiceUnavailable, "The PAs waiting for approval could not be read; try again."
		}
	}
	for _, id := range ids {
		a, err := c.d.Agents.GetAgent(s.ctx, &pactv1.GetAgentRequest{Key: &pactv1.GetAgentRequest_Id{Id: id}})
		if err != nil {
			continue // deleted since
		}
		name, err := c.d.Store.GetAgentRegistrationName(s.ctx, id)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			c.d.Logger.WarnContext(s.ctx, "console: registration name", slog.String("error", err.Error()))
		}
		d.Pending = append(d.Pending, pendingAgent{Agent: a.GetAgent(), Name: name})
	}
	res, err := c.d.Agents.ListAgents(s.ctx, &pactv1.ListAgentsRequest{Page: &pactv1.PageRequest{PageSize: listPage, PageToken: r.URL.Query().Get("page")}})
	if err != nil && msg == "" {
		status, msg = reason(err)
	}
	d.Agents, d.Next = res.GetAgents(), res.GetNextPageToken()
	c.render(w, r, status, "agents", view{Title: "Personal agents (PAs)", CSRF: s.csrf, Error: msg, Data: d})
}

// registerAgent is AgentService.RegisterAgent.
func (c *Console) registerAgent(w http.ResponseWriter, r *http.Request, s session) {
	f := r.PostForm
	req := &pactv1.RegisterAgentRequest{Issuer: f.Get("issuer"), JwksUri: f.Get("jwks_uri"), DisplayName: f.Get("display_name")}
	if _, err := c.d.Agents.RegisterAgent(s.ctx, req); err != nil {
		status, msg := reason(err)
		var d agentListData
		d.Form.Issuer, d.Form.JWKSURI, d.Form.Name = req.GetIssuer(), req.GetJwksUri(), req.GetDisplayName()
		c.showAgents(w, r, s, status, msg, d)
		return
	}
	done(w, r, "/agents", "registered")
}

// changeAgent enables, disables or approves a PA with
// AgentService.UpdateAgent (the enabled field). Approving a pending
// self-registration is enabling it: that is all a pending registration
// waits for (the Brand lists of PAs are each Brand's own, on its page).
func (c *Console) changeAgent(w http.ResponseWriter, r *http.Request, s session) {
	id := r.PathValue("id")
	var enable bool
	change := r.PathValue("change")
	switch change {
	case "enable", "approve":
		enable = true
	case "disable":
	default:
		c.notFound(w, r)
		return
	}
	_, err := c.d.Agents.UpdateAgent(s.ctx, &pactv1.UpdateAgentRequest{Agent: &pactv1.Agent{Id: id, Enabled: enable},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled"}}})
	if err != nil {
		status, msg := reason(err)
		c.showAgents(w, r, s, status, msg, agentListData{})
		return
	}
	c.d.Logger.InfoContext(s.ctx, "console: agent "+change+"d", slog.String("agent_id", id))
	done(w, r, "/agents", map[string]string{"enable": "enabled", "approve": "approved", "disable": "disabled"}[change])
}

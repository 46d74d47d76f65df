package console

import (
	"net/http"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// credentialListData is the credentials page.
type credentialListData struct {
	Credentials []*pactv1.Credential
	Next        string
	// Form is what the create form shows again after a refusal.
	Form struct{ Name, Role, Expires string }
}

func (c *Console) credentialList(w http.ResponseWriter, r *http.Request, s session) {
	c.showCredentials(w, r, s, http.StatusOK, "", credentialListData{})
}

func (c *Console) showCredentials(w http.ResponseWriter, r *http.Request, s session, status int, msg string, d credentialListData) {
	res, err := c.d.Credentials.ListCredentials(s.ctx, &pactv1.ListCredentialsRequest{Page: &pactv1.PageRequest{PageSize: listPage, PageToken: r.URL.Query().Get("page")}})
	if err != nil && msg == "" {
		status, msg = reason(err)
	}
	d.Credentials, d.Next = res.GetCredentials(), res.GetNextPageToken()
	c.render(w, r, status, "credentials", view{Title: "Credentials", CSRF: s.csrf, Error: msg, Data: d})
}

// createdData is the page that shows a new credential's token, once.
type createdData struct {
	Credential *pactv1.Credential
	Token      string
}

// createCredential is CredentialService.CreateCredential. The token is on
// the answer to this POST only (no redirect, Cache-Control: no-store):
// pactd keeps its hash alone.
func (c *Console) createCredential(w http.ResponseWriter, r *http.Request, s session) {
	f := r.PostForm
	req := &pactv1.CreateCredentialRequest{Name: f.Get("name"), Role: pactv1.CallerRole(pactv1.CallerRole_value[f.Get("role")])}
	refuse := func(status int, msg string) {
		var d credentialListData
		d.Form.Name, d.Form.Role, d.Form.Expires = f.Get("name"), f.Get("role"), f.Get("expires")
		c.showCredentials(w, r, s, status, msg, d)
	}
	if e := f.Get("expires"); e != "" {
		t, err := time.Parse(time.DateOnly, e)
		if err != nil {
			refuse(http.StatusBadRequest, "Refused: expires: a date as YYYY-MM-DD.")
			return
		}
		req.ExpireTime = timestamppb.New(t)
	}
	res, err := c.d.Credentials.CreateCredential(s.ctx, req)
	if err != nil {
		refuse(reason(err))
		return
	}
	c.d.Logger.InfoContext(s.ctx, "console: credential created", "credential_id", res.GetCredential().GetId())
	c.render(w, r, http.StatusCreated, "created", view{Title: "Credential created", CSRF: s.csrf, Data: createdData{Credential: res.GetCredential(), Token: res.GetToken()}})
}

// revokeCredential is CredentialService.RevokeCredential. Revoking the
// credential this session signed in with ends the session too.
func (c *Console) revokeCredential(w http.ResponseWriter, r *http.Request, s session) {
	id := r.PathValue("id")
	if _, err := c.d.Credentials.RevokeCredential(s.ctx, &pactv1.RevokeCredentialRequest{Id: id}); err != nil {
		status, msg := reason(err)
		c.showCredentials(w, r, s, status, msg, credentialListData{})
		return
	}
	c.d.Logger.InfoContext(s.ctx, "console: credential revoked", "credential_id", id)
	done(w, r, "/credentials", "credential")
}

// roleLabel is a caller role in words.
func roleLabel(r pactv1.CallerRole) string {
	switch r {
	case pactv1.CallerRole_CALLER_ROLE_ADMIN:
		return "admin"
	case pactv1.CallerRole_CALLER_ROLE_FRONTEND:
		return "frontend"
	}
	return r.String()
}

// webhookListData is the webhooks page: each destination with its
// delivery state.
type webhookListData struct {
	Webhooks []*pactv1.Webhook
	Next     string
}

// webhooks is the audit webhooks' page: each destination, its filters and
// its delivery state (pending, dead, delivered, the oldest pending event's
// age, the last failure), from WebhookService.ListWebhooks.
func (c *Console) webhooks(w http.ResponseWriter, r *http.Request, s session) {
	c.showWebhooks(w, r, s, http.StatusOK, "")
}

func (c *Console) showWebhooks(w http.ResponseWriter, r *http.Request, s session, status int, msg string) {
	res, err := c.d.Webhooks.ListWebhooks(s.ctx, &pactv1.ListWebhooksRequest{Page: &pactv1.PageRequest{PageSize: listPage, PageToken: r.URL.Query().Get("page")}})
	if err != nil && msg == "" {
		status, msg = reason(err)
	}
	c.render(w, r, status, "webhooks", view{Title: "Webhooks", CSRF: s.csrf, Error: msg,
		Data: webhookListData{Webhooks: res.GetWebhooks(), Next: res.GetNextPageToken()}})
}

// retryWebhook is WebhookService.RetryWebhookDeliveries for every dead
// delivery of one destination.
func (c *Console) retryWebhook(w http.ResponseWriter, r *http.Request, s session) {
	id := r.PathValue("id")
	res, err := c.d.Webhooks.RetryWebhookDeliveries(s.ctx, &pactv1.RetryWebhookDeliveriesRequest{WebhookId: id})
	if err != nil {
		status, msg := reason(err)
		c.showWebhooks(w, r, s, status, msg)
		return
	}
	c.d.Logger.InfoContext(s.ctx, "console: webhook deliveries retried", "webhook_id", id, "retried", res.GetRetried())
	done(w, r, "/webhooks", "retried")
}

package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// listPage is how many rows a list page asks for.
const listPage = 100

// brandListData is the Brands page: one page of Brands and the next
// page's token.
type brandListData struct {
	Brands []*pactv1.Brand
	Next   string
	// Form is what the create form shows again after a refusal.
	Form struct{ ID, Name, Description string }
}

func (c *Console) brandList(w http.ResponseWriter, r *http.Request, s session) {
	c.showBrands(w, r, s, http.StatusOK, "", brandListData{})
}

func (c *Console) showBrands(w http.ResponseWriter, r *http.Request, s session, status int, msg string, d brandListData) {
	res, err := c.d.Brands.ListBrands(s.ctx, &pactv1.ListBrandsRequest{Page: &pactv1.PageRequest{PageSize: listPage, PageToken: r.URL.Query().Get("page")}})
	if err != nil {
		status, msg = reason(err)
	}
	d.Brands, d.Next = res.GetBrands(), res.GetNextPageToken()
	c.render(w, r, status, "brands", view{Title: "Brands", CSRF: s.csrf, Error: msg, Data: d})
}

// createBrand is BrandService.CreateBrand with an id, a name and a
// description; the rest is set on the Brand's page.
func (c *Console) createBrand(w http.ResponseWriter, r *http.Request, s session) {
	f := r.PostForm
	req := &pactv1.CreateBrandRequest{BrandId: f.Get("brand_id"), DisplayName: f.Get("display_name"), Description: f.Get("description")}
	res, err := c.d.Brands.CreateBrand(s.ctx, req)
	if err != nil {
		status, msg := reason(err)
		var d brandListData
		d.Form.ID, d.Form.Name, d.Form.Description = req.GetBrandId(), req.GetDisplayName(), req.GetDescription()
		c.showBrands(w, r, s, status, msg, d)
		return
	}
	done(w, r, "/brands/"+url.PathEscape(res.GetBrand().GetBrandId()), "brand")
}

// brandData is one Brand's page: its settings, consent wording, login,
// PA policy and list, and the PAs that could be put on the list.
type brandData struct {
	Brand *pactv1.Brand
	// Listed are the PAs on the Brand's list (the first page).
	Listed []*pactv1.BrandAgent
	// Agents are the registered PAs (the first page), for the add form.
	Agents []*pactv1.Agent
	// Edit is what the edit form shows: the Brand's values, or after a
	// refusal the values sent.
	Edit brandEdit
}

// brandEdit is the edit form's values.
type brandEdit struct {
	Name, Description, LoginURL, Scopes string
	Delegation                          bool
	LoginMode                           pactv1.BrandLoginMode
}

// loginModes are the choices of the edit form.
var loginModes = []pactv1.BrandLoginMode{pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION, pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND}

// LoginModes lists the edit form's login modes.
func (brandData) LoginModes() []pactv1.BrandLoginMode { return loginModes }

func (c *Console) brandPage(w http.ResponseWriter, r *http.Request, s session) {
	c.showBrand(w, r, s, http.StatusOK, "", nil)
}

// showBrand renders a Brand's page; edit, when not nil, is the refused
// edit form's values.
func (c *Console) showBrand(w http.ResponseWriter, r *http.Request, s session, status int, msg string, edit *brandEdit) {
	id := r.PathValue("id")
	res, err := c.d.Brands.GetBrand(s.ctx, &pactv1.GetBrandRequest{BrandId: id})
	if err != nil {
		st, m := reason(err)
		c.render(w, r, st, "message", view{Title: "Brand " + id, CSRF: s.csrf, Error: m})
		return
	}
	d := brandData{Brand: res.GetBrand()}
	if edit != nil {
		d.Edit = *edit
	} else {
		b, del := d.Brand, d.Brand.GetDelegation()
		d.Edit = brandEdit{Name: b.GetDisplayName(), Description: b.GetDescription(), Delegation: del.GetEnabled(),
			LoginMode: del.GetLoginMode(), LoginURL: del.GetLoginUrl(), Scopes: formatScopes(del.GetScopes())}
	}
	if la, err := c.d.Brands.ListBrandAgents(s.ctx, &pactv1.ListBrandAgentsRequest{BrandId: id, Page: &pactv1.PageRequest{PageSize: 500}}); err == nil {
		d.Listed = la.GetAgents()
	} else if msg == "" {
		status, msg = reason(err)
	}
	if ag, err := c.d.Agents.ListAgents(s.ctx, &pactv1.ListAgentsRequest{Page: &pactv1.PageRequest{PageSize: 500}}); err == nil {
		d.Agents = ag.GetAgents()
	} else if msg == "" {
		status, msg = reason(err)
	}
	c.render(w, r, status, "brand", view{Title: d.Brand.GetDisplayName(), CSRF: s.csrf, Error: msg, Data: d})
}

// updateBrand is BrandService.UpdateBrand of the display name, the
// description and the delegation settings: the form's delegation fields
// replace those of the Brand's current settings, which keep the rest
// (assertion issuer and keys, authorization_details types, consent skip).
func (c *Console) updateBrand(w http.ResponseWriter, r *http.Request, s session) {
	id, f := r.PathValue("id"), r.PostForm
	edit := brandEdit{Name: f.Get("display_name"), Description: f.Get("description"), Delegation: f.Get("delegation") == "on",
		LoginURL: f.Get("login_url"), Scopes: f.Get("scopes")}
	edit.LoginMode = pactv1.BrandLoginMode(pactv1.BrandLoginMode_value[f.Get("login_mode")])
	scopes, err := parseScopes(edit.Scopes)
	if err != nil {
		c.showBrand(w, r, s, http.StatusBadRequest, "Refused: scopes: "+err.Error(), &edit)
		return
	}
	cur, err := c.d.Brands.GetBrand(s.ctx, &pactv1.GetBrandRequest{BrandId: id})
	if err != nil {
		c.showBrand(w, r, s, http.StatusNotFound, "", nil)
		return
	}
	del := &pactv1.DelegationSettings{}
	if d := cur.GetBrand().GetDelegation(); d != nil {
		del = proto.CloneOf(d)
	}
	del.Enabled, del.LoginMode, del.LoginUrl, del.Scopes = edit.Delegation, edit.LoginMode, edit.LoginURL, scopes
	_, err = c.d.Brands.UpdateBrand(s.ctx, &pactv1.UpdateBrandRequest{
		Brand:      &pactv1.Brand{BrandId: id, DisplayName: edit.Name, Description: edit.Description, Delegation: del},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"display_name", "description", "delegation"}},
	})
	if err != nil {
		status, msg := reason(err)
		c.showBrand(w, r, s, status, msg, &edit)
		return
	}
	done(w, r, "/brands/"+url.PathEscape(id), "updated")
}

// brandChange runs one change of the Brand named in the path, then shows
// its page: with the notice what, or again with the service's reason.
func (c *Console) brandChange(w http.ResponseWriter, r *http.Request, s session, what string, change func(id string) error) {
	id := r.PathValue("id")
	if err := change(id); err != nil {
		status, msg := reason(err)
		c.showBrand(w, r, s, status, msg, nil)
		return
	}
	done(w, r, "/brands/"+url.PathEscape(id), what)
}

// setPolicy is BrandService.SetBrandAgentPolicy.
func (c *Console) setPolicy(w http.ResponseWriter, r *http.Request, s session) {
	p := pactv1.BrandAgentPolicy(pactv1.BrandAgentPolicy_value[r.PostForm.Get("policy")])
	c.brandChange(w, r, s, "policy", func(id string) error {
		_, err := c.d.Brands.SetBrandAgentPolicy(s.ctx, &pactv1.SetBrandAgentPolicyRequest{BrandId: id, Policy: p})
		return err
	})
}

// listAgent is BrandService.AddBrandAgent.
func (c *Console) listAgent(w http.ResponseWriter, r *http.Request, s session) {
	c.brandChange(w, r, s, "listed", func(id string) error {
		_, err := c.d.Brands.AddBrandAgent(s.ctx, &pactv1.AddBrandAgentRequest{BrandId: id, AgentId: r.PostForm.Get("agent_id")})
		return err
	})
}

// unlistAgent is BrandService.RemoveBrandAgent.
func (c *Console) unlistAgent(w http.ResponseWriter, r *http.Request, s session) {
	c.brandChange(w, r, s, "unlisted", func(id string) error {
		_, err := c.d.Brands.RemoveBrandAgent(s.ctx, &pactv1.RemoveBrandAgentRequest{BrandId: id, AgentId: r.PostForm.Get("agent_id")})
		return err
	})
}

// maxScopeLines bounds the scopes text before it is read; the Brand
// service applies its own limits to what it holds.
const maxScopeLines = 256

// parseScopes reads the edit form's scopes: one "id = wording" a line
// (the id up to the first "=", both trimmed); blank lines are skipped.
func parseScopes(text string) ([]*pactv1.Scope, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) > maxScopeLines {
		return nil, fmt.Errorf("at most %d lines", maxScopeLines)
	}
	out := []*pactv1.Scope{}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		id, words, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: write the scope id, \"=\" and the words the consent page shows", i+1)
		}
		out = append(out, &pactv1.Scope{Id: strings.TrimSpace(id), Description: strings.TrimSpace(words)})
	}
	return out, nil
}

// formatScopes writes scopes as parseScopes reads them.
func formatScopes(scopes []*pactv1.Scope) string {
	var b strings.Builder
	for _, s := range scopes {
		b.WriteString(s.GetId() + " = " + s.GetDescription() + "\n")
	}
	return b.String()
}

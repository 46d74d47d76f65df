// Package agent implements pact.v1.AgentService: onboarding of personal
// agents (the issuers whose PACT JWTs pactd accepts).
package agent

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/paging"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/bounds"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/urlrule"
	"pactd.dev/pactd/token/regjwt"
)

// MaxDisplayName bounds an agent's display name, in characters.
const MaxDisplayName = bounds.DisplayName

// Deps are the service's collaborators.
type Deps struct {
	// Store holds the agents.
	Store Store
	// Audience is the Provider-wide audience reported for agents without an
	// override.
	Audience string
	// Dev allows http:// JWKS URIs and issuers on loopback hosts.
	Dev bool
	// AllowHosts are hosts whose https issuers and JWKS URIs may be
	// loopback, private or internal (PACT_JWKS_ALLOW_HOSTS).
	AllowHosts []string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives one line per unexpected fault.
	Logger *slog.Logger
	// OnChange, when set, is called after an agent is created, updated or
	// deleted, so caches (the verifier's) hold its new state at once.
	OnChange func(a db.Agent, deleted bool)
	// SelfRegistration is the self-service policy: SelfRegistrationOff
	// (also ""), SelfRegistrationPending or SelfRegistrationEnabled.
	SelfRegistration string
	// RegistrationKeys fetches a registering PA's JWKS under the onboarding
	// address rules; self-registration is closed without it.
	RegistrationKeys regjwt.Keys
	// OnSelfRegistration, when set, is told every outcome (for metrics).
	OnSelfRegistration func(pactv1.SelfRegistrationResult)
}

// Service implements pactv1connect.AgentServiceHandler.
type Service struct {
	pactv1connect.UnimplementedAgentServiceHandler
	d Deps
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.OnChange == nil {
		d.OnChange = func(db.Agent, bool) {}
	}
	return &Service{d: d}
}

// RegisterAgent registers an agent, idempotently.
func (s *Service) RegisterAgent(ctx context.Context, req *pactv1.RegisterAgentRequest) (*pactv1.RegisterAgentResponse, error) {
	var v rpcerr.Violations
	s.checkIssuer(&v, "issuer", req.GetIssuer())
	s.checkJWKSURI(&v, "jwks_uri", req.GetJwksUri())
	checkDisplayName(&v, "display_name", req.GetDisplayName())
	checkAudience(&v, "audience", req.GetAudience())
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := s.d.Now()
	a := db.Agent{
		ID: ids.New("agt_", now), Issuer: req.GetIssuer(), JWKSURI: req.GetJwksUri(),
		DisplayName: req.GetDisplayName(), Audience: req.GetAudience(), Enabled: true,
		CreateTime: now, UpdateTime: now,
	}
	created, err := s.d.Store.CreateAgent(ctx, a)
	if errors.Is(err, db.ErrConflict) {
		existing, gerr := s.d.Store.GetAgentByIssuer(ctx, a.Issuer)
		if gerr != nil {
			return nil, s.fault(ctx, "register agent: load existing", gerr)
		}
		if existing.JWKSURI == a.JWKSURI && existing.DisplayName == a.DisplayName && existing.Audience == a.Audience {
			return &pactv1.RegisterAgentResponse{Agent: s.toProto(existing), Created: false}, nil
		}
		return nil, rpcerr.AlreadyExists("an agent with this issuer is registered with other details")
	}
	if err != nil {
		return nil, s.fault(ctx, "register agent", err)
	}
	s.d.OnChange(created, false)
	return &pactv1.RegisterAgentResponse{Agent: s.toProto(created), Created: true}, nil
}

// GetAgent returns an agent by id or issuer.
func (s *Service) GetAgent(ctx context.Context, req *pactv1.GetAgentRequest) (*pactv1.GetAgentResponse, error) {
	var (
		a   db.Agent
		err error
	)
	switch k := req.GetKey().(type) {
	case *pactv1.GetAgentRequest_Id:
		if k.Id == "" {
			return nil, rpcerr.InvalidField("id", "is required")
		}
		a, err = s.d.Store.GetAgent(ctx, k.Id)
	case *pactv1.GetAgentRequest_Issuer:
		if k.Issuer == "" {
			return nil, rpcerr.InvalidField("issuer", "is required")
		}
		a, err = s.d.Store.GetAgentByIssuer(ctx, k.Issuer)
	default:
		return nil, rpcerr.InvalidField("key", "give id or issuer")
	}
	if err != nil {
		return nil, s.storeErr(ctx, "get agent", err)
	}
	return &pactv1.GetAgentResponse{Agent: s.toProto(a)}, nil
}

// ListAgents lists agents in id (creation) order.
func (s *Service) ListAgents(ctx context.Context, req *pactv1.ListAgentsRequest) (*pactv1.ListAgentsResponse, error) {
	p, err := paging.Parse(req.GetPage())
	if err != nil {
		return nil, err
	}
	list, err := s.d.Store.ListAgents(ctx, p.AfterID, p.Size)
	if err != nil {
		return nil, s.fault(ctx, "list agents", err)
	}
	resp := &pactv1.ListAgentsResponse{Agents: make([]*pactv1.Agent, 0, len(list))}
	for _, a := range list {
		resp.Agents = append(resp.Agents, s.toProto(a))
	}
	if len(list) > 0 {
		resp.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].ID)
	}
	return resp, nil
}

// UpdateAgent changes the masked fields of an agent.
func (s *Service) UpdateAgent(ctx context.Context, req *pactv1.UpdateAgentRequest) (*pactv1.UpdateAgentResponse, error) {
	in := req.GetAgent()
	var v rpcerr.Violations
	if in.GetId() == "" {
		v.Add("agent.id", "is required")
	}
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		v.Add("update_mask", "name at least one of enabled, jwks_uri, display_name, audience")
	}
	for _, p := range paths {
		switch p {
		case "enabled":
		case "jwks_uri":
			s.checkJWKSURI(&v, "agent.jwks_uri", in.GetJwksUri())
		case "display_name":
			checkDisplayName(&v, "agent.display_name", in.GetDisplayName())
		case "audience":
			checkAudience(&v, "agent.audience", in.GetAudience())
		default:
			v.Add("update_mask", "path %q cannot be updated (allowed: enabled, jwks_uri, display_name, audience)", p)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	a, err := s.d.Store.GetAgent(ctx, in.GetId())
	if err != nil {
		return nil, s.storeErr(ctx, "update agent: load", err)
	}
	for _, p := range paths {
		switch p {
		case "enabled":
			a.Enabled = in.GetEnabled()
		case "jwks_uri":
			a.JWKSURI = in.GetJwksUri()
		case "display_name":
			a.DisplayName = in.GetDisplayName()
		case "audience":
			a.Audience = in.GetAudience()
		}
	}
	a.UpdateTime = s.d.Now()
	a, err = s.d.Store.UpdateAgent(ctx, a)
	if err != nil {
		return nil, s.storeErr(ctx, "update agent", err)
	}
	s.d.OnChange(a, false)
	return &pactv1.UpdateAgentResponse{Agent: s.toProto(a)}, nil
}

// DeleteAgent removes an agent.
func (s *Service) DeleteAgent(ctx context.Context, req *pactv1.DeleteAgentRequest) (*pactv1.DeleteAgentResponse, error) {
	if req.GetId() == "" {
		return nil, rpcerr.InvalidField("id", "is required")
	}
	a, err := s.d.Store.GetAgent(ctx, req.GetId())
	if err != nil {
		return nil, s.storeErr(ctx, "delete agent: load", err)
	}
	if err := s.d.Store.DeleteAgent(ctx, req.GetId()); err != nil {
		return nil, s.storeErr(ctx, "delete agent", err)
	}
	s.d.OnChange(a, true)
	return &pactv1.DeleteAgentResponse{}, nil
}

func (s *Service) toProto(a db.Agent) *pactv1.Agent {
	aud := a.Audience
	if aud == "" {
		aud = s.d.Audience
	}
	return &pactv1.Agent{
		Id: a.ID, Issuer: a.Issuer, JwksUri: a.JWKSURI, DisplayName: a.DisplayName,
		Audience: aud, Enabled: a.Enabled,
		CreateTime: timestamppb.New(a.CreateTime), UpdateTime: timestamppb.New(a.UpdateTime),
	}
}

func (s *Service) checkIssuer(v *rpcerr.Violations, field, iss string) {
	// An issuer is an identifier compared byte for byte, but it must also be
	// an origin pactd could fetch from, so the JWKS rules apply to it.
	if _, err := (urlrule.Policy{Dev: s.d.Dev, AllowHosts: s.d.AllowHosts}).Check(iss, false); err != nil {
		v.Add(field, "%v", err)
	}
}

func (s *Service) checkJWKSURI(v *rpcerr.Violations, field, u string) {
	if _, err := (urlrule.Policy{Dev: s.d.Dev, AllowHosts: s.d.AllowHosts}).Check(u, true); err != nil {
		v.Add(field, "%v", err)
	}
}

func checkDisplayName(v *rpcerr.Violations, field, name string) {
	switch {
	case strings.TrimSpace(name) == "":
		v.Add(field, "is required")
	case !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxDisplayName:
		v.Add(field, "must be valid UTF-8 of at most %d characters", MaxDisplayName)
	case strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }):
		v.Add(field, "must not contain control characters")
	}
}

func checkAudience(v *rpcerr.Violations, field, aud string) {
	if urlrule.Text(aud) != nil {
		v.Add(field, "must be at most %d bytes of printable characters without spaces", urlrule.MaxURLLength)
	}
}

func (s *Service) storeErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return rpcerr.NotFound("agent")
	}
	return s.fault(ctx, op, err)
}

func (s *Service) fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, s.d.Logger, op, err)
}

// Package brand implements pact.v1.BrandService: the Brands a Provider hosts
// and their A2A Agent Cards.
package brand

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/pacturl"
	"pactd.dev/pactd/internal/paging"
	"pactd.dev/pactd/internal/rpcerr"
)

// Bounds of Brand fields.
const (
	MaxDisplayName = 200
	MaxDescription = 2000
	MaxSkills      = 50
	MaxListItems   = 20
	MaxShortText   = 200
)

var (
	brandIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	skillIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
)

// Deps are the service's collaborators.
type Deps struct {
	// Store holds the Brands.
	Store Store
	// PublicURL is the Provider's public base URL (no trailing slash).
	PublicURL string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives one line per unexpected fault.
	Logger *slog.Logger
	// Dev allows http:// delegation URLs (login, assertion issuer and JWKS)
	// on loopback hosts, as PACT_DEV does for agents. Never in production.
	Dev bool
	// OnChange, when set, is called after a Brand is created or updated, so
	// caches (the verifier's) drop what they hold for it.
	OnChange func(brandID string)
	// CardSigner signs every Agent Card GetAgentCard returns (A2A 1.0
	// §8.4) with the Provider's key ring. Nil serves unsigned cards, which
	// only tests of other parts do.
	CardSigner CardSigner
}

// Service implements pactv1connect.BrandServiceHandler.
type Service struct {
	pactv1connect.UnimplementedBrandServiceHandler
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
		d.OnChange = func(string) {}
	}
	return &Service{d: d}
}

// CreateBrand adds a Brand.
func (s *Service) CreateBrand(ctx context.Context, req *pactv1.CreateBrandRequest) (*pactv1.CreateBrandResponse, error) {
	now := s.d.Now()
	id := req.GetBrandId()
	var v rpcerr.Violations
	switch {
	case id == "" && !req.GetGenerateBrandId():
		v.Add("brand_id", "is required (or set generate_brand_id to have one generated)")
	case id != "" && req.GetGenerateBrandId():
		v.Add("generate_brand_id", "must be false when brand_id is given")
	case id != "" && !brandIDPattern.MatchString(id):
		v.Add("brand_id", "must be 1 to 64 characters of A-Z, a-z, 0-9, '_' or '-'")
	}
	b := db.Brand{
		ID: id, DisplayName: req.GetDisplayName(), Description: req.GetDescription(),
		Skills: skillsFromProto(req.GetSkills()), Delegation: delegationFromProto(req.GetDelegation()),
		CreateTime: now, UpdateTime: now,
	}
	checkDisplayName(&v, "display_name", b.DisplayName)
	checkText(&v, "description", b.Description, MaxDescription)
	checkSkills(&v, "skills", req.GetSkills())
	s.checkDelegation(&v, "delegation", req.GetDelegation())
	if err := v.Err(); err != nil {
		return nil, err
	}
	if b.ID == "" {
		b.ID = strings.ToLower(ids.New("", now))
	}
	created, err := s.d.Store.CreateBrand(ctx, b)
	if errors.Is(err, db.ErrConflict) {
		return nil, rpcerr.AlreadyExists("a Brand with this id exists")
	}
	if err != nil {
		return nil, s.fault(ctx, "create brand", err)
	}
	s.d.OnChange(created.ID)
	return &pactv1.CreateBrandResponse{Brand: s.toProto(created)}, nil
}

// GetBrand returns one Brand.
func (s *Service) GetBrand(ctx context.Context, req *pactv1.GetBrandRequest) (*pactv1.GetBrandResponse, error) {
	b, err := s.load(ctx, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	return &pactv1.GetBrandResponse{Brand: s.toProto(b)}, nil
}

// ListBrands lists Brands in id order.
func (s *Service) ListBrands(ctx context.Context, req *pactv1.ListBrandsRequest) (*pactv1.ListBrandsResponse, error) {
	p, err := paging.Parse(req.GetPage())
	if err != nil {
		return nil, err
	}
	list, err := s.d.Store.ListBrands(ctx, p.AfterID, p.Size)
	if err != nil {
		return nil, s.fault(ctx, "list brands", err)
	}
	resp := &pactv1.ListBrandsResponse{Brands: make([]*pactv1.Brand, 0, len(list))}
	for _, b := range list {
		resp.Brands = append(resp.Brands, s.toProto(b))
	}
	if len(list) > 0 {
		resp.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].ID)
	}
	return resp, nil
}

// UpdateBrand changes the masked fields of a Brand.
func (s *Service) UpdateBrand(ctx context.Context, req *pactv1.UpdateBrandRequest) (*pactv1.UpdateBrandResponse, error) {
	in := req.GetBrand()
	var v rpcerr.Violations
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		v.Add("update_mask", "name at least one of display_name, description, skills, delegation")
	}
	for _, p := range paths {
		switch p {
		case "display_name":
			checkDisplayName(&v, "brand.display_name", in.GetDisplayName())
		case "description":
			checkText(&v, "brand.description", in.GetDescription(), MaxDescription)
		case "skills":
			checkSkills(&v, "brand.skills", in.GetSkills())
		case "delegation":
			s.checkDelegation(&v, "brand.delegation", in.GetDelegation())
		default:
			v.Add("update_mask", "path %q cannot be updated (allowed: display_name, description, skills, delegation)", p)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	b, err := s.load(ctx, in.GetBrandId())
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		switch p {
		case "display_name":
			b.DisplayName = in.GetDisplayName()
		case "description":
			b.Description = in.GetDescription()
		case "skills":
			b.Skills = skillsFromProto(in.GetSkills())
		case "delegation":
			b.Delegation = delegationFromProto(in.GetDelegation())
		}
	}
	b.UpdateTime = s.d.Now()
	b, err = s.d.Store.UpdateBrand(ctx, b)
	if err != nil {
		return nil, s.storeErr(ctx, "update brand", err)
	}
	s.d.OnChange(b.ID)
	return &pactv1.UpdateBrandResponse{Brand: s.toProto(b)}, nil
}

// GetAgentCard builds the Brand's Agent Card, signed (SignCard) with the
// Provider's active key; the signature verifies against the JWKS at
// {interfaceUrl}/oauth/jwks.json. When no key may sign (the store has been
// unreachable longer than the key ring's freshness bound) the answer is
// Unavailable rather than an unsigned card.
func (s *Service) GetAgentCard(ctx context.Context, req *pactv1.GetAgentCardRequest) (*pactv1.GetAgentCardResponse, error) {
	b, err := s.load(ctx, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	card, err := BuildCard(b, pacturl.Interface(s.d.PublicURL, b.ID))
	if err != nil {
		return nil, s.fault(ctx, "build agent card", err)
	}
	if s.d.CardSigner != nil {
		if card, err = SignCard(ctx, s.d.CardSigner, card, pacturl.OAuthIssuer(s.d.PublicURL, b.ID)+"/jwks.json"); err != nil {
			return nil, s.fault(ctx, "sign agent card", err)
		}
	}
	resp := &pactv1.GetAgentCardResponse{CardJson: string(card), ContentType: CardContentType, CacheControl: CardCacheControl,
		InterfaceUrl: pacturl.Interface(s.d.PublicURL, b.ID), DisplayName: b.DisplayName}
	if b.Delegation.Enabled {
		// What a frontend needs to pick and run its consent flow.
		resp.LoginMode = pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION
		if b.Delegation.LoginMode == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND.String() {
			resp.LoginMode = pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND
		}
		resp.VerificationUri = pacturl.Verification(b.Delegation.LoginURL, pacturl.Consent(s.d.PublicURL, b.ID))
	}
	return resp, nil
}

func (s *Service) load(ctx context.Context, id string) (db.Brand, error) {
	if id == "" {
		return db.Brand{}, rpcerr.InvalidField("brand_id", "is required")
	}
	if !brandIDPattern.MatchString(id) {
		// No Brand can have such an id; answer as for any unknown Brand.
		return db.Brand{}, rpcerr.NotFound("brand")
	}
	b, err := s.d.Store.GetBrand(ctx, id)
	if err != nil {
		return db.Brand{}, s.storeErr(ctx, "load brand", err)
	}
	return b, nil
}

func (s *Service) toProto(b db.Brand) *pactv1.Brand {
	out := &pactv1.Brand{
		BrandId: b.ID, DisplayName: b.DisplayName, Description: b.Description,
		InterfaceUrl: pacturl.Interface(s.d.PublicURL, b.ID),
		CreateTime:   timestamppb.New(b.CreateTime), UpdateTime: timestamppb.New(b.UpdateTime),
		AgentPolicy: policyToProto(b.AgentPolicy),
	}
	for _, sk := range b.Skills {
		out.Skills = append(out.Skills, &pactv1.Skill{Id: sk.ID, Name: sk.Name, Description: sk.Description, Tags: sk.Tags, Examples: sk.Examples})
	}
	d := b.Delegation
	out.Delegation = &pactv1.DelegationSettings{
		Enabled: d.Enabled, LoginUrl: d.LoginURL, AssertionIssuer: d.AssertionIssuer, AssertionJwksUri: d.AssertionJWKSURI,
		LoginMode: pactv1.BrandLoginMode(pactv1.BrandLoginMode_value[d.LoginMode]),
	}
	for _, sc := range d.Scopes {
		out.Delegation.Scopes = append(out.Delegation.Scopes, &pactv1.Scope{Id: sc.ID, Description: sc.Description})
	}
	out.Delegation.AuthorizationDetailsTypes = detailsTypesToProto(d.AuthorizationDetailsTypes)
	out.Delegation.SkipConsentWhenGranted = d.SkipConsent
	return out
}

func skillsFromProto(in []*pactv1.Skill) []db.Skill {
	out := make([]db.Skill, 0, len(in))
	for _, s := range in {
		out = append(out, db.Skill{ID: s.GetId(), Name: s.GetName(), Description: s.GetDescription(), Tags: s.GetTags(), Examples: s.GetExamples()})
	}
	return out
}

func delegationFromProto(d *pactv1.DelegationSettings) db.Delegation {
	out := db.Delegation{
		Enabled: d.GetEnabled(), LoginURL: d.GetLoginUrl(), LoginMode: d.GetLoginMode().String(),
		AssertionIssuer: d.GetAssertionIssuer(), AssertionJWKSURI: d.GetAssertionJwksUri(),
	}
	for _, s := range d.GetScopes() {
		out.Scopes = append(out.Scopes, db.Scope{ID: s.GetId(), Description: s.GetDescription()})
	}
	out.AuthorizationDetailsTypes = detailsTypesFromProto(d.GetAuthorizationDetailsTypes())
	out.SkipConsent = d.GetSkipConsentWhenGranted()
	return out
}

func checkDisplayName(v *rpcerr.Violations, field, name string) {
	if strings.TrimSpace(name) == "" {
		v.Add(field, "is required")
		return
	}
	checkText(v, field, name, MaxDisplayName)
}

func checkText(v *rpcerr.Violations, field, s string, max int) {
	switch {
	case !utf8.ValidString(s) || utf8.RuneCountInString(s) > max:
		v.Add(field, "must be valid UTF-8 of at most %d characters", max)
	case strings.ContainsFunc(s, func(r rune) bool { return (r < ' ' && r != '\n' && r != '\t') || r == 0x7f }):
		v.Add(field, "must not contain control characters")
	}
}

func checkSkills(v *rpcerr.Violations, field string, skills []*pactv1.Skill) {
	if len(skills) > MaxSkills {
		v.Add(field, "at most %d skills", MaxSkills)
		return
	}
	seen := map[string]bool{}
	for i, s := range skills {
		f := func(name string) string { return field + "[" + itoa(i) + "]." + name }
		if !skillIDPattern.MatchString(s.GetId()) {
			v.Add(f("id"), "must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'")
		} else if seen[s.GetId()] {
			v.Add(f("id"), "duplicates an earlier skill id")
		}
		seen[s.GetId()] = true
		checkDisplayName(v, f("name"), s.GetName())
		checkText(v, f("description"), s.GetDescription(), MaxDescription)
		if len(s.GetTags()) > MaxListItems || len(s.GetExamples()) > MaxListItems {
			v.Add(f("tags"), "at most %d tags and %d examples", MaxListItems, MaxListItems)
		}
		for j, t := range s.GetTags() {
			if strings.TrimSpace(t) == "" {
				v.Add(f("tags")+"["+itoa(j)+"]", "must not be empty")
			}
			checkText(v, f("tags")+"["+itoa(j)+"]", t, MaxShortText)
		}
		for j, e := range s.GetExamples() {
			checkText(v, f("examples")+"["+itoa(j)+"]", e, MaxDescription)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func (s *Service) storeErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return rpcerr.NotFound("brand")
	}
	return s.fault(ctx, op, err)
}

func (s *Service) fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, s.d.Logger, op, err)
}

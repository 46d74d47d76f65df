package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// maxFileBytes bounds a settings file a command reads (-skills-file,
// -delegation-file).
const maxFileBytes = 1 << 20

func brandCommands() []*command {
	return []*command{
		{group: "brand", name: "create", args: "ID -name NAME", summary: "add a Brand (its delegation settings too, with the flags below)", maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				bf := addBrandFlags(fs)
				gen := fs.Bool("generate-id", false, "have pactd generate the Brand id (then give no ID)")
				return func(ctx context.Context, s *session, args []string) error {
					req := &pactv1.CreateBrandRequest{DisplayName: bf.name, Description: bf.description, GenerateBrandId: *gen}
					if len(args) == 1 {
						req.BrandId = args[0]
					} else if !*gen {
						return usageError("%s: name the Brand id (1 to 64 characters of A-Z a-z 0-9 _ -), or pass -generate-id", s.op)
					}
					if err := required(s.op, map[string]string{"-name": bf.name}); err != nil {
						return err
					}
					var err error
					if req.Skills, err = bf.skills(); err != nil {
						return err
					}
					if bf.delegationGiven() {
						if req.Delegation, err = bf.applyDelegation(nil); err != nil {
							return err
						}
					}
					resp, err := s.brands().CreateBrand(ctx, req)
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "created Brand %s\n", resp.GetBrand().GetBrandId())
						brandFields(w, resp.GetBrand())
					})
				}
			}},
		{group: "brand", name: "list", summary: "list the Brands, oldest first",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					resp := &pactv1.ListBrandsResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.brands().ListBrands(ctx, &pactv1.ListBrandsRequest{Page: page})
						if err != nil {
							return "", err
						}
						resp.Brands = append(resp.Brands, r.GetBrands()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "BRAND", "NAME", "DELEGATION", "SCOPES", "INTERFACE URL")
						for _, b := range resp.GetBrands() {
							var ids []string
							for _, sc := range b.GetDelegation().GetScopes() {
								ids = append(ids, sc.GetId())
							}
							row(w, b.GetBrandId(), b.GetDisplayName(), onOff(b.GetDelegation().GetEnabled()), strings.Join(ids, " "), b.GetInterfaceUrl())
						}
						p.footer(w, next)
					})
				}
			}},
		{group: "brand", name: "get", args: "ID", summary: "show one Brand with its delegation settings", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.brands().GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { brandFields(w, resp.GetBrand()) })
				}
			}},
		{group: "brand", name: "update", args: "ID", summary: "change a Brand's name, description, skills, scopes or login settings", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				bf := addBrandFlags(fs)
				return func(ctx context.Context, s *session, args []string) error {
					b := &pactv1.Brand{BrandId: args[0], DisplayName: bf.name, Description: bf.description}
					mask := &fieldmaskpb.FieldMask{}
					if bf.given("name") {
						mask.Paths = append(mask.Paths, "display_name")
					}
					if bf.given("description") {
						mask.Paths = append(mask.Paths, "description")
					}
					var err error
					if bf.given("skills-file") {
						mask.Paths = append(mask.Paths, "skills")
						if b.Skills, err = bf.skills(); err != nil {
							return err
						}
					}
					if bf.delegationGiven() {
						// UpdateBrand replaces the delegation settings whole, so
						// the flags change the current ones. (There is no
						// version check: a change made by someone else between
						// this read and the write is overwritten.)
						var base *pactv1.DelegationSettings
						if !bf.given("delegation-file") {
							cur, err := s.brands().GetBrand(ctx, &pactv1.GetBrandRequest{BrandId: args[0]})
							if err != nil {
								return err
							}
							base = cur.GetBrand().GetDelegation()
						}
						if b.Delegation, err = bf.applyDelegation(base); err != nil {
							return err
						}
						mask.Paths = append(mask.Paths, "delegation")
					}
					if len(mask.Paths) == 0 {
						return usageError("%s: name what to change (see the flags below)", s.op)
					}
					resp, err := s.brands().UpdateBrand(ctx, &pactv1.UpdateBrandRequest{Brand: b, UpdateMask: mask})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { brandFields(w, resp.GetBrand()) })
				}
			}},
		{group: "brand", name: "card", args: "ID", summary: "print the Brand's A2A Agent Card, as frontends serve it (-o json: the whole GetAgentCard response)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.brands().GetAgentCard(ctx, &pactv1.GetAgentCardRequest{BrandId: args[0]})
					if err != nil {
						return err
					}
					if s.json {
						return s.emit(resp, nil)
					}
					var out bytes.Buffer
					if err := json.Indent(&out, []byte(resp.GetCardJson()), "", "  "); err != nil {
						return failure("%s: the card pactd returned is not JSON: %v", s.op, err)
					}
					out.WriteByte('\n')
					_, err = s.out.Write(out.Bytes())
					return err
				}
			}},
	}
}

// brandFlags are the settings brand create and brand update take.
type brandFlags struct {
	fs                                                  *flag.FlagSet
	name, description, skillsFile, delegationFile       string
	enabled, skipConsent                                bool
	scopes                                              listFlag
	loginURL, loginMode, assertionIssuer, assertionJWKS string
}

// delegationFlags are the flags that change the delegation settings.
var delegationFlags = []string{"delegation", "delegation-file", "scope", "login-url", "login-mode", "assertion-issuer", "assertion-jwks-uri", "skip-consent"}

func addBrandFlags(fs *flag.FlagSet) *brandFlags {
	b := &brandFlags{fs: fs}
	fs.StringVar(&b.name, "name", "", "the Brand's `name` (Agent Card, consent page)")
	fs.StringVar(&b.description, "description", "", "the Agent Card's `text` on what the Brand's agent does")
	fs.StringVar(&b.skillsFile, "skills-file", "", "the Agent Card's skills from `FILE`: a JSON array of Skill objects, e.g. [{\"id\":\"orders\",\"name\":\"Orders\",\"description\":\"…\",\"tags\":[\"orders\"]}]")
	fs.BoolVar(&b.enabled, "delegation", false, "offer PACT Delegated (-delegation=false turns it off)")
	fs.Var(&b.scopes, "scope", "a scope the Brand offers, `ID=DESCRIPTION` (the consent page shows the description); repeat for each; replaces the list")
	fs.StringVar(&b.loginURL, "login-url", "", "the Brand's login page base `URL`")
	fs.StringVar(&b.loginMode, "login-mode", "", "how the Brand's login asserts the User (`mode`): signed-assertion or trusted-frontend")
	fs.StringVar(&b.assertionIssuer, "assertion-issuer", "", "signed-assertion: the `iss` of the Brand's assertions")
	fs.StringVar(&b.assertionJWKS, "assertion-jwks-uri", "", "signed-assertion: the `URL` of the keys that sign them")
	fs.BoolVar(&b.skipConsent, "skip-consent", false, "approve without a consent page what an unexpired grant already covers")
	fs.StringVar(&b.delegationFile, "delegation-file", "", "the whole delegation settings from `FILE` (DelegationSettings as JSON, with authorization_details_types); the flags above change it")
	return b
}

func (b *brandFlags) given(name string) bool {
	set := false
	b.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func (b *brandFlags) delegationGiven() bool {
	for _, n := range delegationFlags {
		if b.given(n) {
			return true
		}
	}
	return false
}

// applyDelegation returns base (or -delegation-file's settings) changed by
// the delegation flags given; base is not modified.
func (b *brandFlags) applyDelegation(base *pactv1.DelegationSettings) (*pactv1.DelegationSettings, error) {
	d := &pactv1.DelegationSettings{}
	if base != nil {
		d = proto.Clone(base).(*pactv1.DelegationSettings)
	}
	if b.given("delegation-file") {
		raw, err := readBounded(b.delegationFile)
		if err != nil {
			return nil, failure("-delegation-file: %v", err)
		}
		d = &pactv1.DelegationSettings{}
		if err := protojson.Unmarshal(raw, d); err != nil {
			return nil, failure("-delegation-file %s: not DelegationSettings JSON: %v", b.delegationFile, err)
		}
	}
	if b.given("delegation") {
		d.Enabled = b.enabled
	}
	if b.given("scope") {
		d.Scopes = nil
		for _, s := range b.scopes {
			id, desc, ok := strings.Cut(s, "=")
			if !ok {
				return nil, usageError("-scope %q: write ID=DESCRIPTION, e.g. -scope 'orders:read=Read your orders'", s)
			}
			d.Scopes = append(d.Scopes, &pactv1.Scope{Id: id, Description: desc})
		}
	}
	if b.given("login-url") {
		d.LoginUrl = b.loginURL
	}
	if b.given("login-mode") {
		m, ok := loginModes[b.loginMode]
		if !ok {
			if v, known := pactv1.BrandLoginMode_value[b.loginMode]; known {
				m, ok = pactv1.BrandLoginMode(v), true
			}
		}
		if !ok {
			return nil, usageError("-login-mode %q: must be signed-assertion or trusted-frontend", b.loginMode)
		}
		d.LoginMode = m
	}
	if b.given("assertion-issuer") {
		d.AssertionIssuer = b.assertionIssuer
	}
	if b.given("assertion-jwks-uri") {
		d.AssertionJwksUri = b.assertionJWKS
	}
	if b.given("skip-consent") {
		d.SkipConsentWhenGranted = b.skipConsent
	}
	return d, nil
}

// loginModeName is a login mode as -login-mode spells it.
func loginModeName(m pactv1.BrandLoginMode) string {
	if m == pactv1.BrandLoginMode_BRAND_LOGIN_MODE_UNSPECIFIED {
		return "signed-assertion (unset, which means it)"
	}
	for name, v := range loginModes {
		if v == m {
			return name
		}
	}
	return m.String()
}

var loginModes = map[string]pactv1.BrandLoginMode{
	"signed-assertion": pactv1.BrandLoginMode_BRAND_LOGIN_MODE_SIGNED_ASSERTION,
	"trusted-frontend": pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND,
}

// skills reads -skills-file, or returns nil without it.
func (b *brandFlags) skills() ([]*pactv1.Skill, error) {
	if !b.given("skills-file") {
		return nil, nil
	}
	raw, err := readBounded(b.skillsFile)
	if err != nil {
		return nil, failure("-skills-file: %v", err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, failure("-skills-file %s: not a JSON array: %v", b.skillsFile, err)
	}
	out := make([]*pactv1.Skill, 0, len(items))
	for i, it := range items {
		sk := &pactv1.Skill{}
		if err := protojson.Unmarshal(it, sk); err != nil {
			return nil, failure("-skills-file %s: skill %d: %v", b.skillsFile, i, err)
		}
		out = append(out, sk)
	}
	return out, nil
}

// readBounded reads a settings file of at most maxFileBytes.
func readBounded(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("%s is over %d bytes", name, maxFileBytes)
	}
	return b, nil
}

// listFlag is a flag that may be repeated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ", ") }

func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func brandFields(w io.Writer, b *pactv1.Brand) {
	row(w, "brand id", b.GetBrandId())
	row(w, "name", b.GetDisplayName())
	row(w, "description", b.GetDescription())
	row(w, "interface url", b.GetInterfaceUrl())
	row(w, "agent policy", policyName(b.GetAgentPolicy()))
	for _, sk := range b.GetSkills() {
		row(w, "skill "+sk.GetId(), sk.GetName())
	}
	d := b.GetDelegation()
	row(w, "delegation", onOff(d.GetEnabled()))
	if d.GetEnabled() || d.GetLoginUrl() != "" || len(d.GetScopes()) > 0 {
		row(w, "login mode", loginModeName(d.GetLoginMode()))
		row(w, "login url", d.GetLoginUrl())
		if d.GetAssertionIssuer() != "" || d.GetAssertionJwksUri() != "" {
			row(w, "assertion issuer", d.GetAssertionIssuer())
			row(w, "assertion jwks uri", d.GetAssertionJwksUri())
		}
		row(w, "skip consent", yesNo(d.GetSkipConsentWhenGranted()))
		for _, sc := range d.GetScopes() {
			row(w, "scope "+sc.GetId(), sc.GetDescription())
		}
		for _, t := range d.GetAuthorizationDetailsTypes() {
			row(w, "details type", t.GetType()+" (scope "+t.GetScope()+")")
		}
	}
	row(w, "created", when(b.GetCreateTime()))
	row(w, "updated", when(b.GetUpdateTime()))
}

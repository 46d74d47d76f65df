package hdtp

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"errors"
	"html/template"
	"mime"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/invite"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/rpcerr"
)

// Invite defaults and bounds (§4).
const (
	defaultInviteDays = 14
	maxInviteUses     = 1000
	maxInviteLabel    = 200
)

func inviteToProto(inv db.HDTPInvite) *hdtpv1.Invite {
	return &hdtpv1.Invite{InviteId: inv.ID, IdentityId: inv.IdentityID, ExpireTime: timestamppb.New(inv.ExpireTime), MaxUses: int32(inv.MaxUses),
		Uses: int32(inv.Uses), AutoAccept: inv.AutoAccept, Preset: inv.Preset, Label: inv.Label, CreateTime: timestamppb.New(inv.CreateTime)}
}

// CreateInvite makes an invite.
func (s *Invites) CreateInvite(ctx context.Context, req *hdtpv1.CreateInviteRequest) (*hdtpv1.CreateInviteResponse, error) {
	h := s.h
	var v rpcerr.Violations
	days := int64(req.GetTtlDays())
	if days == 0 {
		days = defaultInviteDays
	}
	if days < 1 || days > h.d.Limits.InviteTTLDays {
		v.Add("ttl_days", "must be 1 to %d", h.d.Limits.InviteTTLDays)
	}
	uses := int64(req.GetMaxUses())
	if uses == 0 {
		uses = 1
	}
	if uses < 1 || uses > maxInviteUses {
		v.Add("max_uses", "must be 1 to %d", maxInviteUses)
	}
	preset := req.GetPreset()
	if preset == "" {
		preset = "basic"
	}
	if _, ok := presets[preset]; !ok {
		v.Add("preset", "is basic, work, friend or family")
	}
	label := req.GetLabel()
	if !utf8.ValidString(label) || utf8.RuneCountInString(label) > maxInviteLabel ||
		strings.IndexFunc(label, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) >= 0 {
		v.Add("label", "at most %d UTF-8 characters, no control character", maxInviteLabel)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	st, err := h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	now := h.d.Now()
	token, hash := invite.New()
	inv := db.HDTPInvite{ID: ids.New("hiv_", now), IdentityID: st.id.ID, TokenHash: hash[:], ExpireTime: now.Add(time.Duration(days) * 24 * time.Hour),
		MaxUses: uses, AutoAccept: req.GetAutoAccept(), Preset: preset, Label: label, CreateTime: now}
	if err := h.d.Store.CreateHDTPInvite(ctx, inv); err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "create hdtp invite", err)
	}
	if err := h.d.Store.InHDTPTx(ctx, st.id.ID, func(tx db.HDTPTx) error {
		return tx.RecordAudit(db.AuditEvent{Kind: db.AuditHDTPInviteCreated, Time: now, IdentityID: st.id.ID, Actor: db.ActorAdmin, Detail: inv.ID})
	}); err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "audit hdtp invite", err)
	}
	h.d.OnAudit(db.AuditHDTPInviteCreated)
	h.m.owner.WithLabelValues("invite_create").Inc()
	return &hdtpv1.CreateInviteResponse{Invite: inviteToProto(inv), Token: token, Url: "https://" + hostOf(st.id.Endpoint) + invite.Path(token)}, nil
}

// ListInvites lists an identity's invites.
func (s *Invites) ListInvites(ctx context.Context, req *hdtpv1.ListInvitesRequest) (*hdtpv1.ListInvitesResponse, error) {
	st, err := s.h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	list, err := s.h.d.Store.ListHDTPInvites(ctx, st.id.ID)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.h.d.Logger, "list hdtp invites", err)
	}
	resp := &hdtpv1.ListInvitesResponse{Invites: make([]*hdtpv1.Invite, len(list))}
	for i, inv := range list {
		resp.Invites[i] = inviteToProto(inv)
	}
	return resp, nil
}

// RevokeInvite deletes an invite.
func (s *Invites) RevokeInvite(ctx context.Context, req *hdtpv1.RevokeInviteRequest) (*hdtpv1.RevokeInviteResponse, error) {
	h := s.h
	st, err := h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	if len(req.GetInviteId()) > 64 {
		return nil, rpcerr.InvalidField("invite_id", "at most 64 bytes")
	}
	err = h.d.Store.DeleteHDTPInvite(ctx, st.id.ID, req.GetInviteId())
	if errors.Is(err, db.ErrNotFound) {
		return nil, rpcerr.NotFound("invite")
	}
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "revoke hdtp invite", err)
	}
	now := h.d.Now()
	if err := h.d.Store.InHDTPTx(ctx, st.id.ID, func(tx db.HDTPTx) error {
		return tx.RecordAudit(db.AuditEvent{Kind: db.AuditHDTPInviteRevoked, Time: now, IdentityID: st.id.ID, Actor: db.ActorAdmin,
			Detail: req.GetInviteId()})
	}); err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "audit hdtp invite", err)
	}
	h.d.OnAudit(db.AuditHDTPInviteRevoked)
	h.m.owner.WithLabelValues("invite_revoke").Inc()
	return &hdtpv1.RevokeInviteResponse{}, nil
}

// The landing page: one template and one style sheet, allowed by its hash
// in a strict Content-Security-Policy (as the front door's pages are).
var (
	//go:embed landing.html
	landingHTML string
	//go:embed landing.css
	landingCSSFile string
	landingCSS     = strings.TrimSuffix(landingCSSFile, "\n")
	landingT       = template.Must(template.New("landing").Parse(landingHTML))
	landingCSP     = func() string {
		sum := sha256.Sum256([]byte(landingCSS))
		return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
	}()
)

// landingView is what the page shows.
type landingView struct {
	Title                         string
	Found                         bool
	Name, Endpoint, Root, Expires string
	Card                          string
	CSS                           template.CSS
}

// Bounds of a landing request.
const (
	maxLandingPath   = 256
	maxLandingHeader = 4 << 10
)

// notFoundJSON is the JSON view's one not-found.
const notFoundJSON = `{"error":"not_found"}`

// ServeInvite answers /i/<token>.
func (h *Host) ServeInvite(ctx context.Context, req *hdtpv1.ServeInviteRequest) (*hdtpv1.ServeInviteResponse, error) {
	if len(req.GetPath()) > maxLandingPath || len(req.GetHost()) > maxLandingHeader || len(req.GetQuery()) > maxLandingHeader ||
		len(req.GetAccept()) > maxLandingHeader {
		return nil, rpcerr.InvalidField("path", "path at most %d bytes; host, query and accept at most %d", maxLandingPath, maxLandingHeader)
	}
	if m := req.GetMethod(); m != "GET" && m != "HEAD" {
		return &hdtpv1.ServeInviteResponse{Status: 405, Headers: []*hdtpv1.HttpHeader{{Name: "Allow", Value: "GET, HEAD"},
			{Name: "Content-Type", Value: "text/plain; charset=utf-8"}}, Body: []byte("method not allowed\n")}, nil
	}
	asJSON := wantsJSON(req.GetAccept(), req.GetQuery())
	resp, err := h.landing(ctx, req, asJSON)
	if err != nil {
		return nil, err
	}
	if req.GetMethod() == "HEAD" {
		resp.Body = nil
	}
	return resp, nil
}

// wantsJSON is whether a landing request asks for the JSON view: either
// generation's invite media type or application/json in Accept, or
// format=json in the query (§4).
func wantsJSON(accept, query string) bool {
	for _, p := range strings.Split(query, "&") {
		if p == "format=json" {
			return true
		}
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json", "application/hdtp-invite+json", "application/pact-invite+json":
			return true
		}
	}
	return false
}

func (h *Host) landing(ctx context.Context, req *hdtpv1.ServeInviteRequest, asJSON bool) (*hdtpv1.ServeInviteResponse, error) {
	notFound := func() (*hdtpv1.ServeInviteResponse, error) {
		if asJSON {
			return landingJSON(404, "application/json", []byte(notFoundJSON)), nil
		}
		return landingPage(404, landingView{Title: "Invite not found"})
	}
	hash, ok := invite.FromPath(req.GetPath())
	if !ok {
		return notFound()
	}
	inv, err := h.d.Store.GetHDTPInviteByHash(ctx, hash[:])
	if errors.Is(err, db.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "load hdtp invite", err)
	}
	now := h.d.Now()
	if !now.Before(inv.ExpireTime) || inv.Uses >= inv.MaxUses {
		return notFound()
	}
	st, err := h.loadIdentity(ctx, inv.IdentityID, "")
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(req.GetHost(), hostOf(st.id.Endpoint)) {
		return notFound()
	}
	cr, err := h.ids.card(st.id, st.leaves)
	if errors.Is(err, errNoChain) || errors.Is(err, errLeafExpired) {
		return notFound()
	}
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "write hdtp card", err)
	}
	if asJSON {
		var b bytes.Buffer
		b.WriteString(`{"card":`)
		b.Write(jsonString(cr.text))
		b.WriteString(`,"card_sig":"` + cr.sig + `","chain":["` + cr.chain[0] + `","` + cr.chain[1] + `"]}`)
		return landingJSON(200, st.gen.Strings().InviteMediaType, b.Bytes()), nil
	}
	return landingPage(200, landingView{Title: "Invite from " + st.id.DisplayName, Found: true, Name: st.id.DisplayName, Endpoint: st.id.Endpoint,
		Root: st.id.RootFingerprint, Expires: inv.ExpireTime.UTC().Format("2 January 2006, 15:04 UTC"), Card: cr.text})
}

// landingHeaders keep a landing out of frames, caches and Referer headers.
func landingHeaders(contentType string) []*hdtpv1.HttpHeader {
	return []*hdtpv1.HttpHeader{
		{Name: "Content-Type", Value: contentType},
		{Name: "Cache-Control", Value: "no-store"},
		{Name: "Vary", Value: "Accept"},
		{Name: "Referrer-Policy", Value: "no-referrer"},
		{Name: "X-Content-Type-Options", Value: "nosniff"},
	}
}

func landingJSON(status int32, contentType string, body []byte) *hdtpv1.ServeInviteResponse {
	return &hdtpv1.ServeInviteResponse{Status: status, Headers: landingHeaders(contentType), Body: body}
}

func landingPage(status int32, v landingView) (*hdtpv1.ServeInviteResponse, error) {
	v.CSS = template.CSS(landingCSS)
	var b bytes.Buffer
	if err := landingT.ExecuteTemplate(&b, "invite", v); err != nil {
		return nil, err
	}
	hs := append(landingHeaders("text/html; charset=utf-8"), &hdtpv1.HttpHeader{Name: "Content-Security-Policy", Value: landingCSP},
		&hdtpv1.HttpHeader{Name: "X-Frame-Options", Value: "DENY"})
	return &hdtpv1.ServeInviteResponse{Status: status, Headers: hs, Body: b.Bytes()}, nil
}

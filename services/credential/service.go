// Package credential implements CredentialService: creating, listing and
// revoking pactd's caller credentials (the bearer tokens of frontends and
// operators). Tokens are random, shown once, and stored as SHA-256 hashes
// (package auth); a revocation reaches every replica within
// auth.RevocationBound.
package credential

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/core/paging"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/rpcerr"
)

// Limits of a credential request.
const (
	// MaxLifetime bounds how far ahead an expiry may be.
	MaxLifetime = 10 * 365 * 24 * time.Hour
)

// Store is the storage the service needs.
type Store interface {
	auth.Store
	GetCredential(ctx context.Context, id string) (db.Credential, error)
	ListCredentials(ctx context.Context, afterID string, limit int) ([]db.Credential, error)
	RevokeCredential(ctx context.Context, id string, now time.Time) (db.Credential, error)
}

// Deps are the service's collaborators.
type Deps struct {
	// Store holds the credentials.
	Store Store
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives one line per unexpected fault.
	Logger *slog.Logger
	// OnRevoke runs after a revocation, so this replica's credential cache
	// forgets at once (other replicas within auth.RevocationBound).
	OnRevoke func()
}

// Service implements pactv1connect.CredentialServiceHandler.
type Service struct {
	pactv1connect.UnimplementedCredentialServiceHandler
	d Deps
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.OnRevoke == nil {
		d.OnRevoke = func() {}
	}
	return &Service{d: d}
}

// CreateCredential stores a new credential and returns its only copy.
func (s *Service) CreateCredential(ctx context.Context, req *pactv1.CreateCredentialRequest) (*pactv1.CreateCredentialResponse, error) {
	now := s.d.Now()
	var v rpcerr.Violations
	role, ok := roleFromProto(req.GetRole())
	if !ok {
		v.Add("role", "must be CALLER_ROLE_ADMIN or CALLER_ROLE_FRONTEND")
	}
	if problem := auth.CheckLabel(req.GetName()); problem != "" {
		v.Add("name", "%s", problem)
	}
	var expires time.Time
	if req.GetExpireTime() != nil {
		expires = req.GetExpireTime().AsTime().Truncate(time.Second) // as stored
		switch {
		case req.GetExpireTime().CheckValid() != nil || !expires.After(now):
			v.Add("expire_time", "must be in the future")
		case expires.Sub(now) > MaxLifetime:
			v.Add("expire_time", "must be at most 10 years ahead")
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	c, tok, err := auth.Create(ctx, s.d.Store, role, req.GetName(), expires, now)
	if err != nil {
		return nil, s.fault(ctx, "create credential", err)
	}
	return &pactv1.CreateCredentialResponse{Credential: toProto(c), Token: tok}, nil
}

// ListCredentials lists the credentials, oldest first, without tokens.
func (s *Service) ListCredentials(ctx context.Context, req *pactv1.ListCredentialsRequest) (*pactv1.ListCredentialsResponse, error) {
	p, err := paging.Parse(req.GetPage())
	if err != nil {
		return nil, err
	}
	list, err := s.d.Store.ListCredentials(ctx, p.AfterID, p.Size)
	if err != nil {
		return nil, s.fault(ctx, "list credentials", err)
	}
	out := &pactv1.ListCredentialsResponse{Credentials: make([]*pactv1.Credential, 0, len(list))}
	for _, c := range list {
		out.Credentials = append(out.Credentials, toProto(c))
	}
	if len(list) > 0 {
		out.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].ID)
	}
	return out, nil
}

// RevokeCredential revokes a credential for good.
func (s *Service) RevokeCredential(ctx context.Context, req *pactv1.RevokeCredentialRequest) (*pactv1.RevokeCredentialResponse, error) {
	id := req.GetId()
	if id == "" || len(id) > 64 {
		return nil, rpcerr.InvalidField("id", "must be a credential id")
	}
	c, err := s.d.Store.RevokeCredential(ctx, id, s.d.Now())
	if errors.Is(err, db.ErrNotFound) {
		// Unknown, or revoked already: tell them apart for the operator.
		if _, gerr := s.d.Store.GetCredential(ctx, id); gerr == nil {
			return nil, rpcerr.FailedPrecondition.Err("the credential is revoked already")
		}
		return nil, rpcerr.NotFound("credential")
	}
	if err != nil {
		return nil, s.fault(ctx, "revoke credential", err)
	}
	s.d.OnRevoke()
	s.d.Logger.InfoContext(ctx, "credential revoked", slog.String("credential", c.ID), slog.String("role", string(c.Role)))
	return &pactv1.RevokeCredentialResponse{Credential: toProto(c)}, nil
}

func (s *Service) fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, s.d.Logger, op, err)
}

func roleFromProto(r pactv1.CallerRole) (db.Role, bool) {
	switch r {
	case pactv1.CallerRole_CALLER_ROLE_ADMIN:
		return db.RoleAdmin, true
	case pactv1.CallerRole_CALLER_ROLE_FRONTEND:
		return db.RoleFrontend, true
	}
	return "", false
}

func toProto(c db.Credential) *pactv1.Credential {
	out := &pactv1.Credential{Id: c.ID, Name: c.Label, CreateTime: timestamppb.New(c.CreateTime)}
	switch c.Role {
	case db.RoleAdmin:
		out.Role = pactv1.CallerRole_CALLER_ROLE_ADMIN
	case db.RoleFrontend:
		out.Role = pactv1.CallerRole_CALLER_ROLE_FRONTEND
	}
	for _, t := range []struct {
		at  time.Time
		set func(*timestamppb.Timestamp)
	}{
		{c.ExpireTime, func(ts *timestamppb.Timestamp) { out.ExpireTime = ts }},
		{c.LastUseTime, func(ts *timestamppb.Timestamp) { out.LastUseTime = ts }},
		{c.RevokeTime, func(ts *timestamppb.Timestamp) { out.RevokeTime = ts }},
	} {
		if !t.at.IsZero() {
			t.set(timestamppb.New(t.at))
		}
	}
	return out
}

// Package device is the device authorization endpoint of the delegation
// service (RFC 8628 §3.1, PACT §5.3): it checks the PA and its request and
// stores a pending authorization with fresh device and user codes.
package device

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/oauthwire"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/codes"
	"pactd.dev/pactd/token/authzdetails"
)

// Service answers StartDeviceAuthorization.
type Service struct{ env *base.Env }

// New returns the endpoint over env.
func New(env *base.Env) *Service { return &Service{env: env} }

// StartDeviceAuthorization is the device authorization endpoint (RFC 8628
// §3.1, PACT §5.3). Checks, in order: the PA JWT (bare 401), client_id ==
// iss (401 invalid_client), the Brand (bare 404) and its delegation (400
// unauthorized_client), the scope (400 invalid_scope: empty, malformed, more
// than 50 ids, or an id the Brand does not define), authorization_details
// (400 invalid_authorization_details: anything the Brand's declared types
// do not allow, see authzdetails.Parse; restrictions are never dropped).
// A refusal stores nothing.
func (s *Service) StartDeviceAuthorization(ctx context.Context, req *pactv1.StartDeviceAuthorizationRequest) (*pactv1.StartDeviceAuthorizationResponse, error) {
	const op = "start device authorization"
	c, refusal, err := s.env.Authenticate(ctx, op, req.GetBrandId(), req.GetAuthorization(), req.GetClientId())
	if err != nil || refusal != nil {
		return &pactv1.StartDeviceAuthorizationResponse{Error: refusal}, err
	}
	scopes, ok := codes.ParseScope(req.GetScope())
	if !ok {
		return refuseDevice(oauthwire.ErrInvalidScope, "scope must name 1 to 50 scope ids separated by spaces"), nil
	}
	defined := base.BrandScopes(c.Brand)
	for _, sc := range scopes {
		if _, ok := defined[sc]; !ok {
			return refuseDevice(oauthwire.ErrInvalidScope, "scope names an id this Brand does not define"), nil
		}
	}
	details, detailScopes, why, detailsRefusal := requestDetails(c.Brand, req.AuthorizationDetails, scopes)
	if detailsRefusal != nil {
		s.env.D.Logger.InfoContext(ctx, "authorization_details refused", slog.String("brand_id", c.Brand.ID),
			slog.String("agent_id", c.PA.Agent.ID), slog.String("reason", string(why)))
		return detailsRefusal, nil
	}

	now := s.env.Now()
	if refused, err := s.env.Guesses.PendingOver(ctx, c.PA.Agent.ID, c.Brand.ID, now); err != nil || refused {
		if err != nil {
			return nil, err
		}
		return refuseDevice(oauthwire.ErrInvalidRequest, "this client has too many pending device authorizations; "+
			"complete one or wait until one expires (at most 10 minutes)"), nil
	}
	var deviceCode, userCode string
	for attempt := 0; ; attempt++ {
		if deviceCode, err = codes.RandomSecret(s.env.D.Rand, codes.DeviceCodePrefix); err != nil {
			return nil, s.env.Fault(ctx, op, err)
		}
		if userCode, err = codes.NewUserCode(s.env.D.Rand); err != nil {
			return nil, s.env.Fault(ctx, op, err)
		}
		norm, _ := codes.NormalizeUserCode(userCode)
		_, err = s.env.D.Store.CreateDeviceAuthorization(ctx, db.DeviceAuthorization{
			ID: ids.New("da_", now), BrandID: c.Brand.ID, AgentID: c.PA.Agent.ID, ClientID: c.ID,
			DeviceCodeHash: codes.SecretHash(deviceCode), UserCodeHash: codes.UserCodeHash(c.Brand.ID, norm),
			Scopes: scopes, Interval: base.PollInterval, ExpiresAt: now.Add(base.DeviceCodeTTL), CreateTime: now,
			AuthorizationDetails: details, AuthorizationDetailsScopes: detailScopes,
		})
		if err == nil {
			break
		}
		if !errors.Is(err, db.ErrConflict) || attempt+1 == base.CreateAttempts {
			return nil, s.env.Fault(ctx, op+": store", err)
		}
	}
	verify, complete := s.env.VerificationURIs(c.Brand, userCode)
	body := oauthwire.DeviceAuthorizationBody{
		DeviceCode: deviceCode, UserCode: userCode, VerificationURI: verify, VerificationURIComplete: complete,
		ExpiresIn: int32(base.DeviceCodeTTL.Seconds()), Interval: int32(base.PollInterval.Seconds()),
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, s.env.Fault(ctx, op+": encode", err)
	}
	s.env.D.Logger.InfoContext(ctx, "device authorization started", slog.String("brand_id", c.Brand.ID),
		slog.String("agent_id", c.PA.Agent.ID), slog.Int("scopes", len(scopes)))
	return &pactv1.StartDeviceAuthorizationResponse{
		DeviceCode: body.DeviceCode, UserCode: body.UserCode, VerificationUri: body.VerificationURI,
		VerificationUriComplete: body.VerificationURIComplete, ExpiresIn: body.ExpiresIn, Interval: body.Interval,
		BodyJson: string(raw),
	}, nil
}

func refuseDevice(code, description string) *pactv1.StartDeviceAuthorizationResponse {
	return &pactv1.StartDeviceAuthorizationResponse{Error: oauthwire.Refusal(code, description)}
}

// requestDetails validates a device authorization's authorization_details
// (nil: the form has none) against the Brand's types and the requested
// scopes: the canonical JSON to store and the scope each entry's type
// requires now (to store with it), or the refusal to send and its reason
// (for the log, which never gets the PA's input).
func requestDetails(b db.Brand, raw *string, scopes []string) (string, []string, authzdetails.Reason, *pactv1.StartDeviceAuthorizationResponse) {
	if raw == nil {
		return "", nil, "", nil
	}
	types := b.Delegation.AuthorizationDetailsTypes
	if len(types) == 0 {
		return "", nil, authzdetails.ReasonUnknownType, refuseDevice(oauthwire.ErrInvalidAuthorizationDetails, "this Brand supports no authorization_details types")
	}
	entries, canonical, err := authzdetails.Parse(*raw, types, scopes)
	if err != nil {
		return "", nil, err.Reason, refuseDevice(oauthwire.ErrInvalidAuthorizationDetails, err.Description)
	}
	entryScopes := make([]string, len(entries))
	for i, e := range entries {
		entryScopes[i] = authzdetails.Find(types, e.Type).Scope // Parse accepted only declared types
	}
	return canonical, entryScopes, "", nil
}

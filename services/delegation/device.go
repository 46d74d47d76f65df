package delegation

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"pactd/db"
	pactv1 "pactd/gen/pact/v1"
	"pactd/internal/ids"
	"pactd/internal/oauthwire"
	"pactd/services/delegation/codes"
)

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
	c, refusal, err := s.authenticate(ctx, op, req.GetBrandId(), req.GetAuthorization(), req.GetClientId())
	if err != nil || refusal != nil {
		return &pactv1.StartDeviceAuthorizationResponse{Error: refusal}, err
	}
	scopes, ok := codes.ParseScope(req.GetScope())
	if !ok {
		return refuseDevice(oauthwire.ErrInvalidScope, "scope must name 1 to 50 scope ids separated by spaces"), nil
	}
	defined := brandScopes(c.brand)
	for _, sc := range scopes {
		if _, ok := defined[sc]; !ok {
			return refuseDevice(oauthwire.ErrInvalidScope, "scope names an id this Brand does not define"), nil
		}
	}
	details, detailScopes, why, detailsRefusal := requestDetails(c.brand, req.AuthorizationDetails, scopes)
	if detailsRefusal != nil {
		s.d.Logger.InfoContext(ctx, "authorization_details refused", slog.String("brand_id", c.brand.ID),
			slog.String("agent_id", c.pa.Agent.ID), slog.String("reason", string(why)))
		return detailsRefusal, nil
	}

	now := s.now()
	if refused, err := s.guesses.PendingOver(ctx, c.pa.Agent.ID, c.brand.ID, now); err != nil || refused {
		if err != nil {
			return nil, err
		}
		return refuseDevice(oauthwire.ErrInvalidRequest, "this client has too many pending device authorizations; "+
			"complete one or wait until one expires (at most 10 minutes)"), nil
	}
	var deviceCode, userCode string
	for attempt := 0; ; attempt++ {
		if deviceCode, err = codes.RandomSecret(s.d.Rand, codes.DeviceCodePrefix); err != nil {
			return nil, s.fault(ctx, op, err)
		}
		if userCode, err = codes.NewUserCode(s.d.Rand); err != nil {
			return nil, s.fault(ctx, op, err)
		}
		norm, _ := codes.NormalizeUserCode(userCode)
		_, err = s.d.Store.CreateDeviceAuthorization(ctx, db.DeviceAuthorization{
			ID: ids.New("da_", now), BrandID: c.brand.ID, AgentID: c.pa.Agent.ID, ClientID: c.id,
			DeviceCodeHash: codes.SecretHash(deviceCode), UserCodeHash: codes.UserCodeHash(c.brand.ID, norm),
			Scopes: scopes, Interval: PollInterval, ExpiresAt: now.Add(DeviceCodeTTL), CreateTime: now,
			AuthorizationDetails: details, AuthorizationDetailsScopes: detailScopes,
		})
		if err == nil {
			break
		}
		if !errors.Is(err, db.ErrConflict) || attempt+1 == createAttempts {
			return nil, s.fault(ctx, op+": store", err)
		}
	}
	verify, complete := s.verificationURIs(c.brand, userCode)
	body := oauthwire.DeviceAuthorizationBody{
		DeviceCode: deviceCode, UserCode: userCode, VerificationURI: verify, VerificationURIComplete: complete,
		ExpiresIn: int32(DeviceCodeTTL.Seconds()), Interval: int32(PollInterval.Seconds()),
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, s.fault(ctx, op+": encode", err)
	}
	s.d.Logger.InfoContext(ctx, "device authorization started", slog.String("brand_id", c.brand.ID),
		slog.String("agent_id", c.pa.Agent.ID), slog.Int("scopes", len(scopes)))
	return &pactv1.StartDeviceAuthorizationResponse{
		DeviceCode: body.DeviceCode, UserCode: body.UserCode, VerificationUri: body.VerificationURI,
		VerificationUriComplete: body.VerificationURIComplete, ExpiresIn: body.ExpiresIn, Interval: body.Interval,
		BodyJson: string(raw),
	}, nil
}

func refuseDevice(code, description string) *pactv1.StartDeviceAuthorizationResponse {
	return &pactv1.StartDeviceAuthorizationResponse{Error: oauthwire.Refusal(code, description)}
}

// verificationURIs builds {login_url}/login?return_to=<consent URL>, and the
// same with ?user_code=XXXX-XXXX inside the (URL-encoded) return target. An
// empty userCode gives the plain verification URI twice.
func (s *Service) verificationURIs(b db.Brand, userCode string) (verify, complete string) {
	base := strings.TrimRight(b.Delegation.LoginURL, "/") + "/login?return_to="
	consent := s.consentURL(b.ID)
	verify = base + url.QueryEscape(consent)
	if userCode == "" {
		return verify, verify
	}
	return verify, base + url.QueryEscape(consent+"?user_code="+userCode)
}

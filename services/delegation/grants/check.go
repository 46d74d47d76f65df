package grants

import (
	"context"
	"errors"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/internal/scopeid"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/token/authzdetails"
)

// maxCheckScopes bounds the scopes one CheckGrant asks about.
const maxCheckScopes = 64

// CheckGrant is the action guard (see the proto): whether the grant is
// active now for the Brand (and brand_user, agent_id when given) and
// grants what the action needs. Malformed input is InvalidArgument before
// any grant is read, so a refusal never depends on whether the grant
// exists; a grant of another Brand, user or PA answers UNKNOWN, the answer
// for a grant that does not exist.
func (s *Service) CheckGrant(ctx context.Context, req *pactv1.CheckGrantRequest) (*pactv1.CheckGrantResponse, error) {
	const op = "check grant"
	var v rpcerr.Violations
	if req.GetBrandId() == "" {
		v.Add("brand_id", "is required")
	}
	if req.GetGrantId() == "" {
		v.Add("grant_id", "is required")
	}
	if len(req.GetScopes()) > maxCheckScopes {
		v.Add("scopes", "must name at most %d scope ids", maxCheckScopes)
	}
	for i, sc := range req.GetScopes() {
		if !scopeid.Valid(sc) {
			v.Add("scopes", "scopes[%d] must be 1 to %d printable ASCII characters without space, '\"' or '\\'", i, scopeid.MaxLen)
			break
		}
	}
	if u := req.GetBrandUser(); u != "" {
		base.CheckBrandUser(&v, "brand_user", u)
	}
	if len(req.GetAuthorizationDetailsJson()) > authzdetails.MaxRequestBytes {
		v.Add("authorization_details_json", "is larger than %d bytes", authzdetails.MaxRequestBytes)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	unknown := &pactv1.CheckGrantResponse{Reason: pactv1.GrantCheckReason_GRANT_CHECK_REASON_UNKNOWN}
	if len(req.GetGrantId()) > base.MaxIDLen || len(req.GetAgentId()) > base.MaxIDLen {
		return s.checked(unknown), nil
	}
	b, notFound, err := s.env.Brand(ctx, op, req.GetBrandId())
	if err != nil {
		return nil, err
	}
	if notFound {
		return s.checked(unknown), nil
	}
	var entry *authzdetails.Entry
	if raw := strings.TrimSpace(req.GetAuthorizationDetailsJson()); raw != "" {
		e, err := parseCheckEntry(b, raw)
		if err != nil {
			return nil, err
		}
		entry = &e
	}
	var g db.Grant
	var found bool
	if s.env.D.Grants != nil {
		g, found, err = s.env.D.Grants.Grant(ctx, req.GetGrantId())
	} else {
		g, err = s.env.D.Store.GetGrant(ctx, req.GetGrantId())
		found = err == nil
		if !found && errors.Is(err, db.ErrNotFound) {
			err = nil
		}
	}
	if err != nil {
		return nil, s.env.Fault(ctx, op+": load grant", err)
	}
	if !found || g.BrandID != b.ID || (req.GetBrandUser() != "" && g.BrandUser != req.GetBrandUser()) ||
		(req.GetAgentId() != "" && g.AgentID != req.GetAgentId()) {
		return s.checked(unknown), nil
	}
	resp := &pactv1.CheckGrantResponse{ExpireTime: timestamppb.New(g.ExpireTime)}
	switch {
	// The Brand's agent policy, from the same Brand cache as
	// VerifyAgentRequest: a PA taken off the list mid-turn is stopped too.
	case !b.Admits(g.AgentID):
		return s.checked(&pactv1.CheckGrantResponse{Reason: pactv1.GrantCheckReason_GRANT_CHECK_REASON_AGENT_NOT_ALLOWED}), nil
	case !g.RevokeTime.IsZero():
		return s.checked(&pactv1.CheckGrantResponse{Reason: pactv1.GrantCheckReason_GRANT_CHECK_REASON_REVOKED}), nil
	// The store's liveness rule (grantcache's liveFor): expire_time after
	// now in whole seconds.
	case g.ExpireTime.Unix() <= s.env.D.Now().Unix():
		return s.checked(&pactv1.CheckGrantResponse{Reason: pactv1.GrantCheckReason_GRANT_CHECK_REASON_EXPIRED}), nil
	}
	resp.Reason, resp.MissingScopes = judge(b.Delegation.AuthorizationDetailsTypes, g, req.GetScopes(), entry)
	resp.Active = resp.Reason == pactv1.GrantCheckReason_GRANT_CHECK_REASON_UNSPECIFIED
	return s.checked(resp), nil
}

// parseCheckEntry reads CheckGrant's one authorization_details entry with
// the Brand's declarations. The entry's scope need not be granted (that
// is an answer, not an error), so it is parsed against all of the Brand's
// scopes.
func parseCheckEntry(b db.Brand, raw string) (authzdetails.Entry, error) {
	const field = "authorization_details_json"
	if raw[0] != '{' {
		return authzdetails.Entry{}, rpcerr.InvalidField(field, "must be one JSON object (an RFC 9396 authorization_details entry)")
	}
	all := make([]string, 0, len(b.Delegation.Scopes))
	for _, sc := range b.Delegation.Scopes {
		all = append(all, sc.ID)
	}
	entries, _, perr := authzdetails.Parse("["+raw+"]", b.Delegation.AuthorizationDetailsTypes, all)
	if perr != nil {
		return authzdetails.Entry{}, rpcerr.InvalidField(field, "%s", strings.TrimPrefix(strings.ReplaceAll(perr.Description, "authorization_details[0]", "the entry"), "authorization_details "))
	}
	if len(entries) != 1 {
		return authzdetails.Entry{}, rpcerr.InvalidField(field, "must be one JSON object (an RFC 9396 authorization_details entry)")
	}
	return entries[0], nil
}

// judge says whether a live grant grants the scopes and covers the entry,
// by the rule consent skipping uses (covers), with each of the grant's
// entries under the scope it was approved under (never the Brand's current
// mapping, so no Brand change widens what the guard lets run): a scope
// must be granted; a scope the grant restricts with authorization_details
// is granted only for an entry it holds under that scope exactly
// (canonical JSON). The action's entry is judged under the scope its type
// requires now. A grant entry whose scope is unknown (stored before entries
// remembered it) cannot be judged, so it restricts every scope.
func judge(types []authzdetails.Type, g db.Grant, scopes []string, entry *authzdetails.Entry) (pactv1.GrantCheckReason, []string) {
	want := slices.Clone(scopes)
	var entryScope string
	if entry != nil {
		entryScope = authzdetails.Find(types, entry.Type).Scope // parsed against types: declared
		if !slices.Contains(want, entryScope) {
			want = append(want, entryScope)
		}
	}
	var missing []string
	for _, sc := range want {
		if !slices.Contains(g.Scopes, sc) && !slices.Contains(missing, sc) {
			missing = append(missing, sc)
		}
	}
	if len(missing) > 0 {
		return pactv1.GrantCheckReason_GRANT_CHECK_REASON_SCOPE_NOT_GRANTED, missing
	}
	held, err := base.StoredEntries(g.AuthorizationDetails, g.AuthorizationDetailsScopes)
	if err != nil {
		return pactv1.GrantCheckReason_GRANT_CHECK_REASON_DETAILS_NOT_COVERED, nil // unreadable: never errs towards active
	}
	restricted := map[string]map[string]bool{} // recorded scope → the grant's entries of it
	unknown := false
	for _, h := range held {
		if h.Scope == db.EntryScopeUnknown {
			unknown = true
			continue
		}
		if restricted[h.Scope] == nil {
			restricted[h.Scope] = map[string]bool{}
		}
		restricted[h.Scope][h.Canonical()] = true
	}
	covered := false // the entry is held under its scope
	if entry != nil {
		covered = restricted[entryScope][entry.Canonical()]
		if !covered && (restricted[entryScope] != nil || unknown) {
			return pactv1.GrantCheckReason_GRANT_CHECK_REASON_DETAILS_NOT_COVERED, nil
		}
	}
	var bound []string
	for _, sc := range want {
		// The entry's own scope was judged above: covered, or unrestricted.
		if (restricted[sc] != nil || unknown) && (entry == nil || sc != entryScope) {
			bound = append(bound, sc)
		}
	}
	if len(bound) > 0 {
		return pactv1.GrantCheckReason_GRANT_CHECK_REASON_SCOPE_RESTRICTED, bound
	}
	return pactv1.GrantCheckReason_GRANT_CHECK_REASON_UNSPECIFIED, nil
}

// checked counts an answer.
func (s *Service) checked(r *pactv1.CheckGrantResponse) *pactv1.CheckGrantResponse {
	if s.checks != nil {
		result := "active"
		if !r.GetActive() {
			result = strings.ToLower(strings.TrimPrefix(r.GetReason().String(), "GRANT_CHECK_REASON_"))
		}
		s.checks.WithLabelValues(result).Inc()
	}
	return r
}

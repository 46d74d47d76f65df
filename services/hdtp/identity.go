package hdtp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/hdtp/address"
	"pactd.dev/pactd/internal/hdtp/card"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/ids"
	"pactd.dev/pactd/internal/paging"
	"pactd.dev/pactd/internal/rpcerr"
)

// Bounds and durations of the identity service.
const (
	// MaxDisplayName bounds a display name, in characters.
	MaxDisplayName = 200
	// requestLifetime is how long a wallet may take to sign (HDTP §9.1:
	// expires at most ten minutes after the request).
	requestLifetime = 10 * time.Minute
	// answerLifetime is how long InstallChain accepts the answer to a
	// signing request: the wallet signs within ten minutes, but the
	// answer may reach the host later (a person finishing on another
	// device).
	answerLifetime = 24 * time.Hour
	// suggestedValidDays is the validity a signing request suggests: one
	// year, as §14.1 recommends.
	suggestedValidDays = 365
)

// CreateIdentity creates an identity, its first key and signing request.
func (s *Identities) CreateIdentity(ctx context.Context, req *hdtpv1.CreateIdentityRequest) (*hdtpv1.CreateIdentityResponse, error) {
	var v rpcerr.Violations
	if _, err := address.Check(req.GetEndpoint()); err != nil {
		v.Add("endpoint", "is not an https endpoint in normal form (%s)", address.ReasonOf(err))
	}
	checkDisplayName(&v, req.GetDisplayName())
	gen, gerr := generation(req.GetGeneration())
	if gerr != nil {
		v.Add("generation", "is required: GENERATION_PACT2 or GENERATION_HDTP1")
	}
	seal, alg := "required", "ed25519"
	if req.GetSeal() != hdtpv1.SealPolicy_SEAL_POLICY_UNSPECIFIED {
		if seal = sealOf(req.GetSeal()); seal == "" {
			v.Add("seal", "is not a seal policy")
		}
	}
	if req.GetKeyAlgorithm() != hdtpv1.KeyAlgorithm_KEY_ALGORITHM_UNSPECIFIED {
		if alg = algOf(req.GetKeyAlgorithm()); alg == "" {
			v.Add("key_algorithm", "is not a key algorithm")
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := s.d.Now()
	id, err := s.d.Store.CreateHDTPIdentity(ctx, db.HDTPIdentity{ID: ids.New("hid_", now), Generation: gen.String(), Endpoint: req.GetEndpoint(),
		DisplayName: req.GetDisplayName(), Seal: seal, KeyAlg: alg, CreateTime: now, UpdateTime: now})
	if errors.Is(err, db.ErrConflict) {
		return nil, rpcerr.AlreadyExists("an identity with this endpoint exists")
	}
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, "create hdtp identity", err)
	}
	sr, err := s.newSigningRequest(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	return &hdtpv1.CreateIdentityResponse{Identity: identityToProto(id, nil), SigningRequest: sr}, nil
}

func checkDisplayName(v *rpcerr.Violations, name string) {
	switch {
	case name == "":
		v.Add("display_name", "is required")
	case !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxDisplayName:
		v.Add("display_name", "must be 1 to %d UTF-8 characters", MaxDisplayName)
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) >= 0:
		v.Add("display_name", "must not hold a control character (a line break would plant a property in the card)")
	}
}

// GetIdentity returns one identity.
func (s *Identities) GetIdentity(ctx context.Context, req *hdtpv1.GetIdentityRequest) (*hdtpv1.GetIdentityResponse, error) {
	id, leaves, err := s.load(ctx, req.GetIdentityId())
	if err != nil {
		return nil, err
	}
	return &hdtpv1.GetIdentityResponse{Identity: identityToProto(id, leaves)}, nil
}

// ListIdentities lists identities in creation order.
func (s *Identities) ListIdentities(ctx context.Context, req *hdtpv1.ListIdentitiesRequest) (*hdtpv1.ListIdentitiesResponse, error) {
	p, err := paging.Parse(&pactv1.PageRequest{PageSize: req.GetPageSize(), PageToken: req.GetPageToken()})
	if err != nil {
		return nil, err
	}
	list, err := s.d.Store.ListHDTPIdentities(ctx, p.AfterID, p.Size)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, "list hdtp identities", err)
	}
	resp := &hdtpv1.ListIdentitiesResponse{Identities: make([]*hdtpv1.Identity, 0, len(list))}
	for _, id := range list {
		leaves, err := s.d.Store.ListHDTPLeaves(ctx, id.ID)
		if err != nil {
			return nil, rpcerr.Fault(ctx, s.d.Logger, "list hdtp leaves", err)
		}
		resp.Identities = append(resp.Identities, identityToProto(id, leaves))
	}
	if len(list) > 0 {
		resp.NextPageToken = paging.Next(len(list), p.Size, list[len(list)-1].ID)
	}
	return resp, nil
}

// UpdateIdentity changes the named fields.
func (s *Identities) UpdateIdentity(ctx context.Context, req *hdtpv1.UpdateIdentityRequest) (*hdtpv1.UpdateIdentityResponse, error) {
	in := req.GetIdentity()
	id, leaves, err := s.load(ctx, in.GetIdentityId())
	if err != nil {
		return nil, err
	}
	paths := req.GetUpdateMask().GetPaths()
	var v rpcerr.Violations
	if len(paths) == 0 {
		v.Add("update_mask", "name the fields to change: display_name, seal, key_algorithm, generation, accept_new_hosts, client_cert")
	}
	policy := false
	for _, p := range paths {
		switch p {
		case "display_name":
			checkDisplayName(&v, in.GetDisplayName())
			id.DisplayName = in.GetDisplayName()
		case "seal":
			if id.Seal = sealOf(in.GetSeal()); id.Seal == "" {
				v.Add("identity.seal", "is not a seal policy")
			}
		case "key_algorithm":
			if id.KeyAlg = algOf(in.GetKeyAlgorithm()); id.KeyAlg == "" {
				v.Add("identity.key_algorithm", "is not a key algorithm")
			}
		case "generation":
			g, err := generation(in.GetGeneration())
			if err != nil {
				v.Add("identity.generation", "is required: GENERATION_PACT2 or GENERATION_HDTP1")
			}
			id.Generation = g.String()
		case "accept_new_hosts":
			policy = true
			switch in.GetAcceptNewHosts() {
			case hdtpv1.AcceptNewHosts_ACCEPT_NEW_HOSTS_AUTO:
				id.AcceptNewHosts = "auto"
			case hdtpv1.AcceptNewHosts_ACCEPT_NEW_HOSTS_ASK:
				id.AcceptNewHosts = "ask"
			default:
				v.Add("identity.accept_new_hosts", "is ACCEPT_NEW_HOSTS_AUTO or ACCEPT_NEW_HOSTS_ASK")
			}
		case "client_cert":
			policy = true
			if id.ClientCert = clientCertOf(in.GetClientCert()); id.ClientCert == "" {
				v.Add("identity.client_cert", "is CLIENT_CERT_POSTURE_OFF, _PREFERRED or _REQUIRED")
			}
		default:
			v.Add("update_mask", "cannot change %q", p)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	// A chain in place must still validate under the generation's rules.
	if cur := currentLeaf(leaves); cur != nil && id.RootDER != nil {
		if _, err := cert.VerifyChain([][]byte{cur.Certificate, id.RootDER}, cert.ChainOptions{Generation: generationOf(id.Generation),
			Now: s.d.Now(), ExpectedEndpoint: id.Endpoint}); err != nil {
			return nil, chainRefusal("the current chain does not validate under this generation", err)
		}
	}
	id.UpdateTime = s.d.Now()
	if policy {
		if err := s.d.Store.SetHDTPIdentityPolicy(ctx, id); err != nil {
			return nil, s.storeErr(ctx, "update hdtp identity policy", err)
		}
	}
	updated, err := s.d.Store.UpdateHDTPIdentity(ctx, id)
	if err != nil {
		return nil, s.storeErr(ctx, "update hdtp identity", err)
	}
	return &hdtpv1.UpdateIdentityResponse{Identity: identityToProto(updated, leaves)}, nil
}

// DeleteIdentity erases the identity, its keys and former kids.
func (s *Identities) DeleteIdentity(ctx context.Context, req *hdtpv1.DeleteIdentityRequest) (*hdtpv1.DeleteIdentityResponse, error) {
	if req.GetIdentityId() == "" {
		return nil, rpcerr.InvalidField("identity_id", "is required")
	}
	if err := s.d.Store.DeleteHDTPIdentity(ctx, req.GetIdentityId()); err != nil {
		return nil, s.storeErr(ctx, "delete hdtp identity", err)
	}
	return &hdtpv1.DeleteIdentityResponse{}, nil
}

// CreateSigningRequest makes a fresh key and its signing request.
func (s *Identities) CreateSigningRequest(ctx context.Context, req *hdtpv1.CreateSigningRequestRequest) (*hdtpv1.CreateSigningRequestResponse, error) {
	id, leaves, err := s.load(ctx, req.GetIdentityId())
	if err != nil {
		return nil, err
	}
	sr, err := s.newSigningRequest(ctx, id, leaves)
	if err != nil {
		return nil, err
	}
	return &hdtpv1.CreateSigningRequestResponse{SigningRequest: sr}, nil
}

// newSigningRequest generates a key, seals it into a pending ledger row
// with the hash of a fresh state, and returns the request.
func (s *Identities) newSigningRequest(ctx context.Context, id db.HDTPIdentity, leaves []db.HDTPLeaf) (*hdtpv1.SigningRequest, error) {
	now := s.d.Now()
	key, err := newKey(id.KeyAlg)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, "generate hdtp leaf key", err)
	}
	kid, sealed, err := s.sealKey(id.ID, key)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, "seal hdtp leaf key", err)
	}
	csr, err := cert.NewCSR(key, id.DisplayName, id.Endpoint)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, "write hdtp signing request", err)
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24+)
	state := wire.B64Encode(raw)
	deadline := now.Add(answerLifetime)
	err = s.d.Store.PutHDTPPendingLeaf(ctx, db.HDTPLeaf{KID: kid, IdentityID: id.ID, KeyAlg: id.KeyAlg, State: db.HDTPLeafPending,
		SealedKey: sealed, RequestStateHash: stateHash(state), RequestExpireTime: deadline, CreateTime: now})
	if err != nil {
		return nil, s.storeErr(ctx, "store hdtp signing request", err)
	}
	s.m.signingRequests.Inc()
	sr := &hdtpv1.SigningRequest{Csr: wire.B64Encode(csr), Kid: kid, Purpose: "move", State: state, ValidDays: strconv.Itoa(suggestedValidDays),
		Expires: now.UTC().Add(requestLifetime).Format("2006-01-02T15:04:05Z"), AnswerDeadline: timestamppb.New(deadline)}
	if currentLeaf(leaves) != nil {
		sr.Purpose = "renew"
	}
	if id.RootDER != nil {
		sr.ExpectRoot, sr.RootCert = id.RootFingerprint, wire.B64Encode(id.RootDER)
	}
	return sr, nil
}

// InstallChain installs the wallet's answer.
func (s *Identities) InstallChain(ctx context.Context, req *hdtpv1.InstallChainRequest) (*hdtpv1.InstallChainResponse, error) {
	id, leaves, err := s.load(ctx, req.GetIdentityId())
	if err != nil {
		return nil, err
	}
	now := s.d.Now()
	o := cert.ChainOptions{Generation: generationOf(id.Generation), Now: now, ExpectedEndpoint: id.Endpoint}
	if id.RootFingerprint != "" {
		root, _ := wire.ParseFingerprint(id.RootFingerprint)
		o.ExpectedRoot = &root
	}
	chain, err := cert.VerifyChain(req.GetChain(), o)
	if err != nil {
		s.m.installs.WithLabelValues(string(cert.ReasonOf(err))).Inc()
		return nil, chainRefusal("the chain does not validate", err)
	}
	// The chain's leaf carries the pending key, and the state is the
	// request's (both checked again, atomically, by the store).
	pending, err := s.d.Store.GetHDTPLeaf(ctx, chain.Leaf.Fingerprint())
	if errors.Is(err, db.ErrNotFound) || err == nil && (pending.IdentityID != id.ID || pending.State != db.HDTPLeafPending) {
		s.m.installs.WithLabelValues("no_pending_request").Inc()
		return nil, precondition("the chain's leaf does not carry the key of the identity's pending signing request", "refusal", "no_pending_request")
	}
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.d.Logger, "load hdtp leaf", err)
	}
	expect := ""
	var comparison hdtpv1.LeafComparison
	if cur := currentLeaf(leaves); cur != nil {
		curCert, err := cert.Parse(cur.Certificate, cert.KindLeaf, generationOf(id.Generation))
		if err != nil {
			return nil, rpcerr.Fault(ctx, s.d.Logger, "read the current hdtp leaf", err)
		}
		if c := cert.Compare(curCert, chain.Leaf); c != cert.Renewal {
			s.m.installs.WithLabelValues(string(cert.ReasonNotNewer)).Inc()
			return nil, precondition("the leaf is not newer than the current one (§14.3: "+c.String()+")",
				"rule", "0", "cert_reason", string(cert.ReasonNotNewer), "comparison", c.String())
		}
		expect, comparison = cur.KID, hdtpv1.LeafComparison_LEAF_COMPARISON_RENEWAL
	}
	installed, err := s.d.Store.InstallHDTPLeaf(ctx, db.HDTPInstall{IdentityID: id.ID, KID: pending.KID, StateHash: stateHash(req.GetState()),
		Certificate: chain.Leaf.Raw, NotBefore: chain.Leaf.NotBefore, NotAfter: chain.Leaf.NotAfter, RootDER: chain.Root.Raw,
		RootFingerprint: chain.Root.Fingerprint(), ExpectCurrentKID: expect, Now: now})
	switch {
	case errors.Is(err, db.ErrNotFound):
		s.m.installs.WithLabelValues("no_pending_request").Inc()
		return nil, precondition("no pending signing request with this state (unknown, answered already, or past its deadline)", "refusal", "no_pending_request")
	case errors.Is(err, db.ErrConflict):
		s.m.installs.WithLabelValues("install_conflict").Inc()
		return nil, precondition("another chain was installed meanwhile; read the identity again", "refusal", "install_conflict")
	case err != nil:
		return nil, rpcerr.Fault(ctx, s.d.Logger, "install hdtp chain", err)
	}
	s.m.installs.WithLabelValues("installed").Inc()
	s.d.Logger.InfoContext(ctx, "hdtp chain installed", slog.String("identity_id", id.ID), slog.String("kid", installed.KID))
	id, leaves, err = s.load(ctx, id.ID)
	if err != nil {
		return nil, err
	}
	return &hdtpv1.InstallChainResponse{Identity: identityToProto(id, leaves), Leaf: leafToProto(installed), Comparison: comparison}, nil
}

// ListLeaves returns the ledger.
func (s *Identities) ListLeaves(ctx context.Context, req *hdtpv1.ListLeavesRequest) (*hdtpv1.ListLeavesResponse, error) {
	_, leaves, err := s.load(ctx, req.GetIdentityId())
	if err != nil {
		return nil, err
	}
	resp := &hdtpv1.ListLeavesResponse{Leaves: make([]*hdtpv1.Leaf, 0, len(leaves))}
	for _, l := range leaves {
		resp.Leaves = append(resp.Leaves, leafToProto(l))
	}
	return resp, nil
}

// GetCard serves the identity's card, signed by its current leaf.
func (s *Identities) GetCard(ctx context.Context, req *hdtpv1.GetCardRequest) (*hdtpv1.GetCardResponse, error) {
	id, leaves, err := s.load(ctx, req.GetIdentityId())
	if err != nil {
		return nil, err
	}
	cr, err := s.card(id, leaves)
	switch {
	case errors.Is(err, errNoChain):
		return nil, precondition("the identity has no chain yet: install the wallet's answer to its signing request first", "refusal", "no_chain")
	case errors.Is(err, errLeafExpired):
		return nil, precondition("the current leaf has expired: renew it (CreateSigningRequest)", "refusal", "leaf_expired")
	case err != nil:
		return nil, rpcerr.Fault(ctx, s.d.Logger, "write hdtp card", err)
	}
	return &hdtpv1.GetCardResponse{Card: cr.text, CardSig: cr.sig, Chain: cr.chain, LimitsJson: cr.limits, GetCardResultJson: cr.result}, nil
}

// Why an identity has no card to serve.
var (
	errNoChain     = errors.New("the identity has no chain yet")
	errLeafExpired = errors.New("the identity's current leaf has expired")
)

// servedCard is an identity's card as get_card, redeem_invite and the
// invite landing serve it.
type servedCard struct {
	text, sig string
	// chain is [leaf, root], base64url.
	chain  []string
	limits string
	// result is the whole get_card result.
	result string
}

// card writes and signs the identity's card with its current leaf.
func (s *Identities) card(id db.HDTPIdentity, leaves []db.HDTPLeaf) (servedCard, error) {
	cur := currentLeaf(leaves)
	if cur == nil || id.RootDER == nil {
		return servedCard{}, errNoChain
	}
	if !s.d.Now().Before(cur.NotAfter) {
		return servedCard{}, errLeafExpired
	}
	gen := generationOf(id.Generation)
	text, err := card.Write(gen, id.DisplayName, cur.Certificate, card.Seal(id.Seal))
	if err != nil {
		return servedCard{}, err
	}
	key, err := s.openKey(*cur)
	if err != nil {
		return servedCard{}, err
	}
	sig, err := card.Sign(key, text)
	if err != nil {
		return servedCard{}, err
	}
	chain := []string{wire.B64Encode(cur.Certificate), wire.B64Encode(id.RootDER)}
	limits := s.d.Limits.JSON(gen)
	result, err := getCardResult(text, sig, chain, limits)
	if err != nil {
		return servedCard{}, err
	}
	return servedCard{text: text, sig: sig, chain: chain, limits: limits, result: result}, nil
}

// getCardResult writes get_card's result: card, card_sig, chain, limits.
func getCardResult(text, sig string, chain []string, limits string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(text); err != nil {
		return "", err
	}
	cardJSON := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return `{"card":` + string(cardJSON) + `,"card_sig":"` + sig + `","chain":["` + chain[0] + `","` + chain[1] + `"],"limits":` + limits + `}`, nil
}

// Sweep destroys leaf keys past their notAfter (keeping the kids) and
// deletes expired signing requests; server runs it hourly.
func (s *Identities) Sweep(ctx context.Context) (int64, error) {
	n, err := s.d.Store.SweepHDTPLeaves(ctx, s.d.Now())
	if n > 0 {
		s.m.keysDestroyed.Add(float64(n))
	}
	return n, err
}

// load reads an identity and its ledger.
func (s *Identities) load(ctx context.Context, idStr string) (db.HDTPIdentity, []db.HDTPLeaf, error) {
	if idStr == "" {
		return db.HDTPIdentity{}, nil, rpcerr.InvalidField("identity_id", "is required")
	}
	id, err := s.d.Store.GetHDTPIdentity(ctx, idStr)
	if err != nil {
		return db.HDTPIdentity{}, nil, s.storeErr(ctx, "load hdtp identity", err)
	}
	leaves, err := s.d.Store.ListHDTPLeaves(ctx, id.ID)
	if err != nil {
		return db.HDTPIdentity{}, nil, rpcerr.Fault(ctx, s.d.Logger, "list hdtp leaves", err)
	}
	return id, leaves, nil
}

func (s *Identities) storeErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return rpcerr.NotFound("identity")
	}
	return rpcerr.Fault(ctx, s.d.Logger, op, err)
}

func currentLeaf(leaves []db.HDTPLeaf) *db.HDTPLeaf {
	for i := range leaves {
		if leaves[i].State == db.HDTPLeafCurrent {
			return &leaves[i]
		}
	}
	return nil
}

// precondition is a FAILED_PRECONDITION error whose ErrorInfo carries the
// refusal in metadata (key, value pairs).
func precondition(msg string, kv ...string) error {
	err := connect.NewError(connect.CodeFailedPrecondition, errors.New(msg))
	md := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		md[kv[i]] = kv[i+1]
	}
	if d, derr := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: pactv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION.String(),
		Domain: rpcerr.Domain, Metadata: md}); derr == nil {
		err.AddDetail(d)
	}
	return err
}

// chainRefusal is a precondition naming a chain's rule and reason.
func chainRefusal(msg string, err error) error {
	return precondition(msg+": "+err.Error(), "rule", strconv.Itoa(cert.RuleOf(err)), "cert_reason", string(cert.ReasonOf(err)))
}

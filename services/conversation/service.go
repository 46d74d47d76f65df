// Package conversation implements pact.v1.ConversationService: A2A
// conversation state for frontends (PACT 1.0 §4, steps 6 to 8 of
// message:send). A context belongs to one (Brand, agent, sub); its id is a
// UUID pactd mints; it may be bound once to a Brand user; and each messageId
// in it is claimed once, so a retry replays the stored reply and a
// concurrent duplicate never runs the agent twice.
//
// Outcomes a PA must see (unknown context, closed context, pending
// duplicate…) are A2A errors in the response, built by internal/a2aerr so
// every frontend sends identical bytes. RPC errors are kept for malformed
// calls (InvalidArgument), misuse by the frontend (NotFound,
// AlreadyExists) and infrastructure (Unavailable).
package conversation

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/internal/a2aerr"
	"pactd.dev/pactd/internal/bounds"
	"pactd.dev/pactd/internal/rpcerr"
)

// Bounds of the conversation inputs, in bytes.
const (
	// MaxContextID bounds a contextId; longer ones are unknown.
	MaxContextID = bounds.ContextID
	// MaxMessageID bounds a messageId and a reply's messageId.
	MaxMessageID = bounds.MessageID
	// MaxReplyJSON bounds a stored reply body.
	MaxReplyJSON = 256 << 10
	// MaxOwnerField bounds the owner's ids, the subject and the Brand user:
	// the Brand user's bound, the longest of them.
	MaxOwnerField = bounds.BrandUser
	// MaxClaim bounds a claim id a frontend passes back (pactd mints 22
	// bytes; the bound leaves room to change that).
	MaxClaim = 64
)

// StaleClaimAge is how long a claimed turn stays pending before BeginTurn
// may claim its messageId again: the frontend (or replica) that claimed it
// is then taken to have died between BeginTurn and CompleteTurn or
// AbandonTurn, and the PA's retry runs the turn instead of getting the
// pending-duplicate error for ever. It is well above the longest a live
// run lasts: the front door's turn handle, which bounds its run, lives at
// most its turn timeout plus slack (90 s by default; the front door caps
// the timeout so that the handle always ends first, which its tests
// check). The run a stale claim was taken from cannot finish the turn any
// more, as its claim id no longer matches.
const StaleClaimAge = 10 * time.Minute

// Deps are the service's collaborators.
type Deps struct {
	// Store holds contexts and turns.
	Store Store
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// NewContextID mints a contextId; a random UUID (version 4) when nil.
	NewContextID func() string
	// NewClaim mints the id of one claim of a turn; NewClaimID when nil.
	// Ids must not repeat: a repeated one would let an earlier run finish
	// a later one.
	NewClaim func() string
	// Logger receives one line per unexpected fault.
	Logger *slog.Logger
}

// Service implements pactv1connect.ConversationServiceHandler.
type Service struct {
	pactv1connect.UnimplementedConversationServiceHandler
	d Deps
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.NewContextID == nil {
		d.NewContextID = NewUUID
	}
	if d.NewClaim == nil {
		d.NewClaim = NewClaimID
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{d: d}
}

// BeginTurn opens or continues a context and claims the turn's messageId,
// in the order of PACT §4: context ownership, closed, Brand-user lock, then
// the messageId.
func (s *Service) BeginTurn(ctx context.Context, req *pactv1.BeginTurnRequest) (*pactv1.BeginTurnResponse, error) {
	var v rpcerr.Violations
	checkOwner(&v, req.GetOwner())
	if req.GetMessageId() == "" {
		v.Add("message_id", "is required")
	}
	checkField(&v, "brand_user", req.GetBrandUser(), false)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if len(req.GetMessageId()) > MaxMessageID {
		return refuse(a2aerr.InvalidParams, a2aerr.MsgMessageIDTooLong), nil
	}
	now := s.d.Now()
	o := req.GetOwner()
	var (
		conv    db.Conversation
		created bool
	)
	if req.GetContextId() == "" {
		c, err := s.d.Store.CreateConversation(ctx, db.Conversation{
			ID: s.d.NewContextID(), BrandID: o.GetBrandId(), AgentID: o.GetAgentId(), Subject: o.GetSubject(),
			BrandUser: req.GetBrandUser(), CreateTime: now, UpdateTime: now,
		})
		if errors.Is(err, db.ErrNotFound) {
			return nil, rpcerr.NotFound("brand or agent of the owner")
		}
		if err != nil {
			return nil, s.fault(ctx, "begin turn: create context", err)
		}
		conv, created = c, true
	} else {
		c, ok, err := s.owned(ctx, o, req.GetContextId())
		if err != nil {
			return nil, s.fault(ctx, "begin turn: load context", err)
		}
		if !ok {
			return refuse(a2aerr.InvalidParams, a2aerr.MsgUnknownContextID), nil
		}
		if c.Closed() {
			return refuse(a2aerr.UnsupportedOperation, a2aerr.MsgContextClosed), nil
		}
		if bu := req.GetBrandUser(); bu != "" && c.BrandUser != bu {
			if c.BrandUser == "" {
				if c, err = s.d.Store.BindConversationUser(ctx, c.ID, bu, now); err != nil {
					return nil, s.fault(ctx, "begin turn: bind Brand user", err)
				}
			}
			if c.BrandUser != bu { // bound to another Brand user, maybe just now by a concurrent turn
				return refuse(a2aerr.InvalidParams, a2aerr.MsgOtherBrandUser), nil
			}
		}
		conv = c
	}

	claim := s.d.NewClaim()
	t, claimed, err := s.d.Store.ClaimTurn(ctx, conv.ID, req.GetMessageId(), claim, now, now.Add(-StaleClaimAge))
	if err != nil {
		return nil, s.fault(ctx, "begin turn: claim messageId", err)
	}
	resp := &pactv1.BeginTurnResponse{ContextId: conv.ID, ContextCreated: created}
	switch {
	case claimed:
		resp.Outcome, resp.Claim = pactv1.TurnOutcome_TURN_OUTCOME_RUN, claim
	case t.Role == db.MessageRoleAgent:
		resp.Outcome, resp.Error = pactv1.TurnOutcome_TURN_OUTCOME_ERROR, a2aerr.Proto(a2aerr.InvalidParams, a2aerr.MsgReplyIDCollision)
	case t.State == db.TurnReplied:
		resp.Outcome, resp.ReplyJson = pactv1.TurnOutcome_TURN_OUTCOME_REPLAY, t.ReplyJSON
	default:
		resp.Outcome, resp.Error = pactv1.TurnOutcome_TURN_OUTCOME_ERROR, a2aerr.Proto(a2aerr.InvalidParams, a2aerr.MsgPendingDuplicate)
	}
	return resp, nil
}

// CompleteTurn stores the reply of a claimed turn. Repeating the call with
// the same reply is a no-op, so a frontend may retry it. With a claim, only
// the run holding it completes the turn.
func (s *Service) CompleteTurn(ctx context.Context, req *pactv1.CompleteTurnRequest) (*pactv1.CompleteTurnResponse, error) {
	var v rpcerr.Violations
	checkOwner(&v, req.GetOwner())
	checkTurnKey(&v, req.GetContextId(), req.GetMessageId())
	checkClaim(&v, req.GetClaim())
	if r := req.GetReplyMessageId(); r == "" || len(r) > MaxMessageID {
		v.Add("reply_message_id", "must be 1 to %d bytes", MaxMessageID)
	}
	checkReplyJSON(&v, req.GetReplyJson())
	if err := v.Err(); err != nil {
		return nil, err
	}
	if err := s.turnContext(ctx, req.GetOwner(), req.GetContextId()); err != nil {
		return nil, err
	}
	now := s.d.Now()
	claim := req.GetClaim()
	err := s.d.Store.CompleteTurn(ctx, req.GetContextId(), req.GetMessageId(), claim, req.GetReplyMessageId(), req.GetReplyJson(), now)
	if err == nil {
		return &pactv1.CompleteTurnResponse{StoredAt: timestamppb.New(now.UTC().Truncate(time.Second))}, nil
	}
	if !errors.Is(err, db.ErrConflict) && !errors.Is(err, db.ErrNotFound) {
		return nil, s.fault(ctx, "complete turn", err)
	}
	// Refused: either a retry of a call that already stored this very
	// reply (answer as before), or a real conflict.
	t, gerr := s.d.Store.GetTurn(ctx, req.GetContextId(), req.GetMessageId())
	if gerr != nil && !errors.Is(gerr, db.ErrNotFound) {
		return nil, s.fault(ctx, "complete turn: load turn", gerr)
	}
	ours := gerr == nil && t.Role == db.MessageRoleUser && (claim == "" || claim == t.Claim)
	switch {
	case ours && t.State == db.TurnReplied && t.ReplyMessageID == req.GetReplyMessageId() && t.ReplyJSON == req.GetReplyJson():
		return &pactv1.CompleteTurnResponse{StoredAt: timestamppb.New(t.UpdateTime)}, nil
	case ours && t.State == db.TurnPending:
		return nil, rpcerr.AlreadyExists("reply_message_id is already used in this context")
	default:
		return nil, rpcerr.FailedPrecondition.Err(
			"the turn is not pending under this claim: it was never begun, was abandoned, has another reply, or was claimed again")
	}
}

// AbandonTurn releases a claimed turn that has no reply, so the PA may send
// the messageId again. With a claim, only the run holding it releases the
// turn.
func (s *Service) AbandonTurn(ctx context.Context, req *pactv1.AbandonTurnRequest) (*pactv1.AbandonTurnResponse, error) {
	var v rpcerr.Violations
	checkOwner(&v, req.GetOwner())
	checkTurnKey(&v, req.GetContextId(), req.GetMessageId())
	checkClaim(&v, req.GetClaim())
	if err := v.Err(); err != nil {
		return nil, err
	}
	if err := s.turnContext(ctx, req.GetOwner(), req.GetContextId()); err != nil {
		return nil, err
	}
	err := s.d.Store.AbandonTurn(ctx, req.GetContextId(), req.GetMessageId(), req.GetClaim())
	if errors.Is(err, db.ErrNotFound) {
		return nil, rpcerr.FailedPrecondition.Err(
			"the turn is not pending under this claim: it was never begun, was abandoned, has a reply, or was claimed again")
	}
	if err != nil {
		return nil, s.fault(ctx, "abandon turn", err)
	}
	return &pactv1.AbandonTurnResponse{}, nil
}

// CloseContext closes an owned context; closing it again is a no-op.
func (s *Service) CloseContext(ctx context.Context, req *pactv1.CloseContextRequest) (*pactv1.CloseContextResponse, error) {
	var v rpcerr.Violations
	checkOwner(&v, req.GetOwner())
	if req.GetContextId() == "" {
		v.Add("context_id", "is required")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if err := s.turnContext(ctx, req.GetOwner(), req.GetContextId()); err != nil {
		return nil, err
	}
	if err := s.d.Store.CloseConversation(ctx, req.GetContextId(), s.d.Now()); err != nil {
		return nil, s.storeErr(ctx, "close context", err)
	}
	return &pactv1.CloseContextResponse{}, nil
}

// owned loads the context when it exists and belongs to the owner. Every
// other case (malformed, too long, missing, another Brand, agent or sub) is
// the same "not owned", so callers cannot tell them apart.
func (s *Service) owned(ctx context.Context, o *pactv1.Owner, id string) (db.Conversation, bool, error) {
	if len(id) > MaxContextID || !IsUUID(id) {
		return db.Conversation{}, false, nil
	}
	c, err := s.d.Store.GetConversation(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Conversation{}, false, nil
	}
	if err != nil {
		return db.Conversation{}, false, err
	}
	if c.BrandID != o.GetBrandId() || c.AgentID != o.GetAgentId() || c.Subject != o.GetSubject() {
		return db.Conversation{}, false, nil
	}
	return c, true, nil
}

// turnContext checks that the owner owns the context of a CompleteTurn,
// AbandonTurn or CloseContext call.
func (s *Service) turnContext(ctx context.Context, o *pactv1.Owner, id string) error {
	_, ok, err := s.owned(ctx, o, id)
	if err != nil {
		return s.fault(ctx, "load context", err)
	}
	if !ok {
		return rpcerr.NotFound("context")
	}
	return nil
}

// refuse is a BeginTurn answer carrying an A2A error.
func refuse(r a2aerr.Reason, msg string) *pactv1.BeginTurnResponse {
	return &pactv1.BeginTurnResponse{Outcome: pactv1.TurnOutcome_TURN_OUTCOME_ERROR, Error: a2aerr.Proto(r, msg)}
}

func checkOwner(v *rpcerr.Violations, o *pactv1.Owner) {
	checkField(v, "owner.brand_id", o.GetBrandId(), true)
	checkField(v, "owner.agent_id", o.GetAgentId(), true)
	checkField(v, "owner.subject", o.GetSubject(), true)
}

func checkField(v *rpcerr.Violations, field, val string, required bool) {
	switch {
	case required && val == "":
		v.Add(field, "is required")
	case len(val) > MaxOwnerField || !utf8.ValidString(val):
		v.Add(field, "must be valid UTF-8 of at most %d bytes", MaxOwnerField)
	}
}

func checkTurnKey(v *rpcerr.Violations, contextID, messageID string) {
	if contextID == "" {
		v.Add("context_id", "is required")
	}
	if messageID == "" || len(messageID) > MaxMessageID {
		v.Add("message_id", "must be 1 to %d bytes", MaxMessageID)
	}
}

func checkClaim(v *rpcerr.Violations, claim string) {
	if len(claim) > MaxClaim {
		v.Add("claim", "must be at most %d bytes", MaxClaim)
	}
}

func checkReplyJSON(v *rpcerr.Violations, reply string) {
	switch {
	case len(reply) > MaxReplyJSON:
		v.Add("reply_json", "must be at most %d bytes", MaxReplyJSON)
	case len(reply) == 0 || reply[0] != '{' || !json.Valid([]byte(reply)):
		v.Add("reply_json", "must be a JSON object")
	}
}

func (s *Service) storeErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return rpcerr.NotFound("context")
	}
	return s.fault(ctx, op, err)
}

func (s *Service) fault(ctx context.Context, op string, err error) error {
	return rpcerr.Fault(ctx, s.d.Logger, op, err)
}

// NewUUID returns a random (version 4) UUID in lowercase canonical form.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

// NewClaimID returns a random claim id: 16 bytes from crypto/rand,
// base64url without padding (22 bytes).
func NewClaimID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// IsUUID reports whether s is a UUID in canonical 8-4-4-4-12 hex form
// (either case).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

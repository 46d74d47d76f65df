package delegtoken

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"pactd.dev/pactd/internal/scopeid"
	"pactd.dev/pactd/token/jws"
)

// Receipt kinds and limits.
const (
	// ReceiptType is the typ header of a receipt JWS (§5.6).
	ReceiptType = "pact-receipt+jws"
	// MaxReceiptBytes bounds a receipt JWS that VerifyReceipt accepts.
	MaxReceiptBytes = 64 << 10
	// MaxReceiptItems bounds scopesUsed and actions.
	MaxReceiptItems = 100
	// MaxToolName bounds an action's tool name, in bytes.
	MaxToolName = 200
)

// argsHashPattern is base64url without padding (the reference puts the
// base64url SHA-256 of the tool arguments' JSON there).
var argsHashPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ReceiptAction is one tool call recorded in a receipt.
type ReceiptAction struct {
	// Tool is the tool name.
	Tool string `json:"tool"`
	// ArgsHash is the optional base64url SHA-256 of the arguments' JSON;
	// omitted when empty.
	ArgsHash string `json:"argsHash,omitempty"`
}

// ReceiptClaims are the claims of a receipt.
type ReceiptClaims struct {
	// GrantID is grantId: the grant the reply was made under.
	GrantID string
	// User is user: the User's id at the Brand.
	User string
	// PA is pa: the PA's issuer URL.
	PA string
	// Brand is brand: the Brand's interface URL.
	Brand string
	// ScopesUsed is scopesUsed; nil is encoded as [].
	ScopesUsed []string
	// Actions is actions; nil is encoded as [].
	Actions []ReceiptAction
	// TS is ts, encoded as RFC 3339 in UTC with whole seconds.
	TS time.Time
}

// wireReceipt is the receipt JSON, members in this order.
type wireReceipt struct {
	GrantID    string          `json:"grantId"`
	User       string          `json:"user"`
	PA         string          `json:"pa"`
	Brand      string          `json:"brand"`
	ScopesUsed []string        `json:"scopesUsed"`
	Actions    []ReceiptAction `json:"actions"`
	TS         string          `json:"ts"`
}

// SignReceipt signs a receipt: the JWS payload is exactly claimsJSON, which
// the caller puts under pact.receipt.claims. scopesUsed and actions are
// always arrays, never null. Bad claims are refused with a *FieldError.
func (s *Signer) SignReceipt(ctx context.Context, c ReceiptClaims) (jws string, claimsJSON []byte, err error) {
	if c.TS.IsZero() {
		c.TS = s.now()
	}
	if err := checkReceipt(c); err != nil {
		return "", nil, err
	}
	w := wireReceipt{
		GrantID: c.GrantID, User: c.User, PA: c.PA, Brand: c.Brand,
		ScopesUsed: c.ScopesUsed, Actions: c.Actions, TS: c.TS.UTC().Format(time.RFC3339),
	}
	if w.ScopesUsed == nil {
		w.ScopesUsed = []string{}
	}
	if w.Actions == nil {
		w.Actions = []ReceiptAction{}
	}
	claimsJSON, err = json.Marshal(w)
	if err != nil {
		return "", nil, fmt.Errorf("delegtoken: encode receipt: %w", err)
	}
	jws, err = s.keys.Sign(ctx, ReceiptType, claimsJSON)
	if err != nil {
		return "", nil, fmt.Errorf("delegtoken: sign receipt: %w", err)
	}
	return jws, claimsJSON, nil
}

// Validate returns the first claim SignReceipt would refuse, as a
// *FieldError, or nil. A zero TS is refused here (SignReceipt fills it).
func (c ReceiptClaims) Validate() error { return checkReceipt(c) }

func checkReceipt(c ReceiptClaims) error {
	if c.GrantID == "" || len(c.GrantID) > 512 {
		return &FieldError{"grantId", "must be 1 to 512 bytes"}
	}
	if c.User == "" || len(c.User) > 512 {
		return &FieldError{"user", "must be 1 to 512 bytes"}
	}
	if !isHTTPURL(c.PA) {
		return &FieldError{"pa", "must be an absolute http(s) URL"}
	}
	if !isHTTPURL(c.Brand) {
		return &FieldError{"brand", "must be an absolute http(s) URL"}
	}
	if len(c.ScopesUsed) > MaxReceiptItems {
		return &FieldError{"scopesUsed", fmt.Sprintf("at most %d scopes", MaxReceiptItems)}
	}
	for i, sc := range c.ScopesUsed {
		if !scopeid.Valid(sc) {
			return &FieldError{fmt.Sprintf("scopesUsed[%d]", i), "is not a valid scope id"}
		}
	}
	if len(c.Actions) > MaxReceiptItems {
		return &FieldError{"actions", fmt.Sprintf("at most %d actions", MaxReceiptItems)}
	}
	for i, a := range c.Actions {
		if a.Tool == "" || len(a.Tool) > MaxToolName {
			return &FieldError{fmt.Sprintf("actions[%d].tool", i), fmt.Sprintf("must be 1 to %d bytes", MaxToolName)}
		}
		if a.ArgsHash != "" && !argsHashPattern.MatchString(a.ArgsHash) {
			return &FieldError{fmt.Sprintf("actions[%d].argsHash", i), "must be base64url (no padding), at most 128 characters"}
		}
	}
	if y := c.TS.UTC().Year(); y < 2000 || y > 9999 {
		return &FieldError{"ts", "must be a time between the years 2000 and 9999"}
	}
	return nil
}

// VerifyReceipt checks a receipt the way a PA does (§5.6): the JWS is an
// ES256 pact-receipt+jws signed by a published Provider key, and its
// payload equals claimsJSON as canonical JSON (sorted keys, so member order
// does not matter but every value must be identical). It returns the
// claims; scopesUsed and actions must be arrays.
func (v *Verifier) VerifyReceipt(ctx context.Context, receipt string, claimsJSON []byte) (ReceiptClaims, error) {
	res, err := verifyJWS(ctx, v.keys, receipt, ReceiptType, MaxReceiptBytes)
	if err != nil {
		return ReceiptClaims{}, err
	}
	a, errA := jws.Canonical(res.payload, jws.MaxDepth)
	b, errB := jws.Canonical(claimsJSON, jws.MaxDepth)
	if errA != nil {
		return ReceiptClaims{}, refuse(ReasonMalformed)
	}
	if errB != nil || !bytes.Equal(a, b) {
		return ReceiptClaims{}, refuse(ReasonReceiptMismatch)
	}
	m, err := objectMembers(res.payload)
	if err != nil {
		return ReceiptClaims{}, refuse(ReasonMalformed)
	}
	for _, name := range []string{"scopesUsed", "actions"} {
		if raw := m[name]; len(raw) == 0 || raw[0] != '[' {
			return ReceiptClaims{}, refuse(ReasonClaims)
		}
	}
	var w wireReceipt
	if err := json.Unmarshal(res.payload, &w); err != nil {
		return ReceiptClaims{}, refuse(ReasonClaims)
	}
	ts, err := time.Parse(time.RFC3339, w.TS)
	if err != nil || w.GrantID == "" || w.User == "" || !isHTTPURL(w.PA) || !isHTTPURL(w.Brand) {
		return ReceiptClaims{}, refuse(ReasonClaims)
	}
	for _, act := range w.Actions {
		if act.Tool == "" {
			return ReceiptClaims{}, refuse(ReasonClaims)
		}
	}
	return ReceiptClaims{
		GrantID: w.GrantID, User: w.User, PA: w.PA, Brand: w.Brand,
		ScopesUsed: w.ScopesUsed, Actions: w.Actions, TS: ts.UTC(),
	}, nil
}

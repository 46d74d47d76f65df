package cert

import (
	"bytes"
	"time"

	"pactd.dev/pactd/hdtp/wire"
)

// ChainOptions are what the verifier knows about the chain in question.
type ChainOptions struct {
	// Generation decides the root's end-date rules.
	Generation wire.Generation
	// Now is the time the leaf must be valid at.
	Now time.Time
	// ExpectedRoot, when set, is the root the chain must lead to: a pin,
	// or a card's authorityKeyIdentifier.
	ExpectedRoot *wire.KeyID
	// ExpectedEndpoint, when set, is the address in question (the URL
	// dialed, a card's endpoint); the leaf must name it byte for byte.
	// Inbound calls leave it empty: a pinned root at another endpoint is
	// the new-address case, not a refusal.
	ExpectedEndpoint string
}

// Chain is a validated chain.
type Chain struct {
	Leaf, Root *Certificate
}

// DER returns the chain as it travels: [leaf, root].
func (c *Chain) DER() [][]byte { return [][]byte{c.Leaf.Raw, c.Root.Raw} }

// VerifyChain validates a chain by §14.2, in its order, and returns the
// first refusal as an *Error naming its rule and reason:
//
//  1. Shape: exactly two certificates, [0] of the leaf profile and [1] of
//     the root profile (a lone self-signed certificate fails here).
//  2. Root: its self-signature verifies; if a root is expected, its key id
//     (hashed from its key, never read from its SKI) is that root.
//  3. Leaf: its authorityKeyIdentifier is the root's key id and its
//     signature verifies under the root's key (with the root's algorithm).
//  4. Dates, bounds inclusive: HDTP first refuses a root past its end date
//     and a leaf that outlives its root; then notBefore <= now <= notAfter
//     for the leaf and a span of at most 398 days. The root's notBefore is
//     never read: a root newer than its first leaf is normal.
//  5. Endpoint: if one is expected, the leaf names it byte for byte.
//
// The leaf's key is then the proven key.
func VerifyChain(chain [][]byte, o ChainOptions) (*Chain, error) {
	c, e := verifyChain(chain, o)
	if e != nil {
		return nil, e
	}
	return c, nil
}

func verifyChain(chain [][]byte, o ChainOptions) (*Chain, *Error) {
	// Rule 1.
	if len(chain) != 2 {
		return nil, refuse(ReasonChainLength, "")
	}
	leaf, e := parse(chain[0], KindLeaf, o.Generation)
	if e != nil {
		if _, asRoot := parse(chain[0], KindRoot, o.Generation); asRoot == nil {
			e = refuse(ReasonNotALeaf, "")
		}
		e.Cert = 0
		return nil, e
	}
	root, e := parse(chain[1], KindRoot, o.Generation)
	if e != nil {
		if _, asLeaf := parse(chain[1], KindLeaf, o.Generation); asLeaf == nil {
			e = refuse(ReasonNotARoot, "")
		}
		e.Cert = 1
		return nil, e
	}
	// Rule 2.
	if !VerifySignature(root.PublicKey, root.RawTBS, root.Signature) {
		return nil, &Error{Rule: 2, Reason: ReasonRootSignature, Cert: 1}
	}
	if o.ExpectedRoot != nil && root.KeyID != *o.ExpectedRoot {
		return nil, &Error{Rule: 2, Reason: ReasonRootMismatch, Cert: 1}
	}
	// Rule 3.
	if leaf.AuthorityKeyID != root.KeyID {
		return nil, &Error{Rule: 3, Reason: ReasonAKIMismatch, Cert: 0}
	}
	if leaf.SigAlg != root.KeyAlg || !VerifySignature(root.PublicKey, leaf.RawTBS, leaf.Signature) {
		return nil, &Error{Rule: 3, Reason: ReasonLeafSignature, Cert: 0}
	}
	// Rule 4.
	if e := checkDates(leaf, root, o); e != nil {
		return nil, e
	}
	// Rule 5.
	if o.ExpectedEndpoint != "" && leaf.Endpoint != o.ExpectedEndpoint {
		return nil, &Error{Rule: 5, Reason: ReasonEndpointMismatch, Cert: 0}
	}
	return &Chain{Leaf: leaf, Root: root}, nil
}

func checkDates(leaf, root *Certificate, o ChainOptions) *Error {
	now := o.Now
	if o.Generation.Strings().RootEndDate {
		if now.After(root.NotAfter) {
			return &Error{Rule: 4, Reason: ReasonRootExpired, Cert: 1}
		}
		if leaf.NotAfter.After(root.NotAfter) {
			return &Error{Rule: 4, Reason: ReasonLeafOutlivesRoot, Cert: 0}
		}
	}
	if now.Before(leaf.NotBefore) {
		return &Error{Rule: 4, Reason: ReasonLeafNotYetValid, Cert: 0}
	}
	if now.After(leaf.NotAfter) {
		return &Error{Rule: 4, Reason: ReasonLeafExpired, Cert: 0}
	}
	if leaf.NotAfter.Sub(leaf.NotBefore) > MaxLeafSpan {
		return &Error{Rule: 4, Reason: ReasonLeafSpan, Cert: 0}
	}
	return nil
}

// Comparison is how a presented leaf stands against the pinned one
// (§14.3): the newest leaf wins, by notBefore.
type Comparison uint8

// The comparisons.
const (
	// Same: equal notBefore and the same bytes; use the pin's tier.
	Same Comparison = 1
	// Renewal: a later notBefore at the pinned endpoint; replace the pinned
	// leaf as it passes, no approval needed.
	Renewal Comparison = 2
	// NewAddress: a later notBefore at another endpoint: the move flow.
	NewAddress Comparison = 3
	// Superseded: an earlier notBefore; the caller gets the guest tier, a
	// result carrying it is envelope_invalid, and nothing is sealed to it.
	Superseded Comparison = 4
	// Conflict: equal notBefore, different bytes; refused
	// (envelope_invalid in an envelope).
	Conflict Comparison = 5
)

// String names the comparison.
func (c Comparison) String() string {
	switch c {
	case Same:
		return "same"
	case Renewal:
		return "renewal"
	case NewAddress:
		return "new_address"
	case Superseded:
		return "superseded"
	case Conflict:
		return "conflict"
	}
	return "invalid"
}

// Compare compares a presented leaf with the pinned one of the same root.
// A pin never moves backwards and there is no grace period.
func Compare(pinned, presented *Certificate) Comparison {
	switch {
	case presented.NotBefore.Before(pinned.NotBefore):
		return Superseded
	case presented.NotBefore.Equal(pinned.NotBefore):
		if bytes.Equal(presented.Raw, pinned.Raw) {
			return Same
		}
		return Conflict
	case presented.Endpoint == pinned.Endpoint:
		return Renewal
	}
	return NewAddress
}

// FollowRenewed decides, for a caller, whether to follow a
// certificate_renewed answer's chain (§14.4): only if it validates against
// the pinned root (the pinned leaf's issuer) and the dialed address, and
// compares same or newer (a renewal) against the pinned leaf. Otherwise
// the chain is discarded and the call fails as it would have. A caller
// follows at most once per call; that count is the caller's.
func FollowRenewed(pinned *Certificate, dialed string, chain [][]byte, gen wire.Generation, now time.Time) (*Chain, error) {
	root := pinned.AuthorityKeyID
	c, err := VerifyChain(chain, ChainOptions{Generation: gen, Now: now, ExpectedRoot: &root, ExpectedEndpoint: dialed})
	if err != nil {
		return nil, err
	}
	switch Compare(pinned, c.Leaf) {
	case Same, Renewal:
		return c, nil
	}
	return nil, &Error{Rule: 0, Reason: ReasonNotNewer, Cert: 0}
}

// Package db is the only place in pactd that knows SQL exists. It holds the
// record types the services work with, the Store contract both engines
// fulfil, and the two engines: embedded SQLite (the default) and PostgreSQL.
//
// Invariants every engine keeps (held by the contract suite in dbtest):
//   - times are stored as integer unix seconds, UTC, and come back as
//     time.Time in UTC;
//   - a missing row is ErrNotFound and a unique-key clash is ErrConflict,
//     whatever the driver said;
//   - bearer credentials are stored only as hashes.
package db

import (
	"context"
	"errors"
	"slices"
	"time"

	"pactd.dev/pactd/internal/authzdetails"
)

// ErrNotFound means the requested row does not exist.
var ErrNotFound = errors.New("db: not found")

// ErrConflict means a row with the same unique key already exists.
var ErrConflict = errors.New("db: conflict")

// Agent is a registered personal agent.
type Agent struct {
	ID          string
	Issuer      string
	JWKSURI     string
	DisplayName string
	// Audience is the per-agent override; empty means the Provider audience.
	Audience   string
	Enabled    bool
	CreateTime time.Time
	UpdateTime time.Time
}

// Brand is a Brand the Provider hosts.
type Brand struct {
	ID          string
	DisplayName string
	Description string
	Skills      []Skill
	Delegation  Delegation
	CreateTime  time.Time
	UpdateTime  time.Time
	// AgentPolicy says which enabled PAs may call the Brand; set by
	// SetBrandAgentPolicy only (CreateBrand and UpdateBrand leave it).
	AgentPolicy AgentPolicy
	// Agents are the ids of the PAs on the Brand's list, sorted; GetBrand
	// fills them when AgentPolicy is AgentPolicyListed (and only then).
	Agents []string
}

// AgentPolicy is a Brand's rule for which enabled PAs may call it.
type AgentPolicy string

// The agent policies (the brands.agent_policy column).
const (
	// AgentPolicyAll admits every enabled PA (the default).
	AgentPolicyAll AgentPolicy = "all"
	// AgentPolicyListed admits only the PAs on the Brand's list.
	AgentPolicyListed AgentPolicy = "listed"
)

// Admits reports whether the Brand's policy lets the agent call it (its
// being enabled is checked elsewhere). Agents must be loaded (GetBrand).
func (b Brand) Admits(agentID string) bool {
	if b.AgentPolicy != AgentPolicyListed {
		return true
	}
	_, found := slices.BinarySearch(b.Agents, agentID)
	return found
}

// BrandAgent is one PA on a Brand's list.
type BrandAgent struct {
	AgentID     string
	DisplayName string
	AddTime     time.Time
}

// MaxBrandAgents bounds a Brand's list, which every replica holds in
// memory with the Brand.
const MaxBrandAgents = 1000

// ErrFull means a bounded list is full.
var ErrFull = errors.New("db: limit reached")

// Skill is one Agent Card skill of a Brand.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

// Delegation holds a Brand's PACT Delegated settings.
type Delegation struct {
	Enabled          bool    `json:"enabled"`
	Scopes           []Scope `json:"scopes,omitempty"`
	LoginURL         string  `json:"login_url,omitempty"`
	LoginMode        string  `json:"login_mode,omitempty"`
	AssertionIssuer  string  `json:"assertion_issuer,omitempty"`
	AssertionJWKSURI string  `json:"assertion_jwks_uri,omitempty"`
	// AuthorizationDetailsTypes are the RFC 9396 types the Brand accepts
	// (PACT §5.7); none means PAs may not send authorization_details.
	AuthorizationDetailsTypes []authzdetails.Type `json:"authorization_details_types,omitempty"`
	// SkipConsent approves a request that a live grant of the same User to
	// the same PA already covers, without a consent page.
	SkipConsent bool `json:"skip_consent_when_granted,omitempty"`
}

// Scope is a permission a Brand defines.
type Scope struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

// Role is what a caller credential may do.
type Role string

// The caller roles.
const (
	RoleAdmin    Role = "admin"
	RoleFrontend Role = "frontend"
)

// Credential is a caller's bearer credential, stored as a SHA-256 hash.
// The zero ExpireTime, RevokeTime or LastUseTime means never.
type Credential struct {
	ID          string
	Role        Role
	TokenHash   []byte
	Label       string
	CreateTime  time.Time
	ExpireTime  time.Time
	RevokeTime  time.Time
	LastUseTime time.Time
}

// LiveAt reports whether the credential authenticates at t: not revoked
// and not expired.
func (c Credential) LiveAt(t time.Time) bool {
	return c.RevokeTime.IsZero() && (c.ExpireTime.IsZero() || t.Before(c.ExpireTime))
}

// Store is the full storage contract. Open returns it and dbtest judges both
// engines through it; services declare the narrow subsets they use.
type Store interface {
	// CreateAgent inserts an agent; ErrConflict when the id or issuer exists.
	CreateAgent(ctx context.Context, a Agent) (Agent, error)
	// GetAgent returns the agent with the id.
	GetAgent(ctx context.Context, id string) (Agent, error)
	// GetAgentByIssuer returns the agent with the exact issuer.
	GetAgentByIssuer(ctx context.Context, issuer string) (Agent, error)
	// ListAgents returns up to limit agents with ids after afterID, by id.
	ListAgents(ctx context.Context, afterID string, limit int) ([]Agent, error)
	// UpdateAgent writes JWKSURI, DisplayName, Audience, Enabled and
	// UpdateTime of the agent with a.ID.
	UpdateAgent(ctx context.Context, a Agent) (Agent, error)
	// DeleteAgent removes the agent with the id.
	DeleteAgent(ctx context.Context, id string) error
	// SelfRegisterAgent records a verified self-service registration in one
	// transaction: it consumes the token's (issuer, jti) (ErrReplay when
	// already used), then returns the existing agent when one with the same
	// issuer, name and JWKS URI exists (created false), ErrIssuerTaken or
	// ErrNameTaken when either is taken with other details, or creates the
	// agent under the name (created true). A refusal stores nothing.
	SelfRegisterAgent(ctx context.Context, r SelfRegistration) (Agent, bool, error)
	// CountRegistrationJTIs counts the remembered registration jtis.
	CountRegistrationJTIs(ctx context.Context) (int64, error)
	// GetAgentRegistrationName returns the name an agent registered itself
	// under; ErrNotFound for an agent an operator registered.
	GetAgentRegistrationName(ctx context.Context, agentID string) (string, error)

	// CreateBrand inserts a Brand; ErrConflict when the id exists.
	CreateBrand(ctx context.Context, b Brand) (Brand, error)
	// GetBrand returns the Brand with the id.
	GetBrand(ctx context.Context, id string) (Brand, error)
	// ListBrands returns up to limit Brands with ids after afterID, by id.
	ListBrands(ctx context.Context, afterID string, limit int) ([]Brand, error)
	// UpdateBrand writes every mutable field of the Brand with b.ID
	// (not its agent policy).
	UpdateBrand(ctx context.Context, b Brand) (Brand, error)
	// SetBrandAgentPolicy writes the Brand's agent policy and update time;
	// ErrNotFound for an unknown Brand.
	SetBrandAgentPolicy(ctx context.Context, brandID string, p AgentPolicy, now time.Time) (Brand, error)
	// AddBrandAgent puts the agent on the Brand's list; added is false
	// when it was there. ErrNotFound when the Brand or the agent does not
	// exist; ErrFull when the list holds MaxBrandAgents.
	AddBrandAgent(ctx context.Context, brandID, agentID string, now time.Time) (added bool, err error)
	// RemoveBrandAgent takes the agent off the Brand's list; ErrNotFound
	// when it is not on it.
	RemoveBrandAgent(ctx context.Context, brandID, agentID string) error
	// ListBrandAgents returns up to limit PAs of the Brand's list with ids
	// after afterID, by id.
	ListBrandAgents(ctx context.Context, brandID, afterID string, limit int) ([]BrandAgent, error)

	// CreateCredential stores a credential; created is false when one with
	// the same hash already exists (nothing is changed then).
	CreateCredential(ctx context.Context, c Credential) (created bool, err error)
	// GetCredentialByHash returns the credential with the token hash.
	GetCredentialByHash(ctx context.Context, hash []byte) (Credential, error)
	// CountCredentials counts the credentials of a role.
	CountCredentials(ctx context.Context, role Role) (int64, error)
	// CountLiveCredentials counts the credentials of a role that are live
	// at now (not revoked, not expired).
	CountLiveCredentials(ctx context.Context, role Role, now time.Time) (int64, error)
	// GetCredential returns the credential with the id.
	GetCredential(ctx context.Context, id string) (Credential, error)
	// ListCredentials returns up to limit credentials with ids after
	// afterID, by id, revoked and expired ones included.
	ListCredentials(ctx context.Context, afterID string, limit int) ([]Credential, error)
	// RevokeCredential sets the revoke time of a live credential;
	// ErrNotFound when the id is unknown or the credential is revoked
	// already.
	RevokeCredential(ctx context.Context, id string, now time.Time) (Credential, error)
	// RevokeCredentialsByLabel revokes every live credential with the label
	// except the one whose hash is keepHash, and returns their ids.
	RevokeCredentialsByLabel(ctx context.Context, label string, keepHash []byte, now time.Time) ([]string, error)
	// TouchCredential records a use of the credential at now, unless one
	// was recorded less than a minute before.
	TouchCredential(ctx context.Context, id string, now time.Time) error

	// KeyStore holds the Provider's signing keys (keys.go).
	KeyStore
	// DelegationStore holds PACT Delegated state (delegation.go).
	DelegationStore
	// ConversationStore holds A2A conversation state (conversation.go).
	ConversationStore
	// AuditStore holds the audit trail (audit.go).
	AuditStore
	// WebhookStore holds webhook destinations and the delivery outbox
	// the audit trail feeds (webhooks.go).
	WebhookStore
	// FeedStore reads the change feed replicas learn changes from
	// (changes.go).
	FeedStore
	// HDTPStore holds HDTP / PACT 2 identities and their leaf ledger
	// (hdtp.go).
	HDTPStore
	// ConsoleStore holds the operator console's sessions, the replicas'
	// heartbeats and the overview's reads (console.go).
	ConsoleStore
	// HDTPHostStore holds the HDTP host wire: contacts, invites, replay
	// records, dispatched calls and budgets (hdtp_host.go).
	HDTPHostStore

	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Statements counts the statements run so far, by sqlc name: every
	// one on PostgreSQL, those outside transactions on SQLite.
	Statements() []StatementCount
	// Engine names the engine: "sqlite" or "postgres".
	Engine() string
	// Close releases the connections.
	Close() error
}

func unix(t time.Time) int64 { return t.UTC().Unix() }

func fromUnix(s int64) time.Time { return time.Unix(s, 0).UTC() }

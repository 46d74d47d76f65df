// Package bounds is the one table of the input bounds pactd's services
// share: every service that reads one of these fields holds it to the
// bound here, so a Brand user id, a display name or a list of scopes is
// accepted by one service exactly when it is by another. A bound only one
// service knows stays in that service; the scope-id rule and its length
// live with the rule, in internal/scopeid.
//
// Frontends hold no copy: the A2A front door is pactd's own
// (services/frontdoor), every frontend forwards requests to it, and a
// refusal names the field and its bound (a google.rpc.BadRequest field
// violation on the RPCs, the A2A error on the front door).
package bounds

// The bounds, in bytes unless said.
const (
	// Scopes is the most scopes a Brand may define, and a request, a
	// consent or a step-up may name.
	Scopes = 50

	// DisplayName is the longest display name, in characters: an agent's,
	// a Brand's, an HDTP identity's.
	DisplayName = 200

	// CallerID is the longest id a caller names (a Brand, an agent, a grant);
	// no id pactd keeps is longer, so a longer one is answered as unknown.
	CallerID = 128

	// BrandUser is the longest Brand user id (brand_user): the subject a
	// Brand names its signed-in user by.
	BrandUser = 256

	// MessageID is the longest message id: an A2A messageId (and a reply's),
	// an HDTP call's msg_id.
	MessageID = 256

	// ContextID is the longest A2A contextId; a longer one is unknown.
	ContextID = 64
)

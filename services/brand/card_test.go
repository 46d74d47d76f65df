package brand

import (
	"testing"

	"pactd.dev/pactd/db"
)

// The deviceCode flow's scopes object keeps the Brand's configured order
// (here deliberately not alphabetical), byte for byte, and escapes ids and
// descriptions as encoding/json escapes strings.
func TestCardScopesKeepConfiguredOrder(t *testing.T) {
	b := db.Brand{ID: "acme", DisplayName: "Acme", Description: "Acme support", Delegation: db.Delegation{
		Enabled:   true,
		LoginURL:  "https://login.acme.example",
		LoginMode: "trusted_frontend",
		Scopes: []db.Scope{
			{ID: "orders:write", Description: "Change your orders"},
			{ID: "account:read", Description: `See your "account" & <profile>`},
			{ID: "orders:read", Description: "See your orders"},
		},
	}}
	got, err := BuildCard(b, "https://provider.example/a2a/acme")
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"Acme","description":"Acme support","version":"1.0.0",` +
		`"supportedInterfaces":[{"url":"https://provider.example/a2a/acme","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],` +
		`"capabilities":{"streaming":false,"pushNotifications":false,"extendedAgentCard":false},` +
		`"securitySchemes":{"platformJwt":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}},` +
		`"userDelegation":{"oauth2SecurityScheme":{"flows":{"deviceCode":{` +
		`"deviceAuthorizationUrl":"https://provider.example/a2a/acme/oauth/device_authorization",` +
		`"tokenUrl":"https://provider.example/a2a/acme/oauth/token",` +
		`"refreshUrl":"https://provider.example/a2a/acme/oauth/token",` +
		`"scopes":{"orders:write":"Change your orders","account:read":"See your \"account\" \u0026 \u003cprofile\u003e","orders:read":"See your orders"}}},` +
		`"oauth2MetadataUrl":"https://provider.example/a2a/acme/oauth/.well-known/oauth-authorization-server"}}},` +
		`"securityRequirements":[{"schemes":{"platformJwt":{"list":[]}}},{"schemes":{"platformJwt":{"list":[]},"userDelegation":{"list":[]}}}],` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`
	if string(got) != want {
		t.Fatalf("card =\n%s\nwant\n%s", got, want)
	}
}

package pacta2a

import (
	"strings"
	"testing"
)

// The connected page shows a claimed outcome only when it lists the
// Brand's own scope ids: never free text someone put in a link.
func TestScopeList(t *testing.T) {
	b := brandPages{scopes: cardScopes(`{"securitySchemes":{"userDelegation":{"oauth2SecurityScheme":{"flows":{"deviceCode":` +
		`{"scopes":{"orders:read":"See","orders:cancel":"Cancel","a":"A"}}}}}}}`)}
	for _, ok := range []string{"orders:read", "orders:read orders:cancel", strings.TrimSpace(strings.Repeat("a ", 50))} {
		if !b.scopeList(ok) {
			t.Errorf("ok/%q refused", ok)
		}
	}
	for _, bad := range []string{"", "Your account is now connected, call 555", "orders:read  orders:cancel", " orders:read", "orders:write",
		strings.TrimSpace(strings.Repeat("a ", 51))} {
		if b.scopeList(bad) {
			t.Errorf("fail/%q accepted", bad)
		}
	}
	if got := cardScopes(`{"securitySchemes":{"platformJwt":{}}}`); len(got) != 0 {
		t.Errorf("identity-only card: %v", got)
	}
}

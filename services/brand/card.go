package brand

import (
	"encoding/json"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/pacturl"
)

// Literals of the Agent Card that clients compare byte for byte.
const (
	// CardContentType is the exact Content-Type of an Agent Card.
	CardContentType = "application/a2a+json"
	// CardCacheControl is the Cache-Control an Agent Card is served with.
	CardCacheControl = "public, max-age=300"
	// schemeName is the PA-JWT security scheme's key. The spec's examples say
	// paJwt, but the conformance suite and the reference read platformJwt;
	// the spec does not fix the key, so platformJwt is conformant for both.
	schemeName = "platformJwt"
	// delegationSchemeName is the key of the OAuth 2.0 device-code scheme
	// of PACT Delegated (§5.1).
	delegationSchemeName = "userDelegation"
	// cardVersion is the version of the card format pactd emits.
	cardVersion = "1.0.0"
)

// The card's JSON shape. Field order is the order of the struct fields, so
// every pactd replica emits identical bytes.
type agentCard struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	Version              string                    `json:"version"`
	SupportedInterfaces  []cardInterface           `json:"supportedInterfaces"`
	Capabilities         cardCapabilities          `json:"capabilities"`
	SecuritySchemes      map[string]securityScheme `json:"securitySchemes"`
	SecurityRequirements []securityRequirement     `json:"securityRequirements"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []cardSkill               `json:"skills"`
}

type cardInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type cardCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

type securityScheme struct {
	HTTPAuthSecurityScheme *httpAuthScheme `json:"httpAuthSecurityScheme,omitempty"`
	OAuth2SecurityScheme   *oauth2Scheme   `json:"oauth2SecurityScheme,omitempty"`
}

type oauth2Scheme struct {
	Flows             oauthFlows `json:"flows"`
	OAuth2MetadataURL string     `json:"oauth2MetadataUrl"`
}

type oauthFlows struct {
	DeviceCode deviceCodeFlow `json:"deviceCode"`
}

type deviceCodeFlow struct {
	DeviceAuthorizationURL string        `json:"deviceAuthorizationUrl"`
	TokenURL               string        `json:"tokenUrl"`
	RefreshURL             string        `json:"refreshUrl"`
	Scopes                 orderedScopes `json:"scopes"`
}

// orderedScopes is the deviceCode flow's scopes object {id: description}
// with its members in the order the Brand configured them. A Go map would
// sort them, and clients that show or compare the card see the Brand's order.
type orderedScopes []db.Scope

// MarshalJSON writes the scopes as one JSON object in configured order;
// encoding/json escapes each id and description as it would a map's.
func (o orderedScopes) MarshalJSON() ([]byte, error) {
	buf := append(make([]byte, 0, 64*len(o)+2), '{')
	for i, sc := range o {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, err := json.Marshal(sc.ID)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(sc.Description)
		if err != nil {
			return nil, err
		}
		buf = append(append(append(buf, k...), ':'), v...)
	}
	return append(buf, '}'), nil
}

type httpAuthScheme struct {
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat"`
}

type securityRequirement struct {
	Schemes map[string]stringList `json:"schemes"`
}

type stringList struct {
	List []string `json:"list"`
}

type cardSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

// BuildCard renders a Brand's Agent Card (PACT §2.1): the HTTP+JSON 1.0
// interface first with the exact interface URL, the platformJwt bearer
// scheme alone in one requirement, every capability false, and lists that
// are [] rather than null. When the Brand offers delegation (§5.1) the card
// adds the userDelegation OAuth 2.0 device-code scheme (issuer
// {interfaceUrl}/oauth; device authorization, token and refresh URLs and
// the path-appended RFC 8414 metadata URL under it; the Brand's scopes) and
// a second requirement naming both schemes, after the identity-only one,
// which stays.
func BuildCard(b db.Brand, interfaceURL string) ([]byte, error) {
	skills := make([]cardSkill, 0, len(b.Skills))
	for _, s := range b.Skills {
		tags := s.Tags
		if tags == nil {
			tags = []string{}
		}
		skills = append(skills, cardSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: tags, Examples: s.Examples})
	}
	card := agentCard{
		Name:        b.DisplayName,
		Description: b.Description,
		Version:     cardVersion,
		SupportedInterfaces: []cardInterface{
			{URL: interfaceURL, ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"},
		},
		SecuritySchemes: map[string]securityScheme{
			schemeName: {HTTPAuthSecurityScheme: &httpAuthScheme{Scheme: "Bearer", BearerFormat: "JWT"}},
		},
		SecurityRequirements: []securityRequirement{
			{Schemes: map[string]stringList{schemeName: {List: []string{}}}},
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             skills,
	}
	if b.Delegation.Enabled {
		issuer := interfaceURL + pacturl.OAuthSuffix
		card.SecuritySchemes[delegationSchemeName] = securityScheme{OAuth2SecurityScheme: &oauth2Scheme{
			Flows: oauthFlows{DeviceCode: deviceCodeFlow{
				DeviceAuthorizationURL: issuer + "/device_authorization",
				TokenURL:               issuer + "/token",
				RefreshURL:             issuer + "/token",
				Scopes:                 orderedScopes(b.Delegation.Scopes),
			}},
			OAuth2MetadataURL: issuer + "/.well-known/oauth-authorization-server",
		}}
		card.SecurityRequirements = append(card.SecurityRequirements, securityRequirement{Schemes: map[string]stringList{
			schemeName: {List: []string{}}, delegationSchemeName: {List: []string{}},
		}})
	}
	return json.Marshal(card)
}

package brand

import (
	"encoding/json"

	"pactd/db"
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
// are [] rather than null.
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
	return json.Marshal(card)
}

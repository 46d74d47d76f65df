package db

import (
	"encoding/json"
	"fmt"

	"pactd.dev/pactd/db/internal/liteq"
	"pactd.dev/pactd/db/internal/pgq"
)

// Both engines' generated rows have the same shape, so the PostgreSQL rows
// convert to the SQLite ones and one set of mappers serves both: schema drift
// between the engines becomes a compile error here.

func agentFromRow(r liteq.Agent) Agent {
	return Agent{
		ID: r.ID, Issuer: r.Issuer, JWKSURI: r.JwksUri, DisplayName: r.DisplayName,
		Audience: r.Audience, Enabled: r.Enabled,
		CreateTime: fromUnix(r.CreateTime), UpdateTime: fromUnix(r.UpdateTime),
	}
}

func agentFromPG(r pgq.Agent) Agent { return agentFromRow(liteq.Agent(r)) }

func agentsFromRows[R any](rows []R, conv func(R) Agent) []Agent {
	out := make([]Agent, 0, len(rows))
	for _, r := range rows {
		out = append(out, conv(r))
	}
	return out
}

func brandFromRow(r liteq.Brand) (Brand, error) {
	b := Brand{
		ID: r.ID, DisplayName: r.DisplayName, Description: r.Description,
		CreateTime: fromUnix(r.CreateTime), UpdateTime: fromUnix(r.UpdateTime), AgentPolicy: AgentPolicy(r.AgentPolicy),
	}
	if err := json.Unmarshal([]byte(r.SkillsJson), &b.Skills); err != nil {
		return Brand{}, fmt.Errorf("decode skills of brand %s: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.DelegationJson), &b.Delegation); err != nil {
		return Brand{}, fmt.Errorf("decode delegation of brand %s: %w", r.ID, err)
	}
	return b, nil
}

func brandFromPG(r pgq.Brand) (Brand, error) { return brandFromRow(liteq.Brand(r)) }

func brandsFromRows[R any](rows []R, conv func(R) (Brand, error)) ([]Brand, error) {
	out := make([]Brand, 0, len(rows))
	for _, r := range rows {
		b, err := conv(r)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// brandJSON encodes the JSON columns of a Brand; nil slices become [].
func brandJSON(b Brand) (skills, delegation string, err error) {
	if b.Skills == nil {
		b.Skills = []Skill{}
	}
	s, err := json.Marshal(b.Skills)
	if err != nil {
		return "", "", fmt.Errorf("encode skills: %w", err)
	}
	d, err := json.Marshal(b.Delegation)
	if err != nil {
		return "", "", fmt.Errorf("encode delegation: %w", err)
	}
	return string(s), string(d), nil
}

func createBrandParams(b Brand) (liteq.CreateBrandParams, error) {
	skills, deleg, err := brandJSON(b)
	return liteq.CreateBrandParams{
		ID: b.ID, DisplayName: b.DisplayName, Description: b.Description,
		SkillsJson: skills, DelegationJson: deleg,
		CreateTime: unix(b.CreateTime), UpdateTime: unix(b.UpdateTime),
	}, err
}

func updateBrandParams(b Brand) (liteq.UpdateBrandParams, error) {
	skills, deleg, err := brandJSON(b)
	return liteq.UpdateBrandParams{
		ID: b.ID, DisplayName: b.DisplayName, Description: b.Description,
		SkillsJson: skills, DelegationJson: deleg, UpdateTime: unix(b.UpdateTime),
	}, err
}

func createAgentParams(a Agent) liteq.CreateAgentParams {
	return liteq.CreateAgentParams{
		ID: a.ID, Issuer: a.Issuer, JwksUri: a.JWKSURI, DisplayName: a.DisplayName,
		Audience: a.Audience, Enabled: a.Enabled,
		CreateTime: unix(a.CreateTime), UpdateTime: unix(a.UpdateTime),
	}
}

func updateAgentParams(a Agent) liteq.UpdateAgentParams {
	return liteq.UpdateAgentParams{
		ID: a.ID, JwksUri: a.JWKSURI, DisplayName: a.DisplayName, Audience: a.Audience,
		Enabled: a.Enabled, UpdateTime: unix(a.UpdateTime),
	}
}

func credentialFromRow(r liteq.Credential) Credential {
	return Credential{ID: r.ID, Role: Role(r.Role), TokenHash: r.TokenHash, Label: r.Label, CreateTime: fromUnix(r.CreateTime),
		ExpireTime: fromUnixOrZero(r.ExpireTime), RevokeTime: fromUnixOrZero(r.RevokeTime), LastUseTime: fromUnixOrZero(r.LastUseTime)}
}

func credentialFromPG(r pgq.Credential) Credential { return credentialFromRow(liteq.Credential(r)) }

func createCredentialParams(c Credential) liteq.CreateCredentialParams {
	return liteq.CreateCredentialParams{ID: c.ID, Role: string(c.Role), TokenHash: c.TokenHash, Label: c.Label,
		CreateTime: unix(c.CreateTime), ExpireTime: unixOrZero(c.ExpireTime)}
}

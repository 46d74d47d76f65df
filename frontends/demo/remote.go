package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"pactd.dev/pactd/frontends/pacta2a"
)

// MaxRemoteAnswerBytes bounds a remote agent's answer.
const MaxRemoteAnswerBytes = 1 << 20

// RemoteAgent is a pacta2a.Agent in another process, reached by the
// RemoteAgent protocol of docs/frontends.md (the TypeScript frontend's
// src/remote.ts speaks the same): each turn is POSTed as JSON to URL,
//
//	{"brandId","contextId","newContext","text",
//	 "caller":{"agentId","issuer","subject","agentDisplayName"},
//	 "delegation":{"grantId","brandUser","scopes","authorizationDetailsJson",
//	   "authorizationDetails":[{"type","json","members":[{"name","values","array"}]}]} or null}
//
// and the answer is 200 {"text","needScopes"?,"scopesUsed"?,"actions"?:[{"tool","args"?}]},
// at most MaxRemoteAnswerBytes. Anything else fails the turn (INTERNAL; the
// PA may send the messageId again). It lets a Brand's logic be written in
// any language, and lets the shared end-to-end suite drive every frontend
// with one instrumented agent.
type RemoteAgent struct {
	// URL is where turns are posted.
	URL string
	// Client posts them; http.DefaultClient when nil. The turn's context
	// bounds each call (the frontend's TurnTimeout).
	Client *http.Client
}

// NewRemoteAgent returns the agent served at url.
func NewRemoteAgent(url string) *RemoteAgent { return &RemoteAgent{URL: url} }

// The protocol's request; arrays are never null, as JSON.stringify of the
// TypeScript side's values never makes them.
type remoteTurn struct {
	BrandID    string            `json:"brandId"`
	ContextID  string            `json:"contextId"`
	NewContext bool              `json:"newContext"`
	Text       string            `json:"text"`
	Caller     *remoteCaller     `json:"caller"`
	Delegation *remoteDelegation `json:"delegation"`
}

type remoteCaller struct {
	AgentID          string `json:"agentId"`
	Issuer           string `json:"issuer"`
	Subject          string `json:"subject"`
	AgentDisplayName string `json:"agentDisplayName"`
}

type remoteDelegation struct {
	GrantID                  string         `json:"grantId"`
	BrandUser                string         `json:"brandUser"`
	Scopes                   []string       `json:"scopes"`
	AuthorizationDetailsJSON string         `json:"authorizationDetailsJson"`
	AuthorizationDetails     []remoteDetail `json:"authorizationDetails"`
}

type remoteDetail struct {
	Type    string         `json:"type"`
	JSON    string         `json:"json"`
	Members []remoteMember `json:"members"`
}

type remoteMember struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	Array  bool     `json:"array"`
}

// Reply posts the turn and reads the remote agent's answer.
func (a *RemoteAgent) Reply(ctx context.Context, t pacta2a.Turn) (pacta2a.Reply, error) {
	body, err := json.Marshal(turnJSON(t))
	if err != nil {
		return pacta2a.Reply{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(body))
	if err != nil {
		return pacta2a.Reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	client := a.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return pacta2a.Reply{}, fmt.Errorf("remote agent: %w", err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, MaxRemoteAnswerBytes+1))
	switch {
	case err != nil:
		return pacta2a.Reply{}, fmt.Errorf("remote agent: %w", err)
	case res.StatusCode != http.StatusOK:
		return pacta2a.Reply{}, fmt.Errorf("remote agent answered %d", res.StatusCode)
	case len(answer) > MaxRemoteAnswerBytes:
		return pacta2a.Reply{}, errors.New("remote agent answer too large")
	}
	return ParseRemoteReply(answer)
}

func turnJSON(t pacta2a.Turn) remoteTurn {
	out := remoteTurn{BrandID: t.BrandID, ContextID: t.ContextID, NewContext: t.NewContext, Text: t.Text}
	if c := t.Caller; c != nil {
		out.Caller = &remoteCaller{c.GetAgentId(), c.GetIssuer(), c.GetSubject(), c.GetAgentDisplayName()}
	}
	if d := t.Delegation; d != nil {
		out.Delegation = &remoteDelegation{GrantID: d.GetGrantId(), BrandUser: d.GetBrandUser(), Scopes: nonNil(d.GetScopes()),
			AuthorizationDetailsJSON: d.GetAuthorizationDetailsJson(), AuthorizationDetails: []remoteDetail{}}
		for _, ad := range d.GetAuthorizationDetails() {
			rd := remoteDetail{Type: ad.GetType(), JSON: ad.GetJson(), Members: []remoteMember{}}
			for _, m := range ad.GetMembers() {
				rd.Members = append(rd.Members, remoteMember{m.GetName(), nonNil(m.GetValues()), m.GetArray()})
			}
			out.Delegation.AuthorizationDetails = append(out.Delegation.AuthorizationDetails, rd)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ParseRemoteReply checks a remote agent's answer, as src/remote.ts's
// parseReply does: an object with a string text; needScopes and scopesUsed
// absent, null or arrays of strings; actions absent, null or an array of
// objects with a string tool and any args (numbers kept as written, so a
// receipt's argsHash covers what the agent sent).
func ParseRemoteReply(b []byte) (pacta2a.Reply, error) {
	if !json.Valid(b) { // one JSON value and nothing else, as JSON.parse wants
		return pacta2a.Reply{}, errors.New("remote agent: the answer is not one JSON value")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return pacta2a.Reply{}, fmt.Errorf("remote agent: the answer is not JSON: %w", err)
	}
	o, ok := v.(map[string]any)
	if !ok {
		return pacta2a.Reply{}, errors.New("remote agent: the answer must be an object")
	}
	text, ok := o["text"].(string)
	if !ok {
		return pacta2a.Reply{}, errors.New("remote agent: text must be a string")
	}
	r := pacta2a.Reply{Text: text}
	var err error
	if r.NeedScopes, err = remoteStrings(o["needScopes"], "needScopes"); err != nil {
		return pacta2a.Reply{}, err
	}
	if r.ScopesUsed, err = remoteStrings(o["scopesUsed"], "scopesUsed"); err != nil {
		return pacta2a.Reply{}, err
	}
	if a := o["actions"]; a != nil {
		arr, ok := a.([]any)
		if !ok {
			return pacta2a.Reply{}, errors.New("remote agent: actions must be an array")
		}
		for _, x := range arr {
			act, ok := x.(map[string]any)
			tool, isString := act["tool"].(string)
			if !ok || !isString {
				return pacta2a.Reply{}, errors.New("remote agent: each action needs a tool")
			}
			r.Actions = append(r.Actions, pacta2a.Action{Tool: tool, Args: act["args"]})
		}
	}
	return r, nil
}

func remoteStrings(v any, name string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("remote agent: %s must be an array of strings", name)
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("remote agent: %s must be an array of strings", name)
		}
		out = append(out, s)
	}
	return out, nil
}

var _ pacta2a.Agent = (*RemoteAgent)(nil)

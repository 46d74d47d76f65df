package hdtp

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/jws"
	"pactd.dev/pactd/internal/rpcerr"
)

// The tools of HDTP/PACT §6.2 and the permissions of §8.

// The trust tools pactd runs itself, by tier.
const (
	toolRedeemInvite    = "redeem_invite"
	toolRequestContact  = "request_contact"
	toolSealedCall      = "sealed_call"
	toolContactAccepted = "contact_accepted"
	toolContactRejected = "contact_rejected"
	toolUpdateContact   = "update_contact"
	toolRemoveContact   = "remove_contact"
	toolGetCard         = "get_card"
)

// trustTools are the names a host may not declare as content tools.
var trustTools = []string{toolRedeemInvite, toolRequestContact, toolSealedCall, toolContactAccepted, toolContactRejected,
	toolUpdateContact, toolRemoveContact, toolGetCard}

// The permissions (§8).
const (
	permText         = "message.text"
	permMedia        = "message.media"
	permStatus       = "status.view"
	permAvailability = "calendar.availability"
	permBook         = "calendar.book"
	permIntegration  = "integration."
)

// specTools are the content tools the spec names, with the permission
// each needs. A host that does not run one answers unavailable to a
// contact allowed to call it (a calendar tool without a calendar, §6.2).
var specTools = map[string]string{
	"send_message": permText, "send_media": permMedia, "get_status": permStatus,
	"check_availability": permAvailability, "book_slot": permBook, "cancel_booking": permBook,
}

// msgIDTools are the tools whose msg_id is an idempotency key (§6.2).
var msgIDTools = map[string]bool{"send_message": true, "send_media": true, "book_slot": true}

// presets are §8's presets. Integration grants sit outside every preset.
var presets = map[string][]string{
	"basic":  {permText},
	"work":   {permText, permAvailability, permBook},
	"friend": {permText, permMedia, permStatus, permAvailability, permBook},
	"family": {permText, permMedia, permStatus, permAvailability, permBook},
}

// slugRule is an integration's slug: lowercase letters and digits with
// inner hyphens, at most 32 characters (its tools are "<slug>_<tool>").
var slugRule = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// toolNameRule is a content tool's name.
var toolNameRule = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// validPermission reports whether p is one of §8's permissions.
func validPermission(p string) bool {
	switch p {
	case permText, permMedia, permStatus, permAvailability, permBook:
		return true
	}
	return strings.HasPrefix(p, permIntegration) && slugRule.MatchString(p[len(permIntegration):])
}

// permissionsFrom reads a preset or a list (exactly one), for field;
// keep are integration grants a preset leaves in place.
func permissionsFrom(field, preset string, list []string, keep []string) (perms []string, presetOut string, err error) {
	switch {
	case preset != "" && len(list) > 0:
		return nil, "", rpcerr.InvalidField(field, "set preset or permissions, not both")
	case preset != "":
		p, ok := presets[preset]
		if !ok {
			return nil, "", rpcerr.InvalidField("preset", "is basic, work, friend or family")
		}
		out := slices.Clone(p)
		for _, k := range keep {
			if strings.HasPrefix(k, permIntegration) {
				out = append(out, k)
			}
		}
		return out, preset, nil
	}
	if len(list) > 64 {
		return nil, "", rpcerr.InvalidField("permissions", "at most 64")
	}
	out := []string{}
	for _, p := range list {
		if !validPermission(p) {
			return nil, "", rpcerr.InvalidField("permissions", "%q is not a permission (message.text, message.media, status.view, "+
				"calendar.availability, calendar.book, integration.<slug>)", p)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, "", nil
}

// contentTool is a declared content tool, as stored.
type contentTool struct {
	Name        string          `json:"name"`
	Permission  string          `json:"permission"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Bounds of a declaration.
const (
	maxContentTools    = 64
	maxToolDescription = 1024
	maxToolSchema      = 16 << 10
)

// checkContentTools validates a declaration and returns it as stored.
func checkContentTools(in []*hdtpv1.ContentTool) ([]contentTool, error) {
	var v rpcerr.Violations
	if len(in) > maxContentTools {
		v.Add("tools", "at most %d", maxContentTools)
		return nil, v.Err()
	}
	out := make([]contentTool, 0, len(in))
	seen := map[string]bool{}
	for i, t := range in {
		field := "tools[" + strconv.Itoa(i) + "]"
		name, perm := t.GetName(), t.GetPermission()
		switch {
		case !toolNameRule.MatchString(name):
			v.Add(field+".name", "must be 1 to 64 characters of [a-z0-9_]")
		case slices.Contains(trustTools, name):
			v.Add(field+".name", "%s is a trust tool pactd runs", name)
		case seen[name]:
			v.Add(field+".name", "%s is declared twice", name)
		}
		seen[name] = true
		if want, ok := specTools[name]; ok && perm != want {
			v.Add(field+".permission", "%s needs %s (§8)", name, want)
		} else if !ok {
			slug, _, found := strings.Cut(name, "_")
			switch {
			case !validPermission(perm):
				v.Add(field+".permission", "is not a permission")
			case strings.HasPrefix(perm, permIntegration) && (!found || perm != permIntegration+slug):
				v.Add(field+".permission", "an integration's tool is named <slug>_<tool> and needs integration.<slug>")
			case !strings.HasPrefix(perm, permIntegration):
				v.Add(field+".permission", "a tool the spec does not name is an integration's: integration.<slug>")
			}
		}
		if len(t.GetDescription()) > maxToolDescription {
			v.Add(field+".description", "at most %d bytes", maxToolDescription)
		}
		ct := contentTool{Name: name, Permission: perm, Description: t.GetDescription()}
		if s := t.GetInputSchemaJson(); s != "" {
			if len(s) > maxToolSchema {
				v.Add(field+".input_schema_json", "at most %d bytes", maxToolSchema)
			} else if c, err := jws.Canonical([]byte(s), maxJSONDepth); err != nil || !isObject(c) {
				v.Add(field+".input_schema_json", "must be one JSON object")
			} else {
				ct.InputSchema = c
			}
		}
		out = append(out, ct)
	}
	return out, v.Err()
}

// readContentTools reads a stored declaration; a damaged one reads as
// none.
func readContentTools(s string) []contentTool {
	var out []contentTool
	_ = json.Unmarshal([]byte(s), &out)
	return out
}

func contentToolsToProto(ts []contentTool) []*hdtpv1.ContentTool {
	out := make([]*hdtpv1.ContentTool, len(ts))
	for i, t := range ts {
		out[i] = &hdtpv1.ContentTool{Name: t.Name, Permission: t.Permission, Description: t.Description, InputSchemaJson: string(t.InputSchema)}
	}
	return out
}

// sealedCallSchema is sealed_call's input schema (HDTP Appendix A).
const sealedCallSchema = `{"type":"object","required":["protected","enc","ct","sig"],"properties":{"protected":{"type":"string"},` +
	`"enc":{"type":"string"},"ct":{"type":"string"},"sig":{"type":"string"}},"additionalProperties":false}`

// toolsList writes the tools/list result a tier sees (§6.2): the tier's
// trust tools, for a contact the content tools its permissions reach, and
// sealed_call whenever the identity takes sealed calls. The schemas of
// the trust tools are Appendix A's minimal {"type":"object"}.
func toolsList(t hdtpv1.Tier, seal string, perms []string, content []contentTool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	n := 0
	add := func(name, description string, schema []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(`{"name":`)
		b.Write(jsonString(name))
		if description != "" {
			b.WriteString(`,"description":`)
			b.Write(jsonString(description))
		}
		b.WriteString(`,"inputSchema":`)
		if schema == nil {
			schema = []byte(`{"type":"object"}`)
		}
		b.Write(schema)
		b.WriteByte('}')
	}
	switch t {
	case hdtpv1.Tier_TIER_GUEST:
		add(toolRedeemInvite, "", nil)
		add(toolRequestContact, "", nil)
	case hdtpv1.Tier_TIER_PENDING:
		add(toolContactAccepted, "", nil)
		add(toolContactRejected, "", nil)
	case hdtpv1.Tier_TIER_NEW_ADDRESS:
		add(toolUpdateContact, "", nil)
	case hdtpv1.Tier_TIER_CONTACT:
		add(toolUpdateContact, "", nil)
		add(toolRemoveContact, "", nil)
		add(toolGetCard, "", nil)
		for _, c := range content {
			if slices.Contains(perms, c.Permission) {
				add(c.Name, c.Description, c.InputSchema)
			}
		}
	}
	if seal != "none" {
		add(toolSealedCall, "", []byte(sealedCallSchema))
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// SetContentTools declares an identity's content tools.
func (h *Host) SetContentTools(ctx context.Context, req *hdtpv1.SetContentToolsRequest) (*hdtpv1.SetContentToolsResponse, error) {
	tools, err := checkContentTools(req.GetTools())
	if err != nil {
		return nil, err
	}
	st, err := h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "encode hdtp content tools", err)
	}
	if err := h.d.Store.SetHDTPContentTools(ctx, st.id.ID, string(b), h.d.Now()); err != nil {
		return nil, rpcerr.Fault(ctx, h.d.Logger, "store hdtp content tools", err)
	}
	return &hdtpv1.SetContentToolsResponse{Tools: contentToolsToProto(tools)}, nil
}

// GetContentTools returns an identity's declared content tools.
func (h *Host) GetContentTools(ctx context.Context, req *hdtpv1.GetContentToolsRequest) (*hdtpv1.GetContentToolsResponse, error) {
	st, err := h.loadIdentity(ctx, req.GetIdentityId(), "")
	if err != nil {
		return nil, err
	}
	return &hdtpv1.GetContentToolsResponse{Tools: contentToolsToProto(st.tools)}, nil
}

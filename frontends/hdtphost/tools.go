package hdtphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// Tool is a content tool the host runs: its owner's business (a calendar,
// messages), never a trust decision.
type Tool struct {
	// Name is the tool's name (send_message, check_availability, ...).
	Name string
	// Permission is what a contact needs to see and call it
	// (calendar.availability, message.text, integration.<slug>, ...).
	Permission string
	// Description and InputSchema are what tools/list shows (a JSON
	// object; nil means {"type":"object"}).
	Description string
	InputSchema json.RawMessage
	// Run runs one call pactd dispatched and returns its result: a value
	// that marshals to a JSON object. A *Refusal refuses the call (with
	// one of the codes a tool may give); any other error answers the
	// caller "unavailable", so Run returns one only when the call had no
	// effect. pactd never dispatches one call twice: Call.Handle is the
	// call's idempotency key.
	Run func(ctx context.Context, call *Call) (any, error)
}

// Call is one dispatched content tool call, for a caller pactd proved.
type Call struct {
	// Endpoint is the identity's endpoint: whose calendar, whose messages.
	Endpoint string
	// Handle is pactd's call handle, unique per call.
	Handle string
	// Tool and Arguments are the call (the arguments passed the spec's
	// bounds and thread ownership).
	Tool      string
	Arguments json.RawMessage
	// CallerRoot is who calls: the caller's root fingerprint.
	CallerRoot string
	// CallerEndpoint and CallerKid are its pinned endpoint and the leaf
	// that signed the call.
	CallerEndpoint, CallerKid string
	// CallerName is the name on its card: an untrusted claim, for display.
	CallerName string
	// Permissions are what the owner granted the caller.
	Permissions []string
	// MsgID is the call's inner msg_id (send_message, send_media,
	// book_slot), "" for other tools.
	MsgID string
	// Sealed says whether the call came sealed.
	Sealed bool
}

// Refusal is a refused call: a tool's refusal (Run returns it), or the
// answer to an outbound call (the peer's, or pactd's verdict on it).
type Refusal struct {
	// Code is the protocol's error code (bad_request, unavailable, ...).
	Code string
	// RetryAfter is rate_limited's retry_after, in seconds.
	RetryAfter int
	// Data is the refusal's data object, if any.
	Data json.RawMessage
	// Local says the refusal is pactd's verdict on the peer's answer
	// rather than the peer's own (outbound only); Reason says why.
	Local  bool
	Reason string
}

func (r *Refusal) Error() string {
	s := "refused: " + r.Code
	if r.RetryAfter > 0 {
		s += " (retry after " + strconv.Itoa(r.RetryAfter) + " s)"
	}
	if r.Local {
		s += " (pactd: " + r.Reason + ")"
	}
	return s
}

// DeclareTools tells pactd which content tools the host runs for one
// identity (hdtp.v1.HostService.SetContentTools), so that it lists them
// to contacts allowed to see them and dispatches their calls.
func (h *Host) DeclareTools(ctx context.Context, identityID string) error {
	req := &hdtpv1.SetContentToolsRequest{IdentityId: identityID}
	for _, t := range h.cfg.Tools {
		req.Tools = append(req.Tools, &hdtpv1.ContentTool{Name: t.Name, Permission: t.Permission,
			Description: t.Description, InputSchemaJson: string(t.InputSchema)})
	}
	_, err := h.host.SetContentTools(ctx, req)
	return err
}

// run runs a dispatched call and returns its completion for pactd. A
// panic in the tool is logged with its stack and answered "unavailable",
// like an error: one person's tool never stops the host.
func (h *Host) run(r *http.Request, endpoint string, d *hdtpv1.Dispatch) (done *hdtpv1.CompleteInboundRequest) {
	done = &hdtpv1.CompleteInboundRequest{CallHandle: d.GetCallHandle()}
	unavailable := &hdtpv1.CompleteInboundRequest_Refusal{Refusal: &hdtpv1.ToolRefusal{Code: "unavailable"}}
	tool, ok := h.tools[d.GetTool()]
	if !ok {
		h.cfg.Logger.ErrorContext(r.Context(), "pactd dispatched a tool this host does not run", slog.String("tool", d.GetTool()))
		done.Outcome = unavailable
		return done
	}
	defer func() {
		if v := recover(); v != nil {
			h.cfg.Logger.ErrorContext(r.Context(), "content tool panicked", slog.String("tool", d.GetTool()),
				slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
			done.Outcome = unavailable
		}
	}()
	result, err := tool.Run(r.Context(), &Call{Endpoint: endpoint, Handle: d.GetCallHandle(), Tool: d.GetTool(),
		Arguments: json.RawMessage(d.GetArgumentsJson()), CallerRoot: d.GetCallerRoot(), CallerEndpoint: d.GetCallerEndpoint(),
		CallerKid: d.GetCallerKid(), CallerName: d.GetCallerDisplayName(), Permissions: d.GetPermissions(),
		MsgID: d.GetMsgId(), Sealed: d.GetSealed()})
	var refusal *Refusal
	switch {
	case errors.As(err, &refusal):
		done.Outcome = &hdtpv1.CompleteInboundRequest_Refusal{Refusal: &hdtpv1.ToolRefusal{
			Code: refusal.Code, RetryAfterSeconds: int32(refusal.RetryAfter), DataJson: string(refusal.Data)}}
	case err != nil:
		h.cfg.Logger.ErrorContext(r.Context(), "content tool failed", slog.String("tool", d.GetTool()), slog.String("error", err.Error()))
		done.Outcome = unavailable
	default:
		b, err := json.Marshal(result)
		if err != nil || len(b) == 0 || b[0] != '{' {
			h.cfg.Logger.ErrorContext(r.Context(), "content tool result is not a JSON object", slog.String("tool", d.GetTool()))
			done.Outcome = unavailable
			return done
		}
		done.Outcome = &hdtpv1.CompleteInboundRequest_ResultJson{ResultJson: string(b)}
	}
	return done
}

package frontdoor

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// MaxRegistrationBody bounds a POST /api/platforms body.
const MaxRegistrationBody = 8 << 10

// register serves the reference Provider's self-service PA registration,
// POST {public URL}/api/platforms (reference section 4.3), through
// AgentService.SelfRegisterAgent, which does every check. The PA puts the
// Provider's public URL + RegistrationPath in its token's aud. It is
// served without a PA JWT: the registration JWT is the credential. The
// answer is 201, 200, 409, 400, 413 or 401 (with WWW-Authenticate: Bearer
// realm="platforms"), and 404 while PACT_SELF_REGISTRATION is off.
func (s *Service) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		bare(w, http.StatusMethodNotAllowed)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || len(r.Header.Values("Authorization")) != 1 {
		registrationError(w, http.StatusUnauthorized, "token_missing")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxRegistrationBody))
	if err != nil {
		w.Header().Set("Connection", "close")
		registrationError(w, http.StatusRequestEntityTooLarge, "body_too_large")
		return
	}
	var in struct {
		Name    string `json:"name"`
		JWKSURI string `json:"jwksUri"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		registrationError(w, http.StatusBadRequest, "body_invalid")
		return
	}
	res, err := s.d.Registration.SelfRegisterAgent(r.Context(), &pactv1.SelfRegisterAgentRequest{
		Token: tok, Name: in.Name, JwksUri: in.JWKSURI, EndpointUrl: strings.TrimRight(s.d.PublicURL, "/") + RegistrationPath,
	})
	if err != nil {
		s.d.Logger.ErrorContext(r.Context(), "self-register agent", slog.String("error", err.Error()))
		registrationError(w, http.StatusInternalServerError, "server_error")
		return
	}
	var status int
	switch res.GetResult() {
	case pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CREATED:
		status = http.StatusCreated
	case pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_EXISTS:
		status = http.StatusOK
	case pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_CONFLICT:
		registrationError(w, http.StatusConflict, res.GetReason())
		return
	case pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_REQUEST:
		registrationError(w, http.StatusBadRequest, res.GetReason())
		return
	case pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_INVALID_TOKEN:
		registrationError(w, http.StatusUnauthorized, res.GetReason())
		return
	default:
		bare(w, http.StatusNotFound)
		return
	}
	a := res.GetAgent()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(marshal(map[string]any{"platform": map[string]any{
		"id": a.GetId(), "name": res.GetName(), "issuer": a.GetIssuer(), "jwksUri": a.GetJwksUri(), "enabled": a.GetEnabled(),
	}}), '\n'))
}

// registrationError answers a refusal with its reason.
func registrationError(w http.ResponseWriter, status int, reason string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="platforms"`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(marshal(map[string]string{"error": reason}), '\n'))
}

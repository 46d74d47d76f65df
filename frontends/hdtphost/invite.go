package hdtphost

import (
	"net/http"
	"strings"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
)

// InviteHandler serves invite landings, /i/<token> on an identity's host
// (HDTP/PACT §4): pactd's HostService.ServeInvite answers, HTML for a
// browser and the JSON landing for a client, and the host writes the
// answer as it is. Mount it at "/i/".
func (h *Host) InviteHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := h.host.ServeInvite(r.Context(), &hdtpv1.ServeInviteRequest{
			Host: strings.ToLower(r.Host), Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
			Accept: r.Header.Get("Accept"), Method: r.Method})
		if err != nil {
			h.pactdFailed(w, r, "ServeInvite", err)
			return
		}
		for _, f := range res.GetHeaders() {
			w.Header().Add(f.GetName(), f.GetValue())
		}
		w.WriteHeader(int(res.GetStatus()))
		_, _ = w.Write(res.GetBody())
	})
}

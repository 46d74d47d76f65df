package hdtp

import "github.com/prometheus/client_golang/prometheus"

// metrics are the services' counters. Every label value comes from a
// fixed set (RPC names and named reasons), never from input.
type metrics struct {
	signingRequests prometheus.Counter
	installs        *prometheus.CounterVec
	refusals        *prometheus.CounterVec
	keysDestroyed   prometheus.Counter
	calls           *prometheus.CounterVec
	completions     *prometheus.CounterVec
	outbound        *prometheus.CounterVec
	owner           *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		signingRequests: prometheus.NewCounter(prometheus.CounterOpts{Name: "pactd_hdtp_signing_requests_total",
			Help: "Signing requests made (each a fresh leaf key, sealed under the key-encryption key)."}),
		installs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_hdtp_chain_installs_total",
			Help: "InstallChain answers, by result (installed, or the refusal's reason)."}, []string{"result"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_hdtp_trust_refusals_total",
			Help: "TrustService refusals, by RPC and named reason."}, []string{"rpc", "reason"}),
		keysDestroyed: prometheus.NewCounter(prometheus.CounterOpts{Name: "pactd_hdtp_leaf_keys_swept_total",
			Help: "Ledger rows the hourly sweep changed: leaf keys destroyed past their notAfter, and expired signing requests deleted."}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_hdtp_inbound_total",
			Help: "OpenInbound answers, by code (the protocol's error code, \"\" for a success or dispatch) and reason (pactd's name for the rule or tool)."},
			[]string{"code", "reason"}),
		completions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_hdtp_completions_total",
			Help: "CompleteInbound answers, by result (completed, failed, already_completed, refused handle)."}, []string{"result"}),
		outbound: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_hdtp_outbound_total",
			Help: "Outbound calls sealed and answers opened, by step (sealed, result, refusal, resend, invalid)."}, []string{"step"}),
		owner: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pactd_hdtp_owner_actions_total",
			Help: "Owner actions on contacts and invites, by action."}, []string{"action"}),
	}
	if reg != nil {
		reg.MustRegister(m.signingRequests, m.installs, m.refusals, m.keysDestroyed, m.calls, m.completions, m.outbound, m.owner)
	}
	return m
}

func (m *metrics) refused(rpc, reason string) { m.refusals.WithLabelValues(rpc, reason).Inc() }

// inbound counts an OpenInbound answer. reason is one of pactd's fixed
// names (never peer input).
func (m *metrics) inbound(reason, code string) { m.calls.WithLabelValues(code, reason).Inc() }

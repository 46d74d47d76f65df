package hdtp

import "github.com/prometheus/client_golang/prometheus"

// metrics are the services' counters. Every label value comes from a
// fixed set (RPC names and named reasons), never from input.
type metrics struct {
	signingRequests prometheus.Counter
	installs        *prometheus.CounterVec
	refusals        *prometheus.CounterVec
	keysDestroyed   prometheus.Counter
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
	}
	if reg != nil {
		reg.MustRegister(m.signingRequests, m.installs, m.refusals, m.keysDestroyed)
	}
	return m
}

func (m *metrics) refused(rpc, reason string) { m.refusals.WithLabelValues(rpc, reason).Inc() }

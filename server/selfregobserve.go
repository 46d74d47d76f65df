package server

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// selfRegistrations registers pactd_self_registrations_total{result} and
// returns the function that counts one outcome (result is the enum name in
// lower case without its prefix: created, exists, conflict, ...).
func selfRegistrations(reg prometheus.Registerer) func(pactv1.SelfRegistrationResult) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pactd_self_registrations_total",
		Help: "Self-service PA registrations this replica answered, by result (created, exists, conflict, invalid_request, invalid_token, closed).",
	}, []string{"result"})
	label := func(r pactv1.SelfRegistrationResult) string {
		return strings.ToLower(strings.TrimPrefix(r.String(), "SELF_REGISTRATION_RESULT_"))
	}
	for v := range pactv1.SelfRegistrationResult_name {
		if r := pactv1.SelfRegistrationResult(v); r != pactv1.SelfRegistrationResult_SELF_REGISTRATION_RESULT_UNSPECIFIED {
			c.WithLabelValues(label(r)) // every result reads 0 before it happens
		}
	}
	reg.MustRegister(c)
	return func(r pactv1.SelfRegistrationResult) { c.WithLabelValues(label(r)).Inc() }
}

package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"pactd.dev/pactd/internal/es256"
)

// The ES256 table metrics (package es256), read from the cache's counters
// at scrape time; registered only while PACT_ES256_TABLES is on.
var (
	es256TablesDesc = prometheus.NewDesc("pactd_es256_tables",
		"Precomputed ES256 tables held now (builds in progress included in the bytes).", nil, nil)
	es256BytesDesc = prometheus.NewDesc("pactd_es256_table_bytes",
		"Bytes the precomputed ES256 tables hold now; at most pactd_es256_table_budget_bytes.", nil, nil)
	es256BudgetDesc = prometheus.NewDesc("pactd_es256_table_budget_bytes",
		"The ES256 tables' byte budget (PACT_ES256_TABLE_BYTES).", nil, nil)
	es256BuildsDesc = prometheus.NewDesc("pactd_es256_table_builds_total",
		"ES256 tables built (a key earns one after verifying enough tokens).", nil, nil)
	es256EvictionsDesc = prometheus.NewDesc("pactd_es256_table_evictions_total",
		"ES256 tables dropped, by reason: budget (least recently used, to make room) or key_removed (the key left its JWKS).",
		[]string{"reason"}, nil)
	es256RefusedDesc = prometheus.NewDesc("pactd_es256_table_builds_refused_total",
		"ES256 table builds not started, by reason: rate (the build rate bound) or budget (no room could be made).",
		[]string{"reason"}, nil)
	es256VerificationsDesc = prometheus.NewDesc("pactd_es256_verifications_total",
		"ES256 verifications with a key set's keys, by path: table (precomputed) or stock (crypto/ecdsa).",
		[]string{"path"}, nil)
)

// es256Collector exports a table cache's counters.
type es256Collector struct{ c *es256.Cache }

func (es256Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{es256TablesDesc, es256BytesDesc, es256BudgetDesc, es256BuildsDesc,
		es256EvictionsDesc, es256RefusedDesc, es256VerificationsDesc} {
		ch <- d
	}
}

func (e es256Collector) Collect(ch chan<- prometheus.Metric) {
	st := e.c.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge(es256TablesDesc, float64(st.Tables))
	gauge(es256BytesDesc, float64(st.Bytes))
	gauge(es256BudgetDesc, float64(st.MaxBytes))
	counter(es256BuildsDesc, st.Builds)
	counter(es256EvictionsDesc, st.Evicted, "budget")
	counter(es256EvictionsDesc, st.Released, "key_removed")
	counter(es256RefusedDesc, st.RefusedRate, "rate")
	counter(es256RefusedDesc, st.RefusedBudget, "budget")
	counter(es256VerificationsDesc, st.ViaTable, "table")
	counter(es256VerificationsDesc, st.ViaStock, "stock")
}

// es256Tables builds the ES256 table cache the configuration asks for and
// registers its metrics; nil when PACT_ES256_TABLES is off.
func es256Tables(on bool, maxBytes int64, reg prometheus.Registerer) *es256.Cache {
	if !on {
		return nil
	}
	c := es256.NewCache(es256.Config{MaxBytes: maxBytes})
	reg.MustRegister(es256Collector{c})
	return c
}

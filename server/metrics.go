package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server-side hook metrics. They complement Metacontroller's
// own client-side metrics (requests, latency per webhook) with what only the
// hook knows: outcomes per parent kind, request sizes, children emitted, ETag
// hits and panics.
type metrics struct {
	registry      *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	requestBytes  *prometheus.HistogramVec
	children      *prometheus.HistogramVec
	etagHits      *prometheus.CounterVec
	finalizations *prometheus.CounterVec
	panics        prometheus.Counter
	rejected      *prometheus.CounterVec // 429s: the in-flight budget was spent
	connections   prometheus.Gauge
	evicted       prometheus.Counter
	unauthorized  *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metahooks_hook_requests_total",
			Help: "Hook requests by parent, hook and HTTP status code.",
		}, []string{"parent", "hook", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "metahooks_hook_request_duration_seconds",
			Help:    "Time to answer a hook request, body read included.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		}, []string{"parent", "hook"}),
		requestBytes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "metahooks_hook_request_size_bytes",
			Help:    "Size of hook request bodies.",
			Buckets: prometheus.ExponentialBuckets(1024, 4, 8), // 1 KiB .. 16 MiB
		}, []string{"parent", "hook"}),
		children: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "metahooks_hook_desired_children",
			Help:    "Desired children per successful hook response.",
			Buckets: []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 15},
		}, []string{"parent", "hook"}),
		etagHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metahooks_hook_etag_hits_total",
			Help: "Requests answered 412 because If-None-Match matched the request's ETag.",
		}, []string{"parent", "hook"}),
		finalizations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metahooks_hook_finalized_total",
			Help: "Finalize answers with finalized: true.",
		}, []string{"parent"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metahooks_hook_panics_total",
			Help: "Panics recovered inside hook handlers (answered 500).",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metahooks_hook_rejected_busy_total",
			Help: "Hook requests answered 429 because the in-flight budget (--max-in-flight) was spent.",
		}, []string{"parent", "hook"}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "metahooks_open_connections",
			Help: "Open client connections (at most --max-connections).",
		}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metahooks_connections_evicted_total",
			Help: "Idle or silent connections closed to make room for a new one at --max-connections.",
		}),
		unauthorized: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metahooks_hook_unauthorized_total",
			Help: "Hook requests refused with 401: credentials missing or wrong. The hook did not run.",
		}, []string{"parent", "hook"}),
	}
	m.registry.MustRegister(
		m.requests, m.duration, m.requestBytes, m.children, m.etagHits, m.finalizations, m.panics,
		m.rejected, m.connections, m.evicted, m.unauthorized,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// configReloads are the reload metrics of the watched files (watchFiles),
// by role: token (--auth-token-file), metrics_token
// (--metrics-auth-token-file), tls_keypair, client_ca, credentials_key. A
// label never holds a path or anything read from a file. They exist before
// the hook metrics (the files are read before the server starts) and join
// its registry in serve.
type configReloads struct {
	lastSuccess *prometheus.GaugeVec
	reloads     *prometheus.CounterVec
}

func newConfigReloads() *configReloads {
	return &configReloads{
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "metahooks_config_last_reload_success",
			Help: "1 when the last read of a watched file (by role) succeeded, 0 when it failed: a token file or client CA that failed refuses what it no longer lists (or everything, when gone); a key pair or credentials key that failed keeps the last good one.",
		}, []string{"file"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metahooks_config_reloads_total",
			Help: "Reads of a changed watched file (by role), by result: success or failure. The read at start is not counted.",
		}, []string{"file", "result"}),
	}
}

// loaded records the read at start of role's files: it succeeded (a failure
// stops the process). The counters start at 0, so an alert on their
// increase works from the first failure.
func (c *configReloads) loaded(role string) {
	if c == nil {
		return
	}
	c.lastSuccess.WithLabelValues(role).Set(1)
	c.reloads.WithLabelValues(role, "success")
	c.reloads.WithLabelValues(role, "failure")
}

// reloaded records a read of role's files after a change.
func (c *configReloads) reloaded(role string, err error) {
	if c == nil {
		return
	}
	if err != nil {
		c.lastSuccess.WithLabelValues(role).Set(0)
		c.reloads.WithLabelValues(role, "failure").Inc()
		return
	}
	c.lastSuccess.WithLabelValues(role).Set(1)
	c.reloads.WithLabelValues(role, "success").Inc()
}

// register adds the reload metrics to the registry of /metrics.
func (c *configReloads) register(r *prometheus.Registry) {
	if c != nil {
		r.MustRegister(c.lastSuccess, c.reloads)
	}
}

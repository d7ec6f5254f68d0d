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

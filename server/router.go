package main

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"metahooks/hooks/composite"
)

// routerConfig is what the router needs from the command line.
type routerConfig struct {
	maxBodyBytes int64
	// inFlight bounds the hook requests held at once; nil: no bound.
	inFlight *inFlightBudget
	build    string // buildIdentity, part of every ETag
	now      func() time.Time
	log      *slog.Logger
	metrics  *metrics
	// parents are the hooks to serve; parentHooks() in production.
	parents []parentHook
	// ready is false while the server drains before shutdown; /readyz then
	// answers 503 so the Service stops sending traffic.
	ready *atomic.Bool
	// auth guards every /hooks/ route; nil admits every request
	// (--insecure-allow-unauthenticated).
	auth *authenticator
}

// newRouter wires the routes of the hook listener: POST
// /hooks/<parent>/{sync,finalize} for each parent (and
// /hooks/<parent>/customize for a parent with a customize hook), each behind
// cfg.auth, and GET /healthz and /readyz, open to the kubelet's probes.
// /metrics is on the metrics listener (newMetricsRouter).
func newRouter(cfg routerConfig) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer) // last resort; hook handlers recover themselves and count panics
	r.Use(closeWhileDraining(cfg.ready))
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusNotFound, "no route "+composite.Quote(req.URL.Path)+"; hooks are POST /hooks/<parent>/sync and /hooks/<parent>/finalize, and /hooks/<parent>/customize for a parent that has one")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method "+composite.Quote(req.Method)+" is not allowed on "+composite.Quote(req.URL.Path))
	})

	answered := newAnsweredBodies(answeredBodiesBudget) // one budget for every route: an ETag names its route
	for _, parent := range cfg.parents {
		hooks := []string{"sync", "finalize"}
		if parent.customize != nil {
			hooks = append(hooks, hookCustomize)
		}
		// Series that only ever count up exist from the start, at 0, so a
		// rate or an alert on them works before the first event.
		cfg.metrics.finalizations.WithLabelValues(parent.route)
		for _, hook := range hooks {
			cfg.metrics.etagHits.WithLabelValues(parent.route, hook)
			cfg.metrics.rejected.WithLabelValues(parent.route, hook)
			cfg.metrics.unauthorized.WithLabelValues(parent.route, hook)
			r.Method(http.MethodPost, "/hooks/"+parent.route+"/"+hook, cfg.auth.protect(parent.route, hook, cfg.metrics, &hookHandler{
				parent:       parent,
				hook:         hook,
				maxBodyBytes: cfg.maxBodyBytes,
				inFlight:     cfg.inFlight,
				build:        cfg.build,
				now:          cfg.now,
				log:          cfg.log.With("parent_kind", parent.kind, "hook", hook),
				metrics:      cfg.metrics,
				remembered:   answered,
			}))
		}
	}
	probes(r, cfg.ready)
	// Only a hook reads a body (and refuses, through refuse, one without
	// credentials); every other request that declares one is answered and
	// its connection closed.
	isHook := func(req *http.Request) bool {
		return strings.HasPrefix(req.URL.Path, "/hooks/") && r.Match(chi.NewRouteContext(), req.Method, req.URL.Path)
	}
	return closeUnreadBodies(isHook, r)
}

// newMetricsRouter serves the metrics listener: GET /metrics, and the probes
// again, so the listener can be probed too.
func newMetricsRouter(m *metrics, ready *atomic.Bool) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
	probes(r, ready)
	return r
}

// probes adds GET /healthz (200 while the process runs) and GET /readyz (503
// once ready is false: shutdown has begun).
func probes(r chi.Router, ready *atomic.Bool) {
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil && !ready.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}

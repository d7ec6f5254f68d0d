package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// serveConfig holds the serve command's flags.
type serveConfig struct {
	addr          string
	maxBodyBytes  int64
	logLevel      slog.Level
	shutdownDelay time.Duration
	shutdownGrace time.Duration
	keyFile       string
	agentImage    string
	limits        limitConfig
	security      securityConfig
}

func parseServeFlags(args []string, stderr io.Writer) (serveConfig, error) {
	cfg := serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.addr, "addr", ":8080", "listen address")
	fs.Int64Var(&cfg.maxBodyBytes, "max-body-bytes", 8<<20, "largest request body accepted; larger ones get 413")
	fs.TextVar(&cfg.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	fs.DurationVar(&cfg.shutdownDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, how long /readyz fails before the listener closes (lets endpoints update)")
	fs.DurationVar(&cfg.shutdownGrace, "shutdown-grace", 15*time.Second, "after --shutdown-delay, how long the server gets to accept the connections the kernel already holds for it, close the listener and let in-flight requests finish")
	cfg.limits.register(fs)
	fs.StringVar(&cfg.keyFile, "credentials-key-file", "", "file with the secret key (at least 32 bytes) Database passwords are derived from; every replica needs the same one; re-read when it changes. Without it the Database hooks answer 500")
	fs.StringVar(&cfg.agentImage, "instance-agent-image", "", "this service's own image, which the reporter container of every Database instance runs (spec.instances >= 2); without it those Databases answer 500")
	cfg.security.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if cfg.maxBodyBytes <= 0 {
		return cfg, errors.New("--max-body-bytes must be positive")
	}
	if err := cfg.limits.check(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func serveCommand(args []string, stderr io.Writer) int {
	cfg, err := parseServeFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "metahooks serve:", err)
		return 2
	}
	if err := cfg.security.check(); err != nil {
		fmt.Fprintln(stderr, "metahooks serve:", err)
		return 1
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	listeners, err := openListeners(ctx, cfg.addr, cfg.security, log)
	if err != nil {
		log.Error("cannot start", "addr", cfg.addr, "error", err.Error())
		return 1
	}
	db, err := reloadingDatabaseHook(ctx, cfg.keyFile, cfg.agentImage, reloadInterval, listeners.reloads, log)
	if err != nil {
		log.Error("cannot start", "error", err.Error())
		return 1
	}
	if cfg.keyFile == "" {
		log.Warn("no --credentials-key-file: the Database hooks answer 500 until the service has a key")
	}
	if cfg.agentImage == "" {
		log.Warn("no --instance-agent-image: Databases with spec.instances >= 2 answer 500")
	}
	if err := serve(ctx, listeners, cfg, parentHooks(db), log); err != nil {
		log.Error("server failed", "error", err.Error())
		return 1
	}
	return 0
}

// serve answers on the listeners until ctx is done, then drains (see drain).
func serve(ctx context.Context, l listeners, cfg serveConfig, parents []parentHook, log *slog.Logger) error {
	ready := &atomic.Bool{}
	ready.Store(true)
	m := newMetrics()
	l.reloads.register(m.registry)
	cfg.limits = cfg.limits.orDefaults()
	maxInFlight := cfg.limits.maxInFlight
	limit, source := memoryLimit()
	governor, gc := tuneGC(limit, source)
	if maxInFlight == 0 {
		maxInFlight = defaultMaxInFlight(limit, cfg.maxBodyBytes)
	}
	build, buildErr := buildIdentity(version)
	if buildErr != nil {
		build = version
		log.Warn("ETags name the version only, not this build", "version", version, "error", buildErr.Error())
	}
	handler := newRouter(routerConfig{
		maxBodyBytes: cfg.maxBodyBytes,
		inFlight:     newInFlightBudget(maxInFlight, cfg.maxBodyBytes, governor),
		build:        build,
		now:          time.Now,
		log:          log,
		metrics:      m,
		parents:      parents,
		ready:        ready,
		auth:         l.auth,
	})
	server, limited := newHTTPServer(l.hooks, handler, cfg.limits, m, log)
	limited.tls = l.tls != nil
	log.Info("serving Metacontroller hooks", "addr", l.hooks.Addr().String(), "scheme", l.scheme(),
		"auth", l.describeAuth(), "version", version, "build", build, "max_body_bytes", cfg.maxBodyBytes,
		"max_in_flight", describeBudget(maxInFlight, limit, source, cfg.maxBodyBytes),
		"gc", gc, "max_connections", cfg.limits.maxConnections, "request_timeout", cfg.limits.requestTimeout.String())

	shutdownMetrics := l.serveMetrics(newMetricsRouter(m, ready), log)

	served := make(chan error, 1)
	go func() { served <- server.Serve(l.withTLS(limited)) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	err := drain(server, limited, served, ready, cfg, log)
	metricsCtx, cancel := context.WithTimeout(context.Background(), cfg.shutdownGrace)
	defer cancel()
	if metricsErr := shutdownMetrics(metricsCtx); err == nil && metricsErr != nil {
		err = fmt.Errorf("cannot shut down the metrics listener cleanly: %w", metricsErr)
	}
	return err
}

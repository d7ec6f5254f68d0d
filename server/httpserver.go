package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// metacontrollerHookTimeout is Metacontroller's default webhook timeout: the
// http.Client.Timeout of a hook call, connect to last response byte. Past it
// an answer is wasted, so every deadline of ours is below it.
const metacontrollerHookTimeout = 10 * time.Second

// limitConfig holds the flags that bound what callers can hold: memory
// (requests in flight), connections and time.
type limitConfig struct {
	maxInFlight    int // 0: sized from the memory limit (defaultMaxInFlight)
	maxConnections int
	requestTimeout time.Duration
	idleTimeout    time.Duration
}

// defaultLimits are the flags' defaults.
var defaultLimits = limitConfig{
	maxConnections: 256,
	requestTimeout: 8 * time.Second,
	idleTimeout:    15 * time.Second,
}

// orDefaults fills unset fields (a serveConfig built in code) with the
// defaults.
func (c limitConfig) orDefaults() limitConfig {
	if c.maxConnections == 0 {
		c.maxConnections = defaultLimits.maxConnections
	}
	if c.requestTimeout == 0 {
		c.requestTimeout = defaultLimits.requestTimeout
	}
	if c.idleTimeout == 0 {
		c.idleTimeout = defaultLimits.idleTimeout
	}
	return c
}

func (c *limitConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&c.maxInFlight, "max-in-flight", 0, "hook requests of the largest body (--max-body-bytes) held at once; smaller ones take a share by Content-Length; past it 429 with Retry-After. 0 sizes it from the memory limit (GOMEMLIMIT or the cgroup): (limit - 32 MiB) / (4 x max-body-bytes)")
	fs.IntVar(&c.maxConnections, "max-connections", defaultLimits.maxConnections, "open client connections at most; at the cap a new one takes the slot of an evictable one (silent past 250 ms, else idle between requests, unauthenticated first), which is closed with no unread byte; one with a request in progress or bytes on their way is never evicted, and with none evictable the new one waits (not reset)")
	fs.DurationVar(&c.requestTimeout, "request-timeout", defaultLimits.requestTimeout, "a request's header and body must arrive within this from its first byte (else 408), and its answer is written within 1s more; keep it under Metacontroller's 10s hook timeout")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", defaultLimits.idleTimeout, "how long a keep-alive connection may wait for its next request")
}

func (c *limitConfig) check() error {
	switch {
	case c.maxInFlight < 0:
		return errors.New("--max-in-flight must be 0 (from the memory limit) or positive")
	case c.maxConnections <= 0:
		return errors.New("--max-connections must be positive")
	case c.requestTimeout <= 0:
		return errors.New("--request-timeout must be positive")
	case c.idleTimeout <= 0:
		return errors.New("--idle-timeout must be positive")
	}
	return nil
}

// readHeaderTimeout bounds a connection that sends no request header (it
// holds a connection slot until then); Metacontroller sends its header at
// once.
const readHeaderTimeout = 3 * time.Second

// writeMargin is the time an answer gets to be written after the request
// deadline: enough for a 408 or a 200 of a few MiB on a cluster network.
const writeMargin = time.Second

// serverLimits are what one listener's http.Server holds a caller to: open
// connections, header size, and the time a request's header, the whole
// request, its answer and an idle keep-alive connection may take.
type serverLimits struct {
	maxConnections    int
	maxHeaderBytes    int
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
}

// hookServer is the hook listener's: every timeout fitted to
// Metacontroller's hook timeout.
func (c limitConfig) hookServer() serverLimits {
	return serverLimits{
		maxConnections:    c.maxConnections,
		maxHeaderBytes:    64 << 10, // Metacontroller sends a handful of headers
		readHeaderTimeout: min(readHeaderTimeout, c.requestTimeout),
		readTimeout:       c.requestTimeout,
		writeTimeout:      c.requestTimeout + writeMargin,
		idleTimeout:       c.idleTimeout,
	}
}

// newHTTPServer is the hook listener's http.Server (newLimitedServer with
// limits.hookServer()).
func newHTTPServer(listener net.Listener, handler http.Handler, limits limitConfig, m *metrics, log *slog.Logger) (*http.Server, *connLimitListener) {
	return newLimitedServer(listener, handler, limits.hookServer(), m, log)
}

// newLimitedServer is an http.Server held to limits, and the listener
// wrapped in the connection cap (m counts its connections; nil: not
// counted). Both listeners are built by it.
func newLimitedServer(listener net.Listener, handler http.Handler, limits serverLimits, m *metrics, log *slog.Logger) (*http.Server, *connLimitListener) {
	limited := newConnLimitListener(listener, limits.maxConnections, m)
	server := &http.Server{
		Handler:           limited.serving(handler),
		ConnContext:       withConn,
		ReadHeaderTimeout: limits.readHeaderTimeout,
		ReadTimeout:       limits.readTimeout,
		WriteTimeout:      limits.writeTimeout,
		IdleTimeout:       limits.idleTimeout,
		MaxHeaderBytes:    limits.maxHeaderBytes,
		ConnState:         limited.ConnState,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return server, limited
}

// drain stops the server without losing a request. /readyz fails at once
// and every answer carries Connection: close (closeWhileDraining), so for
// --shutdown-delay requests are still served while the endpoints update and
// keep-alive clients move to another replica. Then, within
// --shutdown-grace: new handshakes stop and the server accepts what the
// kernel still holds for the listener (drainBacklog: closing it would reset
// those), the listener closes (new connections are refused), the
// connections it accepted last send their request, and every request in
// flight finishes. The listener is closed before http.Server.Shutdown:
// Shutdown drops (and resets) a connection whose first request header it
// reads after it began.
//
// Keep-alives end per answer rather than with SetKeepAlivesEnabled(false):
// that also closes every idle connection at once, and a client that just
// picked one from its pool for a POST gets an error (Go's client retries no
// POST on a connection the server closed under it).
func drain(server *http.Server, listener *connLimitListener, served <-chan error, ready *atomic.Bool, cfg serveConfig, log *slog.Logger) error {
	ready.Store(false)
	log.Info("shutting down: readiness failing, answers close their connections", "delay", cfg.shutdownDelay.String())
	time.Sleep(cfg.shutdownDelay)
	log.Info("shutting down: stopping new connections, closing the listener", "grace", cfg.shutdownGrace.String())
	ctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownGrace)
	defer cancel()
	backlog, cancelBacklog := context.WithTimeout(ctx, server.ReadHeaderTimeout)
	start := time.Now()
	if err := drainBacklog(backlog, listener.Listener); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		log.Warn("closing the listener may reset connections it has not accepted", "error", err.Error())
	}
	cancelBacklog()
	_ = listener.Close()
	log.Debug("listener closed", "backlog_drained_in", time.Since(start).String())
	headers, cancelHeaders := context.WithTimeout(ctx, server.ReadHeaderTimeout)
	listener.awaitFirstRequests(headers)
	cancelHeaders()
	if err := server.Shutdown(ctx); err != nil {
		_ = server.Close()
		return fmt.Errorf("in-flight requests did not finish within --shutdown-grace %s: %w", cfg.shutdownGrace, err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// closeWhileDraining makes every answer close its connection once ready is
// false, so keep-alive clients reconnect (to another replica) instead of
// sending into a listener that is about to close.
func closeWhileDraining(ready *atomic.Bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ready != nil && !ready.Load() {
				w.Header().Set("Connection", "close")
			}
			next.ServeHTTP(w, r)
		})
	}
}

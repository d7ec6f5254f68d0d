package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// securityConfig holds the flags that decide who may call the hooks, over
// what, and where /metrics is served.
type securityConfig struct {
	tokenFile    string
	certFile     string
	keyFile      string
	clientCAFile string
	metricsAddr  string
	// metricsTokenFile, when set, holds the bearer tokens /metrics asks for.
	metricsTokenFile string
	insecure         bool
	// reloadInterval is how often the files above are checked for a change.
	reloadInterval time.Duration
}

func (c *securityConfig) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.tokenFile, "auth-token-file", "", "file of bearer tokens, one per line (blank lines and # comments ignored); every /hooks/ request must send the header Authorization: Bearer <one of them>. Re-read when it changes")
	fs.StringVar(&c.certFile, "tls-cert-file", "", "PEM certificate (chain): serve HTTPS on --addr (TLS 1.2 or later). Re-read when it changes")
	fs.StringVar(&c.keyFile, "tls-key-file", "", "PEM private key of --tls-cert-file")
	fs.StringVar(&c.clientCAFile, "client-ca-file", "", "PEM CA certificates: every /hooks/ request must come with a client certificate one of them signed (mutual TLS; needs --tls-cert-file). Re-read when it changes")
	fs.StringVar(&c.metricsAddr, "metrics-addr", ":9090", `listen address of the plain-HTTP metrics listener (/metrics, /healthz, /readyz); "" turns it off`)
	fs.StringVar(&c.metricsTokenFile, "metrics-auth-token-file", "", "file of bearer tokens, one per line, as --auth-token-file: GET /metrics on --metrics-addr then needs one of them (the probes there need none). Re-read when it changes")
	fs.BoolVar(&c.insecure, "insecure-allow-unauthenticated", false, "serve the hooks with neither --auth-token-file nor --client-ca-file: anyone who reaches the port gets every Database's password")
	c.reloadInterval = reloadInterval
}

// errNoCredential is why serve refuses to start without a credential.
var errNoCredential = errors.New("refusing to serve the hooks without authentication: give --auth-token-file (bearer tokens) or --client-ca-file with --tls-cert-file and --tls-key-file (mutual TLS); --insecure-allow-unauthenticated serves them to anyone")

// check reports flag combinations that cannot work.
func (c securityConfig) check() error {
	switch {
	case (c.certFile == "") != (c.keyFile == ""):
		return errors.New("--tls-cert-file and --tls-key-file go together")
	case c.clientCAFile != "" && c.certFile == "":
		return errors.New("--client-ca-file (mutual TLS) needs --tls-cert-file and --tls-key-file")
	case c.tokenFile == "" && c.clientCAFile == "" && !c.insecure:
		return errNoCredential
	case c.metricsTokenFile != "" && c.metricsAddr == "":
		return errors.New("--metrics-auth-token-file needs the metrics listener (--metrics-addr)")
	}
	return nil
}

// listeners are where serve answers: the hook listener with its TLS
// configuration and the authenticator that guards its hook routes, and the
// metrics listener.
type listeners struct {
	hooks net.Listener // TCP; serve wraps the connection cap, then TLS (withTLS) around it
	tls   *tls.Config  // nil: plain HTTP
	auth  *authenticator
	// metrics is nil with --metrics-addr "".
	metrics net.Listener
	// reloads are the reload metrics of the files read here; serve adds
	// them to its registry, and the credentials key's too.
	reloads *configReloads
	// metricsTokens guards everything on the metrics listener but the
	// probes; nil: nothing asks for a token (no --metrics-auth-token-file).
	metricsTokens *tokenSet
}

// withTLS wraps TLS around a listener when HTTPS is configured. It must be
// the outermost wrapper: http.Server sets Request.TLS and bounds the
// handshake only for connections that are *tls.Conn.
func (l listeners) withTLS(inner net.Listener) net.Listener {
	if l.tls == nil {
		return inner
	}
	return tls.NewListener(inner, l.tls)
}

// scheme is "https" or "http".
func (l listeners) scheme() string {
	if l.tls == nil {
		return "http"
	}
	return "https"
}

// openListeners reads the credentials and certificates (watching them until
// ctx is done) and opens both listeners.
func openListeners(ctx context.Context, addr string, c securityConfig, log *slog.Logger) (l listeners, err error) {
	if err := c.check(); err != nil {
		return l, err
	}
	reloads := newConfigReloads()
	var auth *authenticator
	if c.tokenFile != "" || c.clientCAFile != "" {
		auth = &authenticator{clientCert: c.clientCAFile != ""}
	}
	if c.tokenFile != "" {
		if auth.tokens, err = newTokenSet(ctx, c.tokenFile, "token", c.reloadInterval, reloads, log); err != nil {
			return l, err
		}
	}
	var tlsConfig *tls.Config
	if c.certFile != "" {
		source, err := newTLSSource(ctx, c.certFile, c.keyFile, c.clientCAFile, c.reloadInterval, reloads, log)
		if err != nil {
			return l, err
		}
		tlsConfig = source.config()
	}
	if auth == nil {
		log.Warn("--insecure-allow-unauthenticated: the hooks answer anyone who reaches the port, Database passwords included")
	}

	l = listeners{auth: auth, tls: tlsConfig, reloads: reloads}
	if c.metricsTokenFile != "" {
		if l.metricsTokens, err = newTokenSet(ctx, c.metricsTokenFile, "metrics_token", c.reloadInterval, reloads, log); err != nil {
			return l, err
		}
	}
	if l.hooks, err = listenTCP(addr); err != nil {
		return l, err
	}
	if c.metricsAddr != "" {
		if l.metrics, err = net.Listen("tcp", c.metricsAddr); err != nil {
			l.hooks.Close()
			return l, err
		}
	}
	return l, nil
}

// listenTCP is the hook listener: plain TCP. Go listens with Multipath TCP
// by default where the kernel has it, and a Linux MPTCP socket takes no
// socket filter (SO_ATTACH_FILTER fails with EOPNOTSUPP), which
// drainBacklog needs on shutdown. Metacontroller's Go client dials plain
// TCP, so an MPTCP listener would serve every connection as TCP anyway.
func listenTCP(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), "tcp", addr)
}

// describeAuth names the credentials the hook routes ask for, for the log.
func (l listeners) describeAuth() string {
	if l.auth == nil {
		return "none"
	}
	var kinds []string
	if l.auth.tokens != nil {
		kinds = append(kinds, "bearer token")
	}
	if l.auth.clientCert {
		kinds = append(kinds, "client certificate")
	}
	return strings.Join(kinds, " and ")
}

// metricsServerLimits are the metrics listener's limits: the hook
// listener's protections, smaller, for a few scrapers that send a handful
// of headers and read an answer of some tens of KiB. A flood of connections
// or of large headers then holds at most metricsMaxConnections connections
// of at most 16 KiB of header each (plus net/http's 4 KiB of slack).
var metricsServerLimits = serverLimits{
	maxConnections:    metricsMaxConnections,
	maxHeaderBytes:    16 << 10,
	readHeaderTimeout: readHeaderTimeout,
	readTimeout:       5 * time.Second,
	writeTimeout:      10 * time.Second,
	idleTimeout:       60 * time.Second,
}

// metricsMaxConnections caps the metrics listener's open connections: at
// the cap a new one takes the slot of an evictable one, as on the hook
// listener (connLimitListener).
const metricsMaxConnections = 64

// serveMetrics serves handler on the metrics listener, if there is one,
// behind the bearer tokens of --metrics-auth-token-file when given, and
// returns the function that shuts it down. Its connections are not counted
// in metahooks_open_connections, which is the hook listener's.
func (l listeners) serveMetrics(handler http.Handler, log *slog.Logger) (shutdown func(context.Context) error) {
	if l.metrics == nil {
		return func(context.Context) error { return nil }
	}
	server, limited := newLimitedServer(l.metrics, closeUnreadBodies(readsNoBody, requireToken(l.metricsTokens, handler)), metricsServerLimits, nil, log)
	log.Info("metrics listener up", "metrics_addr", l.metrics.Addr().String(), "metrics_auth", l.metricsTokens != nil)
	go func() {
		if err := server.Serve(limited); !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener failed", "error", err.Error())
		}
	}()
	return server.Shutdown
}

// readsNoBody: nothing on the metrics listener reads a body, so every
// request that declares one is answered and its connection closed
// (closeUnreadBodies), whether its token is right or not.
func readsNoBody(*http.Request) bool { return false }

// requireToken answers 401, saying nothing of why, to a request that is
// not one of the probes (GET /healthz, /readyz) and carries none of tokens
// (compared as the hook tokens are: tokenSet.allows). A nil tokens asks for
// nothing.
func requireToken(tokens *tokenSet, next http.Handler) http.Handler {
	if tokens == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
		if !probe && !tokens.allows(r.Header.Values("Authorization")) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusUnauthorized, unauthorizedMessage)
			return
		}
		if !probe {
			// A scraper with a token is evicted last at the cap, as
			// Metacontroller's connections are on the hook port: under a
			// flood of headers on their way it keeps its connection.
			trust(r)
		}
		next.ServeHTTP(w, r)
	})
}

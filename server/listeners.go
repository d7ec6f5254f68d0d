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
	insecure     bool
	// reloadInterval is how often the files above are checked for a change.
	reloadInterval time.Duration
}

func (c *securityConfig) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.tokenFile, "auth-token-file", "", "file of bearer tokens, one per line (blank lines and # comments ignored); every /hooks/ request must send the header Authorization: Bearer <one of them>. Re-read when it changes")
	fs.StringVar(&c.certFile, "tls-cert-file", "", "PEM certificate (chain): serve HTTPS on --addr (TLS 1.2 or later). Re-read when it changes")
	fs.StringVar(&c.keyFile, "tls-key-file", "", "PEM private key of --tls-cert-file")
	fs.StringVar(&c.clientCAFile, "client-ca-file", "", "PEM CA certificates: every /hooks/ request must come with a client certificate one of them signed (mutual TLS; needs --tls-cert-file). Re-read when it changes")
	fs.StringVar(&c.metricsAddr, "metrics-addr", ":9090", `listen address of the plain-HTTP metrics listener (/metrics, /healthz, /readyz); "" turns it off`)
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
	var auth *authenticator
	if c.tokenFile != "" || c.clientCAFile != "" {
		auth = &authenticator{clientCert: c.clientCAFile != ""}
	}
	if c.tokenFile != "" {
		if auth.tokens, err = newTokenSet(ctx, c.tokenFile, c.reloadInterval, log); err != nil {
			return l, err
		}
	}
	var tlsConfig *tls.Config
	if c.certFile != "" {
		source, err := newTLSSource(ctx, c.certFile, c.keyFile, c.clientCAFile, c.reloadInterval, log)
		if err != nil {
			return l, err
		}
		tlsConfig = source.config()
	}
	if auth == nil {
		log.Warn("--insecure-allow-unauthenticated: the hooks answer anyone who reaches the port, Database passwords included")
	}

	l = listeners{auth: auth, tls: tlsConfig}
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

// serveMetrics serves handler on the metrics listener, if there is one, and
// returns the function that shuts it down.
func (l listeners) serveMetrics(handler http.Handler, log *slog.Logger) (shutdown func(context.Context) error) {
	if l.metrics == nil {
		return func(context.Context) error { return nil }
	}
	server := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("metrics listener up", "metrics_addr", l.metrics.Addr().String())
	go func() {
		if err := server.Serve(l.metrics); !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener failed", "error", err.Error())
		}
	}()
	return server.Shutdown
}

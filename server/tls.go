package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// tlsSource serves the key pair and, for mutual TLS, the client CA, both
// re-read when their files change: every new handshake gets what was loaded
// last, connections already up keep theirs.
type tlsSource struct {
	pair      atomic.Pointer[tls.Certificate]
	clientCAs atomic.Pointer[x509.CertPool] // nil: no mutual TLS
}

// newTLSSource loads the key pair (and the client CA when caFile is not "")
// and watches the files until ctx is done. A bad file at start is an error;
// a bad file at reload keeps what was loaded before and logs why.
func newTLSSource(ctx context.Context, certFile, keyFile, caFile string, interval time.Duration, log *slog.Logger) (*tlsSource, error) {
	s := &tlsSource{}
	reloadPair := func() error {
		pair, err := loadKeyPair(certFile, keyFile)
		if err != nil {
			return err
		}
		s.pair.Store(pair)
		log.Info("TLS key pair loaded", "subject", pair.Leaf.Subject.String(), "dns_names", pair.Leaf.DNSNames,
			"not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
		return nil
	}
	if err := reloadPair(); err != nil {
		return nil, err
	}
	watchFiles(ctx, interval, []string{certFile, keyFile}, "TLS key pair", reloadPair, log)
	if caFile == "" {
		return s, nil
	}
	reloadCA := func() error {
		pool, err := loadCertPool(caFile)
		if err != nil {
			return err
		}
		s.clientCAs.Store(pool)
		return nil
	}
	if err := reloadCA(); err != nil {
		return nil, err
	}
	watchFiles(ctx, interval, []string{caFile}, "client CA", reloadCA, log)
	return s, nil
}

// loadKeyPair reads a PEM certificate (chain) and its private key. Errors
// name the files and the problem, never the key.
func loadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot load the TLS key pair %s and %s: %w", certFile, keyFile, err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("cannot parse the certificate in %s: %w", certFile, err)
		}
	}
	return &pair, nil
}

// loadCertPool reads PEM CA certificates.
func loadCertPool(caFile string) (*x509.CertPool, error) {
	raw, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return nil, errors.New(caFile + " holds no PEM certificate")
	}
	return pool, nil
}

// config is the server's TLS configuration: TLS 1.2 or later, HTTP/1.1, the
// current key pair on every handshake. With a client CA, a client
// certificate is verified when one is sent (tls.VerifyClientCertIfGiven) and
// the hook routes demand one (authenticator.clientCert): the kubelet's probes
// send none and must still get through. Session resumption is off then, so a
// client CA taken out of the file stops admitting new connections at once.
func (s *tlsSource) config() *tls.Config {
	base := func() *tls.Config {
		return &tls.Config{
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"http/1.1"},
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				return s.pair.Load(), nil
			},
		}
	}
	cfg := base()
	if s.clientCAs.Load() == nil {
		return cfg
	}
	cfg.SessionTicketsDisabled = true
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		perHandshake := base()
		perHandshake.SessionTicketsDisabled = true
		perHandshake.ClientAuth = tls.VerifyClientCertIfGiven
		perHandshake.ClientCAs = s.clientCAs.Load()
		return perHandshake, nil
	}
	return cfg
}

package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"time"
)

// tlsSource serves the key pair and, for mutual TLS, the client CA, both
// re-read when their files change: every new handshake gets what was loaded
// last, connections already up keep theirs.
type tlsSource struct {
	pair      atomic.Pointer[tls.Certificate]
	clientCAs atomic.Pointer[caSet] // nil: no mutual TLS
}

// caSet is the client CA in use: the pool handshakes verify with, and its
// certificates (a pool does not list them).
type caSet struct {
	pool  *x509.CertPool
	certs []*x509.Certificate
}

func newCASet(certs []*x509.Certificate) *caSet {
	set := &caSet{pool: x509.NewCertPool(), certs: certs}
	for _, cert := range certs {
		set.pool.AddCert(cert)
	}
	return set
}

// holds reports whether cert is one of the set's CA certificates.
func (s *caSet) holds(cert *x509.Certificate) bool {
	return slices.ContainsFunc(s.certs, func(ca *x509.Certificate) bool { return ca.Equal(cert) })
}

// newTLSSource loads the key pair (and the client CA when caFile is not "")
// and watches the files until ctx is done (roles tls_keypair and client_ca
// in the reload metrics). A bad file at start is an error. At reload a key
// pair that does not load keeps the last good one (serving goes on; a key
// pair grants nothing); a client CA that does not load keeps no CA it no
// longer lists (reloadClientCA).
func newTLSSource(ctx context.Context, certFile, keyFile, caFile string, interval time.Duration, reloads *configReloads, log *slog.Logger) (*tlsSource, error) {
	s := &tlsSource{}
	reloadPair := func() error {
		pair, err := loadKeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("%w; the last good key pair is still served", err)
		}
		s.pair.Store(pair)
		log.Info("TLS key pair loaded", "subject", pair.Leaf.Subject.String(), "dns_names", pair.Leaf.DNSNames,
			"not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
		return nil
	}
	if err := reloadPair(); err != nil {
		return nil, err
	}
	watchFiles(ctx, interval, watched{role: "tls_keypair", what: "TLS key pair", paths: []string{certFile, keyFile}, reloads: reloads}, reloadPair, log)
	if caFile == "" {
		return s, nil
	}
	certs, err := loadCACerts(caFile)
	if err != nil {
		return nil, err
	}
	s.clientCAs.Store(newCASet(certs))
	watchFiles(ctx, interval, watched{role: "client_ca", what: "client CA", paths: []string{caFile}, reloads: reloads}, func() error {
		return s.reloadClientCA(caFile)
	}, log)
	return s, nil
}

// reloadClientCA reads the client CA file again. The client CA is a grant,
// so a file that fails keeps nothing it no longer lists: missing or
// unreadable, no client certificate is admitted until it is back (fail
// closed); read but with a block that does not parse, only the CAs both in
// use before and still in the file are kept (a bad file adds none).
func (s *tlsSource) reloadClientCA(caFile string) error {
	certs, err := loadCACerts(caFile)
	if err == nil {
		s.clientCAs.Store(newCASet(certs))
		return nil
	}
	var kept []*x509.Certificate
	var bad *badCAFileError
	if errors.As(err, &bad) {
		current := s.clientCAs.Load()
		for _, cert := range bad.parsed {
			if current.holds(cert) {
				kept = append(kept, cert)
			}
		}
	}
	s.clientCAs.Store(newCASet(kept))
	if len(kept) == 0 {
		return fmt.Errorf("%w; no client certificate is admitted until it loads", err)
	}
	return fmt.Errorf("%w; only the %d CAs both in use before and still in the file are trusted", err, len(kept))
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

// badCAFileError is a CA file that was read but holds a block that is no
// certificate; parsed are the certificates of the blocks that are.
type badCAFileError struct {
	msg    string
	parsed []*x509.Certificate
}

func (e *badCAFileError) Error() string { return e.msg }

// loadCACerts reads PEM CA certificates. Every PEM block must be a
// certificate that parses (x509.CertPool.AppendCertsFromPEM skips the
// others, so a damaged file would load as a smaller one); anything outside
// the blocks is ignored, as PEM comments.
func loadCACerts(caFile string) ([]*x509.Certificate, error) {
	raw, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the client CA: %w", err)
	}
	var certs []*x509.Certificate
	var problem string
	begins, blocks := bytes.Count(raw, []byte("-----BEGIN ")), 0
	for n := 1; ; n++ {
		var block *pem.Block
		block, raw = pem.Decode(raw)
		if block == nil {
			break
		}
		blocks++
		if block.Type != "CERTIFICATE" {
			problem = cmp.Or(problem, fmt.Sprintf("%s: PEM block %d is a %s, not a CERTIFICATE", caFile, n, block.Type))
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			problem = cmp.Or(problem, fmt.Sprintf("%s: PEM block %d: %v", caFile, n, err))
			continue
		}
		certs = append(certs, cert)
	}
	if blocks < begins {
		// pem.Decode skips a block it cannot decode (one cut short, as in
		// a file read while it is written): the file would load as a
		// smaller set.
		problem = cmp.Or(problem, fmt.Sprintf("%s: %d of its %d PEM blocks are cut short or damaged", caFile, begins-blocks, begins))
	}
	switch {
	case problem != "":
		return nil, &badCAFileError{msg: problem, parsed: certs}
	case len(certs) == 0:
		return nil, &badCAFileError{msg: caFile + " holds no PEM certificate"}
	}
	return certs, nil
}

// config is the server's TLS configuration: TLS 1.2 or later, HTTP/1.1, the
// current key pair on every handshake. With a client CA, a client
// certificate is verified when one is sent (tls.VerifyClientCertIfGiven) and
// the hook routes demand one (authenticator.clientCert): the kubelet's probes
// send none and must still get through. A client certificate must also pass
// checkClientLeaf. Session resumption is off then, so a
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
		cas := s.clientCAs.Load()
		perHandshake.ClientCAs = cas.pool
		perHandshake.VerifyConnection = func(state tls.ConnectionState) error {
			if len(state.PeerCertificates) == 0 {
				return nil // no certificate: the hook routes refuse, the probes answer
			}
			return checkClientLeaf(state.PeerCertificates[0], cas)
		}
		return perHandshake, nil
	}
	return cfg
}

// errClientCertificate refuses a client certificate Go's verification
// admits but that is no client's: the handshake fails, saying nothing more.
var errClientCertificate = errors.New("the client certificate is not admitted")

// checkClientLeaf admits a verified client certificate only when it lists
// the clientAuth extended key usage (Go takes a certificate with none as
// good for any, and ExtKeyUsageAny is not clientAuth either) and is no CA:
// not marked as one, and not one of the client CA's own certificates (Go
// verifies a CA certificate in the pool as a chain of itself).
func checkClientLeaf(leaf *x509.Certificate, cas *caSet) error {
	if leaf.IsCA || cas.holds(leaf) || !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return errClientCertificate
	}
	return nil
}

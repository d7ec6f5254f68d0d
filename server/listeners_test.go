package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// authServer is the real server (openListeners + serve) on loopback ports.
type authServer struct {
	hookURL    string // http://127.0.0.1:port or https://...
	metricsURL string
	log        *syncBuffer
}

// startAuthServer serves the hooks with the given security flags on
// 127.0.0.1:0, the metrics listener on another 127.0.0.1:0, logging at debug
// level into a buffer, until the test ends. limits, if given, replace the
// default connection limits.
func startAuthServer(t *testing.T, sec securityConfig, limits ...limitConfig) *authServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sec.metricsAddr = "127.0.0.1:0"
	if sec.reloadInterval == 0 {
		sec.reloadInterval = reloadInterval
	}
	l, err := openListeners(ctx, "127.0.0.1:0", sec, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cfg := serveConfig{maxBodyBytes: 1 << 20, shutdownGrace: 5 * time.Second}
	if len(limits) > 0 {
		cfg.limits = limits[0]
	}
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, l, cfg, parentHooks(testDatabase(t)), log)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &authServer{hookURL: l.scheme() + "://" + l.hooks.Addr().String(), metricsURL: "http://" + l.metrics.Addr().String(), log: logs}
}

// syncBuffer is a log sink the server's goroutines write to while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// call sends one request with a fresh connection (new TLS handshake) and
// returns the status code and body; code 0 and the error when no HTTP answer
// came.
func call(client *http.Client, method, url string, body []byte, header ...string) (int, string, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw), err
}

// freshClient opens a new connection for every request.
func freshClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}}
}

// eventually polls cond until it holds or 10 s have passed, and says how long it took.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s after %s", what, time.Since(start).Round(10*time.Millisecond))
}

func TestSecurityConfigCheck(t *testing.T) {
	cases := map[string]struct {
		reason  string
		cfg     securityConfig
		wantErr string // "" for none
	}{
		"Nothing":        {reason: "no credential at all", cfg: securityConfig{}, wantErr: "--auth-token-file"},
		"Insecure":       {reason: "explicitly open", cfg: securityConfig{insecure: true}},
		"Token":          {reason: "bearer tokens over plain HTTP", cfg: securityConfig{tokenFile: "t"}},
		"TLSOnly":        {reason: "HTTPS is no credential", cfg: securityConfig{certFile: "c", keyFile: "k"}, wantErr: "--client-ca-file"},
		"MutualTLS":      {reason: "a client CA is a credential", cfg: securityConfig{certFile: "c", keyFile: "k", clientCAFile: "ca"}},
		"CertWithoutKey": {reason: "half a key pair", cfg: securityConfig{tokenFile: "t", certFile: "c"}, wantErr: "--tls-key-file"},
		"KeyWithoutCert": {reason: "half a key pair", cfg: securityConfig{tokenFile: "t", keyFile: "k"}, wantErr: "--tls-cert-file"},
		"CAWithoutTLS":   {reason: "mutual TLS needs TLS", cfg: securityConfig{clientCAFile: "ca"}, wantErr: "needs --tls-cert-file"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.cfg.check()
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("%s\ncheck() = %v, want an error naming %q", tc.reason, err, tc.wantErr)
			}
		})
	}
}

// TestServeRefusesWithoutCredential runs the serve command itself: without a
// credential flag it exits 1 and says which flags to give, before it listens.
func TestServeRefusesWithoutCredential(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("serve without a credential exited %d, want 1", code)
	}
	for _, want := range []string{"--auth-token-file", "--client-ca-file", "--insecure-allow-unauthenticated"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the refusal does not name %s: %q", want, stderr.String())
		}
	}
	code = run([]string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--auth-token-file", t.TempDir() + "/missing"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "token file") {
		t.Errorf("serve with a missing token file exited %d (%q), want 1 naming the token file", code, stderr.String())
	}
}

// TestInsecureAllowUnauthenticated: the hooks answer without a credential,
// and a warning says so at start.
func TestInsecureAllowUnauthenticated(t *testing.T) {
	srv := startAuthServer(t, securityConfig{insecure: true})
	code, body, err := call(freshClient(nil), http.MethodPost, srv.hookURL+"/hooks/database/sync", readFile(t, "../examples/requests/database-first-sync.json"))
	if err != nil || code != 200 {
		t.Fatalf("POST without a credential under --insecure-allow-unauthenticated = %d %v %.200s, want 200", code, err, body)
	}
	if !strings.Contains(srv.log.String(), `"level":"WARN","msg":"--insecure-allow-unauthenticated`) {
		t.Errorf("no warning at start; log:\n%s", srv.log)
	}
}

// TestMetricsListener: /metrics is on its own listener and not on the hook
// port; the probes answer on both.
func TestMetricsListener(t *testing.T) {
	srv := startAuthServer(t, securityConfig{insecure: true})
	client := freshClient(nil)
	for _, check := range []struct {
		url, want string
		wantCode  int
	}{
		{srv.hookURL + "/metrics", "no route /metrics", http.StatusNotFound},
		{srv.metricsURL + "/metrics", "metahooks_hook_unauthorized_total", 200},
		{srv.metricsURL + "/healthz", `"ok"`, 200},
		{srv.metricsURL + "/readyz", `"ready"`, 200},
		{srv.hookURL + "/readyz", `"ready"`, 200},
		{srv.metricsURL + "/hooks/myapp/sync", "", http.StatusNotFound},
	} {
		code, body, err := call(client, http.MethodGet, check.url, nil)
		if err != nil || code != check.wantCode || !strings.Contains(body, check.want) {
			t.Errorf("GET %s = %d %v, want %d containing %q; body %.300s", check.url, code, err, check.wantCode, check.want, body)
		}
	}
}

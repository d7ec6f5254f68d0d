package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestServeGracefulShutdown runs the real server on a loopback port: it
// answers, then on cancellation fails readiness while still serving, and
// stops cleanly.
func TestServeGracefulShutdown(t *testing.T) {
	listener, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + listener.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, listeners{hooks: listener}, serveConfig{
			maxBodyBytes: 1 << 20, shutdownDelay: 2 * time.Second, shutdownGrace: 5 * time.Second,
		}, parentHooks(testDatabase(t)), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	}()

	client := &http.Client{Timeout: 2 * time.Second}
	get := func(path string) int {
		resp, err := client.Get(base + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/readyz"); code != 200 {
		t.Fatalf("GET /readyz while serving = %d, want 200", code)
	}
	cancel()
	deadline := time.Now().Add(time.Second)
	for get("/readyz") != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatal("/readyz never failed after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code := get("/healthz"); code != 200 {
		t.Errorf("GET /healthz while draining = %d, want 200 (the process is alive)", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v, want nil after a clean shutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestParseServeFlags(t *testing.T) {
	cfg, err := parseServeFlags([]string{"--addr", "127.0.0.1:9999", "--max-body-bytes", "1024", "--log-level", "debug"}, io.Discard)
	if err != nil || cfg.addr != "127.0.0.1:9999" || cfg.maxBodyBytes != 1024 || cfg.logLevel != slog.LevelDebug {
		t.Errorf("parseServeFlags = %+v, %v", cfg, err)
	}
	defaults, err := parseServeFlags(nil, io.Discard)
	if err != nil || defaults.addr != ":8080" || defaults.maxBodyBytes != 8<<20 {
		t.Errorf("defaults = %+v, %v; want :8080 and 8 MiB", defaults, err)
	}
	for _, bad := range [][]string{{"--max-body-bytes", "0"}, {"extra"}, {"--log-level", "loud"}} {
		if _, err := parseServeFlags(bad, io.Discard); err == nil {
			t.Errorf("parseServeFlags(%v) accepted bad flags", bad)
		}
	}
}

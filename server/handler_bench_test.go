package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// benchmarkRoute posts one request body through the whole router (body read,
// ETag, decode, hook, encode, metrics) b.N times.
func benchmarkRoute(b *testing.B, route, file string, header ...string) {
	t := &testing.T{}
	router, _ := newTestRouter(t, 8<<20)
	body := readFile(t, file)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, route, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusPreconditionFailed {
			b.Fatalf("POST %s = %d: %s", route, rec.Code, rec.Body)
		}
	}
}

// BenchmarkHTTPMyAppCaptured: the captured Metacontroller request with an
// observed StatefulSet (managedFields and all), 17 KB.
func BenchmarkHTTPMyAppCaptured(b *testing.B) {
	benchmarkRoute(b, "/hooks/myapp/sync", "testdata/metacontroller/sync-03-children-with-status.json")
}

// BenchmarkHTTPMyAppSteady: the steady example, five observed children.
func BenchmarkHTTPMyAppSteady(b *testing.B) {
	benchmarkRoute(b, "/hooks/myapp/sync", "../examples/requests/myapp-sync-steady.json")
}

// BenchmarkHTTPDatabaseSteady: a running Database, all children observed.
func BenchmarkHTTPDatabaseSteady(b *testing.B) {
	benchmarkRoute(b, "/hooks/database/sync", "../examples/requests/database-credentials-observed.json")
}

// BenchmarkHTTPETagHit: the same request again with the ETag it was given:
// answered 412 without decoding or running the hook.
func BenchmarkHTTPETagHit(b *testing.B) {
	t := &testing.T{}
	router, _ := newTestRouter(t, 8<<20)
	body := readFile(t, "../examples/requests/myapp-sync-steady.json")
	first := post(t, router, "/hooks/myapp/sync", "application/json", body)
	benchmarkRoute(b, "/hooks/myapp/sync", "../examples/requests/myapp-sync-steady.json", "If-None-Match", first.Header().Get("ETag"))
}

// BenchmarkHTTPLargeRequest: the captured request with the observed
// StatefulSet's managedFields inflated to about 4 MiB (half the default body
// limit): what one worst-case request costs in memory.
func BenchmarkHTTPLargeRequest(b *testing.B) {
	t := &testing.T{}
	var req map[string]any
	if err := json.Unmarshal(readFile(t, "testdata/metacontroller/sync-03-children-with-status.json"), &req); err != nil {
		b.Fatal(err)
	}
	sts := req["children"].(map[string]any)["StatefulSet.apps/v1"].(map[string]any)["demo"].(map[string]any)
	metadata := sts["metadata"].(map[string]any)
	entry := metadata["managedFields"].([]any)[1]
	fields := make([]any, 0, 3900)
	for len(fields) < 3900 {
		fields = append(fields, entry)
	}
	metadata["managedFields"] = fields
	body, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	router, _ := newTestRouter(t, 8<<20)
	b.SetBytes(int64(len(body)))
	b.ReportMetric(float64(len(body))/(1<<20), "MiB/request")
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/hooks/myapp/sync", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("POST = %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkServeLoopback: the whole server as deployed (newHTTPServer's
// connection cap, timeouts and ConnState hook, bearer token, router) over a
// keep-alive loopback connection, the captured MyApp request, computed and
// answered from its ETag (412). Client time is in the figures too; its
// profile shows where the server's part goes.
func BenchmarkServeLoopback(b *testing.B) {
	t := &testing.T{}
	body := compactJSON(t, readFile(t, "testdata/metacontroller/sync-03-children-with-status.json"))
	m := newMetrics()
	tokens := &tokenSet{}
	digests := [][sha256.Size]byte{sha256.Sum256([]byte("bench-token"))}
	tokens.digests.Store(&digests)
	router := newRouter(routerConfig{
		maxBodyBytes: 8 << 20,
		inFlight:     newInFlightBudget(16, 8<<20, nil),
		build:        "bench",
		now:          func() time.Time { return testNow },
		log:          slog.New(slog.NewJSONHandler(io.Discard, nil)),
		metrics:      m,
		parents:      parentHooks(testDatabase(b)),
		auth:         &authenticator{tokens: tokens},
	})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	server, _ := newHTTPServer(listener, router, defaultLimits, m, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	go func() { _ = server.Serve(listener) }()
	defer server.Close()
	url := "http://" + listener.Addr().String() + "/hooks/myapp/sync"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	do := func(etag string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer bench-token")
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp
	}
	etag := do("").Header.Get("ETag")
	for _, c := range []struct{ name, etag string }{{"sync", ""}, {"etag-hit", etag}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if resp := do(c.etag); resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPreconditionFailed {
					b.Fatalf("POST = %d", resp.StatusCode)
				}
			}
		})
	}
}

func compactJSON(t testing.TB, raw []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
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

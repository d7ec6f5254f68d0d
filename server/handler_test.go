package main

import (
	"bytes"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLargeValuesCostLittle: a request whose name, namespace or string field
// is huge (within --max-body-bytes) is refused with a short 422 and a short
// log line, and costs a small multiple of its own size to read (issue 30,
// finding 5: a 7 MiB namespace gave a 78 MB answer, a 1 MB schedule a 3 MB
// error body and log line, a 7 MiB name was echoed in full).
func TestLargeValuesCostLittle(t *testing.T) {
	huge := func(n int) string { return strings.Repeat("a", n) }
	hugeList := func(n int) string { // "1,1,1,...": valid cron minutes
		return strings.TrimSuffix(strings.Repeat("1,", n/2), ",")
	}
	myApp := func(name, namespace, spec string) []byte {
		return []byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"` + name + `","namespace":"` + namespace + `","uid":"u1","generation":1},"spec":` + spec + `},"children":{}}`)
	}
	database := func(name, namespace, spec string) []byte {
		return []byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"` + name + `","namespace":"` + namespace + `","uid":"u1","generation":1},"spec":` + spec + `},"children":{}}`)
	}
	const mib = 1 << 20
	for _, tc := range []struct {
		name, path string
		body       []byte
		field      string // the 422 names it
	}{
		{"a 7 MiB namespace was copied into every child (78 MB answer)", "/hooks/myapp/sync",
			myApp("demo", huge(7*mib), `{"image":"nginx"}`), "metadata.namespace"},
		{"a 7 MiB Database namespace likewise", "/hooks/database/sync",
			database("db", huge(7*mib), `{"size":"small","image":"postgres:17"}`), "metadata.namespace"},
		{"a 7 MiB name was echoed in full", "/hooks/myapp/sync",
			myApp(huge(7*mib), "apps", `{"image":"nginx"}`), "metadata.name"},
		{"a 7 MiB Database name was echoed in full", "/hooks/database/sync",
			database(huge(7*mib), "apps", `{"size":"small","image":"postgres:17"}`), "metadata.name"},
		{"a valid 1 MB schedule was parsed (68.7 MB allocated)", "/hooks/database/sync",
			database("db", "apps", `{"size":"small","image":"postgres:17","backup":{"schedule":"`+hugeList(mib)+` * * * *"}}`), "spec.backup.schedule"},
		{"an invalid 1 MB schedule was echoed (3 MB body)", "/hooks/database/sync",
			database("db", "apps", `{"size":"small","image":"postgres:17","backup":{"schedule":"`+huge(mib)+` * * * *"}}`), "spec.backup.schedule"},
		{"a 1 MB MyApp schedule likewise", "/hooks/myapp/sync",
			myApp("demo", "apps", `{"image":"nginx","backupSchedule":"`+huge(mib)+` * * * *"}`), "spec.backupSchedule"},
		{"a 1 MB image was echoed", "/hooks/database/sync",
			database("db", "apps", `{"size":"small","image":"`+huge(mib)+` x"}`), "spec.image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			router := newRouter(routerConfig{
				maxBodyBytes: 16 << 20, build: "test", now: func() time.Time { return testNow },
				log:     slog.New(slog.NewJSONHandler(&logs, nil)),
				metrics: newMetrics(), parents: parentHooks(testDatabase(t)),
			})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rec := post(t, router, tc.path, "application/json", tc.body)
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("code %d, body %d bytes, log %d bytes, %d bytes allocated for a %d-byte request",
				rec.Code, rec.Body.Len(), logs.Len(), allocated, len(tc.body))
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("code %d, want 422", rec.Code)
			}
			if got := strings.Count(rec.Body.String(), tc.field); got != 1 {
				t.Errorf("body names %s %d times, want once: %.300s", tc.field, got, rec.Body.String())
			}
			if rec.Body.Len() > 1024 {
				t.Errorf("error body has %d bytes, want at most 1024: %.300s", rec.Body.Len(), rec.Body.String())
			}
			if logs.Len() > 1024 {
				t.Errorf("log line has %d bytes, want at most 1024: %.300s", logs.Len(), logs.String())
			}
			// Reading the body and decoding it costs a few copies of it;
			// anything more is amplification.
			if limit := uint64(6 * len(tc.body)); allocated > limit {
				t.Errorf("%d bytes allocated for a %d-byte request, want at most %d", allocated, len(tc.body), limit)
			}
		})
	}
}

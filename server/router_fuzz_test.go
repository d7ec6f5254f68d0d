package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fuzz targets for each parent's sync and finalize through the whole router.
// For any body: no panic and no 5xx (a hook may only refuse, 4xx), the same
// answer twice (status and bytes), and every 4xx a JSON error with a message.
// Their seed corpus is every captured Metacontroller request and every
// example request, so `go test` (make test) runs them on those; `make fuzz`
// runs each for a set time.

func FuzzMyAppSync(f *testing.F)         { fuzzRoute(f, "/hooks/myapp/sync") }
func FuzzMyAppFinalize(f *testing.F)     { fuzzRoute(f, "/hooks/myapp/finalize") }
func FuzzDatabaseSync(f *testing.F)      { fuzzRoute(f, "/hooks/database/sync") }
func FuzzDatabaseFinalize(f *testing.F)  { fuzzRoute(f, "/hooks/database/finalize") }
func FuzzDatabaseCustomize(f *testing.F) { fuzzRoute(f, "/hooks/database/customize") }

// maxErrorBody bounds an error body: a path and a reason (InvalidError
// bounds them at 512 and 1024 bytes, each "…(N bytes)" past that) in JSON,
// where a control character takes 6 bytes (\u0001).
const maxErrorBody = 10 << 10

// seedRequests are the captured requests and the example requests.
func seedRequests(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	for _, pattern := range []string{"testdata/metacontroller/*.json", "../examples/requests/*.json"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, path := range paths {
			if filepath.Base(path) == "request-headers.json" {
				continue // headers, not a body
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			seeds = append(seeds, raw)
		}
	}
	if len(seeds) < 10 {
		f.Fatalf("only %d seed requests found", len(seeds))
	}
	return seeds
}

func fuzzRoute(f *testing.F, path string) {
	for _, seed := range seedRequests(f) {
		f.Add(seed)
	}
	f.Add([]byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"b"},"spec":{"image":"x"}},"children":{"StatefulSet.apps/v1":{"a":null}}}`))
	f.Add([]byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","namespace":"b"},"spec":{"size":"small","image":"p","storage":"1e400"}}}`))
	// Schedules within the 256-character bound, at it and past it; a name
	// and a namespace past the API server's limits.
	atBound := "10" + strings.Repeat(",1", (256-8-2)/2) + " * * * *"
	for _, schedule := range []string{"0 2 * * *", "*/1 0-23/1 1-31 JAN-DEC/1 0-6", atBound, atBound[:2] + ",1" + atBound[2:]} {
		f.Add([]byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","namespace":"b"},"spec":{"size":"small","image":"p","backup":{"schedule":"` + schedule + `"}}}}`))
		f.Add([]byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"b"},"spec":{"image":"x","backupSchedule":"` + schedule + `"}}}`))
	}
	f.Add([]byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"` + strings.Repeat("a", 254) + `","namespace":"` + strings.Repeat("b", 64) + `"},"spec":{"image":"x"}}}`))
	router, _ := newTestRouter(f, 1<<20)
	f.Fuzz(func(t *testing.T, body []byte) {
		first := post(t, router, path, "application/json", body)
		second := post(t, router, path, "application/json", body)
		if first.Code >= 500 {
			t.Fatalf("POST %s = %d: %s\nbody: %q", path, first.Code, first.Body, body)
		}
		if first.Code != second.Code || !bytes.Equal(first.Body.Bytes(), second.Body.Bytes()) {
			t.Fatalf("POST %s twice: %d then %d, answers differ\nbody: %q", path, first.Code, second.Code, body)
		}
		switch {
		case first.Code == http.StatusOK:
			if !json.Valid(first.Body.Bytes()) {
				t.Fatalf("POST %s = 200 with a body that is not JSON", path)
			}
		case first.Code >= 400:
			var e errorBody
			if err := json.Unmarshal(first.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("POST %s = %d without a JSON error: %s", path, first.Code, first.Body)
			}
			// An error quotes a prefix of a value, never the value whole.
			if first.Body.Len() > maxErrorBody {
				t.Fatalf("POST %s = %d with a %d-byte error body: %.300s", path, first.Code, first.Body.Len(), first.Body)
			}
		default:
			t.Fatalf("POST %s = %d, want 200 or 4xx", path, first.Code)
		}
	})
}

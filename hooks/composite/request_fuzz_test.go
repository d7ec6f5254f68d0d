package composite

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeRequest: the request decoder never panics, decodes the same
// bytes the same way, and fails only with a *RequestError (a 400). Its seeds
// are the captured Metacontroller requests and the example requests.
func FuzzDecodeRequest(f *testing.F) {
	for _, pattern := range []string{"../../server/testdata/metacontroller/sync-*.json", "../../server/testdata/metacontroller/finalize-*.json", "../../examples/requests/*.json"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, path := range paths {
			raw, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	f.Add([]byte(`{"parent":{},"parent":{}}`))
	f.Add([]byte(`{"parent":{"a":1},"children":{"X.v1":{"x":null}},"finalizing":"yes"}`))
	for _, seed := range scheduleSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		first, err := DecodeRequest(body)
		second, err2 := DecodeRequest(body)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(first, second) {
			t.Fatalf("DecodeRequest is not deterministic on %q", body)
		}
		if err != nil {
			var requestErr *RequestError
			if !errors.As(err, &requestErr) || err.Error() == "" {
				t.Fatalf("DecodeRequest(%q) failed with %T %v, want a *RequestError", body, err, err)
			}
			return
		}
		if len(first.Parent) == 0 || first.Parent[0] != '{' {
			t.Fatalf("DecodeRequest(%q) accepted a parent that is no object: %q", body, first.Parent)
		}
	})
}

// FuzzDecodePaths: for any body, the scan, the fallback and
// DecodeRequestPrefetching's choice give one answer (status code and what
// a hook's reads give), and what the scan without a Prefetch refuses the
// fallback refuses (checkPathsAgree). Seeds: every kept request, as the
// MyApp and the Database hook read it.
func FuzzDecodePaths(f *testing.F) {
	for _, body := range requestFiles(f) {
		f.Add(0, body)
		f.Add(1, body)
	}
	f.Add(0, []byte(pathsBody(`"StatefulSet.apps/v1":{"s":{"metadata":{"name":"s","labels":1}}}`)))
	f.Add(1, []byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"},"spec":{"storage":"1e3","backup":{"schedule":"0 2 * * *"}}}}`))
	for _, seed := range scheduleSeeds() {
		f.Add(0, seed)
		f.Add(1, seed)
	}
	// Quantities within the bound, past it (exponent, length, the forms
	// ParseQuantity read as 0) and as bare JSON numbers, in parents and in
	// an observed child.
	for _, q := range []string{`"1.5Gi"`, `"99e99"`, `"1e100"`, `"1e-99999999"`, `"` + strings.Repeat("1", 65) + `"`, `"+"`, `"Ki"`, `1e-99999999`, `5368709120`} {
		f.Add(1, []byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"db","namespace":"apps"},"spec":{"size":"small","storage":`+q+`}},"children":{}}`))
		f.Add(0, []byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"demo","namespace":"apps"},"spec":{"image":"nginx","resources":{"limits":{"cpu":`+q+`}}}},"children":{}}`))
		f.Add(0, []byte(pathsBody(`"StatefulSet.apps/v1":{"s":{"metadata":{"name":"s"},"spec":{"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":`+q+`}}}]}}}}}`)))
	}
	// At the budget's edge: a costly StatefulSet with something refused
	// before and after it.
	for _, body := range []string{
		pathsBody(`"StatefulSet.apps/v1":` + costlyStatefulSet),
		pathsBody(`"StatefulSet.apps/v1":`+costlyStatefulSet) + `,`,
		`{"x":1,"x":2,"parent":` + pathsParent + `,"children":{"StatefulSet.apps/v1":` + costlyStatefulSet + `}}`,
		`{"children":{"StatefulSet.apps/v1":` + costlyStatefulSet + `},"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"},"spec":{"replicaCount":"x"}}}`,
	} {
		f.Add(0, []byte(body))
		f.Add(1, []byte(body))
	}
	f.Fuzz(func(t *testing.T, kind int, body []byte) {
		checkPathsAgree(t, []string{"MyApp", "Database"}[kind&1], body)
	})
}

// scheduleSeeds are requests of both parents with a schedule well within
// the 256-character bound, exactly at it and one past it, and a Database
// with a name and a namespace one past the API server's limits.
func scheduleSeeds() [][]byte {
	atBound := "10" + strings.Repeat(",1", (256-8-2)/2) + " * * * *" // 256 characters
	var seeds [][]byte
	for _, schedule := range []string{"0 2 * * *", "*/1 0-23/1 1-31 JAN-DEC/1 0-6", atBound, atBound[:2] + ",1" + atBound[2:]} {
		seeds = append(seeds,
			[]byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"db","namespace":"apps"},"spec":{"size":"small","image":"postgres:17","backup":{"schedule":"`+schedule+`"}}},"children":{}}`),
			[]byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"demo","namespace":"apps"},"spec":{"image":"nginx","backupSchedule":"`+schedule+`"}},"children":{}}`))
	}
	return append(seeds, []byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"`+strings.Repeat("d", 254)+`","namespace":"`+strings.Repeat("n", 64)+`"},"spec":{"size":"small","image":"postgres:17"}},"children":{}}`))
}

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"metahooks/hooks/composite"
)

var update = flag.Bool("update", false, "rewrite the golden responses in testdata/golden from the current code")

// goldenCases feed real requests through the real router and compare the
// answer with a checked-in golden response (goldenFile). The captured
// Metacontroller requests are the wire contract; the example requests are
// what the README tells users to curl.
var goldenCases = []struct {
	name, route, request string
}{
	{"captured-sync-01-no-children", "/hooks/myapp/sync", "testdata/metacontroller/sync-01-no-children.json"},
	{"captured-sync-02-children-observed", "/hooks/myapp/sync", "testdata/metacontroller/sync-02-children-observed.json"},
	{"captured-sync-03-children-with-status", "/hooks/myapp/sync", "testdata/metacontroller/sync-03-children-with-status.json"},
	{"captured-finalize-01", "/hooks/myapp/finalize", "testdata/metacontroller/finalize-01.json"},
	{"example-myapp-sync", "/hooks/myapp/sync", "../examples/requests/myapp-sync.json"},
	{"example-myapp-sync-steady", "/hooks/myapp/sync", "../examples/requests/myapp-sync-steady.json"},
	{"example-myapp-finalize", "/hooks/myapp/finalize", "../examples/requests/myapp-finalize.json"},
	{"example-myapp-finalize-done", "/hooks/myapp/finalize", "../examples/requests/myapp-finalize-done.json"},
	{"example-myapp-backup-schedule", "/hooks/myapp/sync", "../examples/requests/myapp-backup-schedule.json"},
	{"example-myapp-backup-succeeded", "/hooks/myapp/sync", "../examples/requests/myapp-backup-succeeded.json"},
	{"example-myapp-restore", "/hooks/myapp/sync", "../examples/requests/myapp-restore.json"},
	{"example-myapp-restore-done", "/hooks/myapp/sync", "../examples/requests/myapp-restore-done.json"},
	{"example-myapp-customize", "/hooks/myapp/customize", "../examples/requests/myapp-customize.json"},
	{"example-database-first-sync", "/hooks/database/sync", "../examples/requests/database-first-sync.json"},
	{"example-database-credentials-observed", "/hooks/database/sync", "../examples/requests/database-credentials-observed.json"},
	{"example-database-size-change", "/hooks/database/sync", "../examples/requests/database-size-change.json"},
	{"example-database-backup-scheduled", "/hooks/database/sync", "../examples/requests/database-backup-scheduled.json"},
	{"example-database-restore", "/hooks/database/sync", "../examples/requests/database-restore.json"},
	{"example-database-hibernate", "/hooks/database/sync", "../examples/requests/database-hibernate.json"},
	{"example-database-finalize-snapshot-waiting", "/hooks/database/finalize", "../examples/requests/database-finalize-snapshot-waiting.json"},
	{"example-database-finalize-retain-done", "/hooks/database/finalize", "../examples/requests/database-finalize-retain-done.json"},
	{"example-database-finalize-retain-owned", "/hooks/database/finalize", "../examples/requests/database-finalize-retain-owned.json"},
	{"example-database-customize", "/hooks/database/customize", "../examples/requests/database-customize.json"},
}

// goldenFile is where the golden response to request is, and whether this
// test owns it (writes it with -update): testdata/golden/<name>.json; or, for
// an example that links to a scenario of a package's golden test (most
// examples/requests/database-*.json link to hooks/database/testdata/<scenario>/request.json),
// that scenario's response.json, which only that package's -update writes. So
// each request and each answer exists once.
func goldenFile(t *testing.T, name, request string) (string, bool) {
	t.Helper()
	resolved, err := filepath.EvalSymlinks(request)
	if err != nil {
		t.Fatal(err)
	}
	if resolved != filepath.Clean(request) && filepath.Base(resolved) == "request.json" {
		return filepath.Join(filepath.Dir(resolved), "response.json"), false
	}
	return filepath.Join("testdata", "golden", name+".json"), true
}

func TestGolden(t *testing.T) {
	router, _ := newTestRouter(t, 8<<20)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(t, router, tc.route, "application/json", readFile(t, tc.request))
			if rec.Code != 200 {
				t.Fatalf("POST %s with %s = %d, want 200; body %s", tc.route, tc.request, rec.Code, rec.Body)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, rec.Body.Bytes(), "", "  "); err != nil {
				t.Fatalf("response is not JSON: %v", err)
			}
			got.WriteByte('\n')
			golden, owned := goldenFile(t, tc.name, tc.request)
			if *update && owned {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			accept := "go test ./server -run TestGolden -update"
			if !owned {
				accept = "the golden test of the package whose testdata holds " + golden + ", with -update"
			}
			want := readFile(t, golden)
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("POST %s with %s: -want +got (%s to accept):\n%s", tc.route, tc.request, accept, diff)
			}
		})
	}
}

// TestHookVersionV2Keys: a v2 hook keys children "namespace/name"; the answer
// must be the same as for the v1 keys of the same request.
func TestHookVersionV2Keys(t *testing.T) {
	router, _ := newTestRouter(t, 8<<20)
	v1 := readFile(t, "testdata/metacontroller/sync-03-children-with-status.json")
	var req map[string]any
	if err := json.Unmarshal(v1, &req); err != nil {
		t.Fatal(err)
	}
	for typeKey, objects := range req["children"].(map[string]any) {
		v2 := map[string]any{}
		for name, obj := range objects.(map[string]any) {
			v2["default/"+name] = obj
		}
		req["children"].(map[string]any)[typeKey] = v2
	}
	v2, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(v2), `"default/demo"`) {
		t.Fatal("test request was not rewritten to v2 keys")
	}
	want := post(t, router, "/hooks/myapp/sync", "application/json", v1)
	got := post(t, router, "/hooks/myapp/sync", "application/json", v2)
	if diff := cmp.Diff(want.Body.String(), got.Body.String()); diff != "" || got.Code != 200 {
		t.Errorf("v2 keys answered %d, differently from v1 keys: -v1 +v2:\n%s", got.Code, diff)
	}
}

// TestDeterministicAcrossRouters: two routers (two replicas of the service)
// answer the same request with the same bytes.
func TestDeterministicAcrossRouters(t *testing.T) {
	body := readFile(t, "../examples/requests/myapp-sync.json")
	a, _ := newTestRouter(t, 8<<20)
	b, _ := newTestRouter(t, 8<<20)
	first := post(t, a, "/hooks/myapp/sync", "application/json", body)
	for range 10 {
		again := post(t, b, "/hooks/myapp/sync", "application/json", body)
		if !bytes.Equal(first.Body.Bytes(), again.Body.Bytes()) || first.Header().Get("ETag") != again.Header().Get("ETag") {
			t.Fatalf("two routers answered differently:\n%s\n%s", first.Body, again.Body)
		}
	}
}

// TestSteadyExampleIsFixedPoint: in the steady example every observed child
// was applied from the hook's own answer and the parent's status holds the
// hook's last status. The answer must repeat both exactly: the status
// Metacontroller would write equals the stored one, and every desired child
// equals its last-applied configuration, so nothing is written.
func TestSteadyExampleIsFixedPoint(t *testing.T) {
	router, _ := newTestRouter(t, 8<<20)
	body := readFile(t, "../examples/requests/myapp-sync-steady.json")
	rec := post(t, router, "/hooks/myapp/sync", "application/json", body)
	if rec.Code != 200 {
		t.Fatalf("steady example = %d: %s", rec.Code, rec.Body)
	}
	var req struct {
		Parent struct {
			Status json.RawMessage `json:"status"`
		} `json:"parent"`
		Children map[string]map[string]struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"children"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var response composite.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &response); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(canonicalJSON(t, req.Parent.Status), canonicalJSON(t, response.Status)); diff != "" {
		t.Errorf("status differs from the stored one (Metacontroller would write it): -stored +answer:\n%s", diff)
	}
	lastApplied := map[string]bool{}
	for _, objects := range req.Children {
		for _, obj := range objects {
			lastApplied[canonicalJSON(t, []byte(obj.Metadata.Annotations["metacontroller.k8s.io/last-applied-configuration"]))] = true
		}
	}
	for _, child := range response.Children {
		if !lastApplied[canonicalJSON(t, child.JSON)] {
			t.Errorf("desired %s %s differs from its last-applied configuration:\n%s", child.Kind, child.Name, child.JSON)
		}
	}
	if len(response.Children) != len(lastApplied) {
		t.Errorf("%d desired children for %d observed", len(response.Children), len(lastApplied))
	}
}

func canonicalJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

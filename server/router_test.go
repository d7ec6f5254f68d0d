package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"metahooks/hooks/composite"
	"metahooks/hooks/database"
)

var testNow = time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)

// newTestRouter is the production router with a fixed clock, a discarded log
// and the given body limit.
func newTestRouter(t testing.TB, maxBodyBytes int64, parents ...parentHook) (http.Handler, *metrics) {
	t.Helper()
	if len(parents) == 0 {
		parents = parentHooks(testDatabase(t))
	}
	m := newMetrics()
	return newRouter(routerConfig{
		maxBodyBytes: maxBodyBytes,
		build:        "test",
		now:          func() time.Time { return testNow },
		log:          slog.New(slog.NewJSONHandler(io.Discard, nil)),
		metrics:      m,
		parents:      parents,
	}), m
}

// testDatabaseKey is the credentials key of the HTTP tests: the Database
// package tests' key (hooks/database/fixtures_test.go testKey), so that the
// answers are its golden responses (TestGolden).
const testDatabaseKey = "metahooks-test-key-0123456789abcdef"

// testAgentImage is the reporter containers' image the test service runs with.
const testAgentImage = "registry.example/metahooks:test"

// testDatabase is the Database as the test service binds it: testDatabaseHook
// with the test image and key.
func testDatabase(t testing.TB) databaseBinding {
	return bound(testDatabaseHook(t), testAgentImage, []byte(testDatabaseKey))
}

func testDatabaseHook(t testing.TB) composite.SyncFunc {
	t.Helper()
	hook, err := database.Hook([]byte(testDatabaseKey), testAgentImage)
	if err != nil {
		t.Fatal(err)
	}
	return hook
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func post(t *testing.T, router http.Handler, path, contentType string, body []byte, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, req)
	return rec
}

func TestRouterStatusCodes(t *testing.T) {
	valid := readFile(t, "testdata/metacontroller/sync-01-no-children.json")
	invalid := readFile(t, "../examples/requests/myapp-invalid.json")
	withSpec := func(spec string) []byte {
		return []byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"demo","namespace":"apps"},"spec":` + spec + `},"children":{}}`)
	}
	cases := map[string]struct {
		reason      string
		method      string
		path        string
		contentType string
		body        []byte
		wantCode    int
		wantInError string // substring of the JSON error; "" for 200
	}{
		"Sync":                   {reason: "a captured request", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: valid, wantCode: 200},
		"Finalize":               {reason: "the finalize route", method: "POST", path: "/hooks/myapp/finalize", contentType: "application/json; charset=utf-8", body: readFile(t, "testdata/metacontroller/finalize-01.json"), wantCode: 200},
		"MalformedJSON":          {reason: "not JSON", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: []byte(`{"parent": {`), wantCode: 400, wantInError: "body"},
		"WrongShape":             {reason: "children as a list", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: []byte(`{"parent":{},"children":[]}`), wantCode: 400, wantInError: "children"},
		"WrongParentKind":        {reason: "a Database on the MyApp route", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: []byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"x","namespace":"y"}},"children":{}}`), wantCode: 400, wantInError: "parent"},
		"ReplicaCountString":     {reason: "the captured KeyError", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: withSpec(`{"replicaCount":"KeyError: 'replicaCount'","image":"x"}`), wantCode: 422, wantInError: "spec.replicaCount"},
		"ReplicaCountExample":    {reason: "the README's invalid example", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: invalid, wantCode: 422, wantInError: "spec.replicaCount"},
		"EmptyImage":             {reason: "an empty image", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: withSpec(`{"image":""}`), wantCode: 422, wantInError: "spec.image"},
		"MalformedCron":          {reason: "a 6-field cron line", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: withSpec(`{"image":"x","backupSchedule":"0 0 2 * * *","backup":{"command":["b"]}}`), wantCode: 422, wantInError: "spec.backupSchedule"},
		"TooLarge":               {reason: "over the body limit", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: append(valid, bytes.Repeat([]byte(" "), 64<<10)...), wantCode: 413, wantInError: "limit"},
		"TextPlain":              {reason: "a non-JSON Content-Type", method: "POST", path: "/hooks/myapp/sync", contentType: "text/plain", body: valid, wantCode: 415, wantInError: "Content-Type"},
		"FormEncoded":            {reason: "curl -d without -H", method: "POST", path: "/hooks/myapp/sync", contentType: "application/x-www-form-urlencoded", body: valid, wantCode: 415, wantInError: "application/json"},
		"NoContentType":          {reason: "no Content-Type at all", method: "POST", path: "/hooks/myapp/sync", body: valid, wantCode: 415, wantInError: "Content-Type"},
		"GetOnHook":              {reason: "hooks are POST only", method: "GET", path: "/hooks/myapp/sync", wantCode: 405, wantInError: "GET"},
		"PutOnHook":              {reason: "hooks are POST only", method: "PUT", path: "/hooks/myapp/finalize", contentType: "application/json", body: valid, wantCode: 405, wantInError: "PUT"},
		"PostOnHealthz":          {reason: "probes are GET only", method: "POST", path: "/healthz", contentType: "application/json", wantCode: 405, wantInError: "POST"},
		"DatabaseSync":           {reason: "the Database route", method: "POST", path: "/hooks/database/sync", contentType: "application/json", body: readFile(t, "../examples/requests/database-first-sync.json"), wantCode: 200},
		"DatabaseSizeHuge":       {reason: "size outside the enum", method: "POST", path: "/hooks/database/sync", contentType: "application/json", body: databaseWithSpec(`{"size":"huge","image":"postgres:17"}`), wantCode: 422, wantInError: "spec.size"},
		"DatabaseEmptyImage":     {reason: "an empty image", method: "POST", path: "/hooks/database/sync", contentType: "application/json", body: databaseWithSpec(`{"size":"small","image":""}`), wantCode: 422, wantInError: "spec.image"},
		"DatabaseOnMyApp":        {reason: "a MyApp on the Database route", method: "POST", path: "/hooks/database/sync", contentType: "application/json", body: valid, wantCode: 400, wantInError: "parent"},
		"MyAppStorageOnDatabase": {reason: "a MyApp with a quantity on the Database route is the wrong kind, not a bad quantity", method: "POST", path: "/hooks/database/sync", contentType: "application/json", body: withSpec(`{"image":"x","storage":{"size":"1Gi"}}`), wantCode: 400, wantInError: "this hook serves example.com/v1 Database"},
		"DuplicateParentKey":     {reason: "a request with parent twice is refused, not last-one-wins", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: []byte(`{"parent":{},"parent":{},"children":{}}`), wantCode: 400, wantInError: "parent: duplicate key"},
		"NullObservedChild":      {reason: "Metacontroller never sends a null child", method: "POST", path: "/hooks/myapp/sync", contentType: "application/json", body: []byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"demo","namespace":"apps"},"spec":{"image":"x"}},"children":{"StatefulSet.apps/v1":{"demo":null}}}`), wantCode: 400, wantInError: `children["StatefulSet.apps/v1"]["demo"]: must be an object`},
		"UnknownParent":          {reason: "no such route", method: "POST", path: "/hooks/nothing/sync", contentType: "application/json", body: valid, wantCode: 404, wantInError: "/hooks/nothing/sync"},
	}
	router, _ := newTestRouter(t, 64<<10) // TooLarge adds 64 KiB to a 5 KiB request
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, bytes.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("%s\n%s %s = %d, want %d; body %s", tc.reason, tc.method, tc.path, rec.Code, tc.wantCode, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("%s\nContent-Type = %q, want application/json", tc.reason, got)
			}
			if tc.wantCode == 200 {
				var response composite.Response
				if err := json.Unmarshal(rec.Body.Bytes(), &response); err != nil || len(response.Children) == 0 {
					t.Errorf("%s\n200 without children (%v): %s", tc.reason, err, rec.Body)
				}
				return
			}
			var body errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("%s\nerror body is not JSON: %q", tc.reason, rec.Body)
			}
			if !strings.Contains(body.Error, tc.wantInError) {
				t.Errorf("%s\nerror %q does not mention %q", tc.reason, body.Error, tc.wantInError)
			}
		})
	}
}

func databaseWithSpec(spec string) []byte {
	return []byte(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"db","namespace":"apps","uid":"u1","generation":1},"spec":` + spec + `},"children":{}}`)
}

// TestDatabaseWithoutKeyIs500: a service started without a credentials key
// cannot compute the Secret, so it must not answer 200 (which would delete
// the children it left out).
func TestDatabaseWithoutKeyIs500(t *testing.T) {
	router, _ := newTestRouter(t, 8<<20, parentHooks(databaseBinding{sync: database.Unconfigured})...)
	rec := post(t, router, "/hooks/database/sync", "application/json", readFile(t, "../examples/requests/database-first-sync.json"))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "credentials key") {
		t.Errorf("Database sync without a key = %d %s, want 500 naming the credentials key", rec.Code, rec.Body)
	}
	if myapp := post(t, router, "/hooks/myapp/sync", "application/json", readFile(t, "testdata/metacontroller/sync-01-no-children.json")); myapp.Code != 200 {
		t.Errorf("MyApp sync without a Database key = %d, want 200", myapp.Code)
	}
}

// TestCustomizeRoute: database-controller's customize hook names the
// Database's PVCs, myapp-controller's a restoring MyApp's pods, with the same
// error contract as sync.
func TestCustomizeRoute(t *testing.T) {
	customize := readFile(t, "../examples/requests/database-customize.json")
	withParent := func(parent string) []byte { return []byte(`{"parent":` + parent + `}`) }
	cases := map[string]struct {
		reason      string
		method      string
		path        string
		body        []byte
		wantCode    int
		wantInBody  string
		withoutKeys bool
	}{
		"Database":        {reason: "the example", method: "POST", path: "/hooks/database/customize", body: customize, wantCode: 200, wantInBody: `"names":["data-orders-0","backups-orders-0","data-orders-1",`},
		"WithoutKey":      {reason: "customize needs no credentials key", method: "POST", path: "/hooks/database/customize", body: customize, wantCode: 200, wantInBody: "persistentvolumeclaims", withoutKeys: true},
		"Malformed":       {reason: "not JSON", method: "POST", path: "/hooks/database/customize", body: []byte(`{"parent":`), wantCode: 400, wantInBody: "body"},
		"NoParent":        {reason: "parent is required", method: "POST", path: "/hooks/database/customize", body: []byte(`{"controller":{}}`), wantCode: 400, wantInBody: "parent"},
		"MyAppParent":     {reason: "a MyApp on the Database route", method: "POST", path: "/hooks/database/customize", body: withParent(`{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"b"}}`), wantCode: 400, wantInBody: "parent"},
		"NoNamespace":     {reason: "Database is namespaced", method: "POST", path: "/hooks/database/customize", body: withParent(`{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"}}`), wantCode: 422, wantInBody: "metadata.namespace"},
		"MyAppRestore":    {reason: "a MyApp with restoreFrom asks for its server pods", method: "POST", path: "/hooks/myapp/customize", body: readFile(t, "../examples/requests/myapp-customize.json"), wantCode: 200, wantInBody: `"resource":"pods"`},
		"MyAppNoRestore":  {reason: "any other MyApp asks for nothing", method: "POST", path: "/hooks/myapp/customize", body: withParent(`{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"b"},"spec":{"image":"x"}}`), wantCode: 200, wantInBody: `{"relatedResources":[]}`},
		"DatabaseOnMyApp": {reason: "a Database on the MyApp route", method: "POST", path: "/hooks/myapp/customize", body: customize, wantCode: 400, wantInBody: "parent"},
		"GetOnCustomize":  {reason: "hooks are POST only", method: "GET", path: "/hooks/database/customize", wantCode: 405, wantInBody: "GET"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			parents := parentHooks(testDatabase(t))
			if tc.withoutKeys {
				parents = parentHooks(databaseBinding{sync: database.Unconfigured})
			}
			router, m := newTestRouter(t, 8<<20, parents...)
			req := httptest.NewRequest(tc.method, tc.path, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.wantInBody) {
				t.Fatalf("%s\n%s %s = %d %s, want %d mentioning %s", tc.reason, tc.method, tc.path, rec.Code, rec.Body, tc.wantCode, tc.wantInBody)
			}
			if got := rec.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("%s\nContent-Type = %q, want application/json", tc.reason, got)
			}
			if tc.wantCode == 200 {
				metrics := httptest.NewRecorder()
				newMetricsRouter(m, nil).ServeHTTP(metrics, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				if want := `metahooks_hook_requests_total{code="200",hook="customize",parent="` + strings.Split(tc.path, "/")[2] + `"} 1`; !strings.Contains(metrics.Body.String(), want) {
					t.Errorf("%s\n/metrics lacks %s", tc.reason, want)
				}
				if rec.Header().Get("ETag") == "" {
					t.Errorf("%s\nno ETag on a 200", tc.reason)
				}
			}
		})
	}
}

func TestDatabaseHookKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := dir + "/" + name
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if _, err := databaseHook(write("short", "too-short\n"), testAgentImage); err == nil || !strings.Contains(err.Error(), "32") {
		t.Errorf("databaseHook(9-byte key) = %v, want an error naming the 32-byte minimum", err)
	}
	if _, err := databaseHook(dir+"/missing", testAgentImage); err == nil {
		t.Error("databaseHook(missing file) accepted")
	}
	a, err := databaseHook(write("a", testDatabaseKey+"\n"), testAgentImage)
	if err != nil {
		t.Fatal(err)
	}
	body := readFile(t, "../examples/requests/database-first-sync.json")
	req, err := composite.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(a.answerInputs()), string(testDatabase(t).answerInputs()); got != want {
		t.Errorf("inputs of the key file %q, want the key's own %q (white space trimmed)", got, want)
	}
	fromFile, err := a.sync(req, testNow)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := testDatabaseHook(t)(req, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(direct, fromFile, cmpopts.IgnoreUnexported(composite.Response{})); diff != "" { // the arena: where the JSON is kept
		t.Errorf("a key file with a trailing newline gave other answers than the key itself: -want +got:\n%s", diff)
	}
}

func TestRouterPanicIs500(t *testing.T) {
	panicking := parentHook{route: "boom", apiVersion: "example.com/v1", kind: "Boom",
		sync: func(*composite.Request, time.Time) (*composite.Response, error) { panic("nil map write") }}
	router, m := newTestRouter(t, 1<<20, panicking)
	for range 2 { // the server must survive the first one
		rec := post(t, router, "/hooks/boom/sync", "application/json", []byte(`{"parent":{"kind":"Boom"},"children":{}}`))
		if rec.Code != http.StatusInternalServerError {
			t.Fatalf("panicking hook answered %d, want 500; body %s", rec.Code, rec.Body)
		}
		var body errorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == "" {
			t.Errorf("500 body = %q, want a JSON error", rec.Body)
		}
		if strings.Contains(body.Error, "nil map write") {
			t.Errorf("500 body leaks the panic value: %q", body.Error)
		}
	}
	if got := counterValue(t, m, "metahooks_hook_panics_total"); got != 2 {
		t.Errorf("metahooks_hook_panics_total = %v, want 2", got)
	}
}

func TestRouterETag(t *testing.T) {
	router, m := newTestRouter(t, 8<<20)
	body := readFile(t, "testdata/metacontroller/sync-02-children-observed.json")
	first := post(t, router, "/hooks/myapp/sync", "application/json", body)
	etag := first.Header().Get("ETag")
	if first.Code != 200 || etag == "" {
		t.Fatalf("first call = %d with ETag %q, want 200 with an ETag", first.Code, etag)
	}
	again := post(t, router, "/hooks/myapp/sync", "application/json", body, "If-None-Match", etag)
	if again.Code != http.StatusPreconditionFailed {
		t.Errorf("same body with If-None-Match = %d, want 412 (Metacontroller then reuses its cached answer)", again.Code)
	}
	changed := post(t, router, "/hooks/myapp/sync", "application/json", bytes.Replace(body, []byte(`"replicaCount": 2`), []byte(`"replicaCount": 3`), 1), "If-None-Match", etag)
	if changed.Code != 200 || changed.Header().Get("ETag") == etag {
		t.Errorf("changed body with the old If-None-Match = %d (ETag %q), want 200 with a new ETag", changed.Code, changed.Header().Get("ETag"))
	}
	finalize := post(t, router, "/hooks/myapp/finalize", "application/json", body, "If-None-Match", etag)
	if finalize.Code != 200 {
		t.Errorf("the sync ETag matched on the finalize route (%d); ETags must be per hook", finalize.Code)
	}
	if got := counterValue(t, m, "metahooks_hook_etag_hits_total"); got != 1 {
		t.Errorf("metahooks_hook_etag_hits_total = %v, want 1", got)
	}
}

// TestRouterETagOnlyOnReusableAnswers: an answer that asks to be called
// again (resyncAfterSeconds) waits on the clock, so it carries no ETag; any
// other does. (TestRouterETag replays an ETag, and
// TestRouterFailoverAfterDelayIsComputed a replay across a delay.)
func TestRouterETagOnlyOnReusableAnswers(t *testing.T) {
	router, _ := newTestRouter(t, 8<<20)
	cases := map[string]struct {
		reason, path, request string
		wantETag              bool
	}{
		"Steady":          {reason: "a settled MyApp: nothing to wait for", path: "/hooks/myapp/sync", request: "../examples/requests/myapp-sync-steady.json", wantETag: true},
		"FailoverBlocked": {reason: "a failover waits for a standby's report, and looks again in 15 s", path: "/hooks/database/sync", request: "../hooks/database/testdata/ha-failover-blocked/request.json"},
		"FailoverDelay":   {reason: "no pod yet: the primary is not ready from now on, and the answer waits out failoverDelaySeconds", path: "/hooks/database/sync", request: "../hooks/database/testdata/ha-first-sync/request.json"},
		"Finalizing":      {reason: "finalize polls while the children go", path: "/hooks/myapp/finalize", request: "../examples/requests/myapp-finalize.json"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			body := readFile(t, tc.request)
			first := post(t, router, tc.path, "application/json", body)
			var answer struct {
				ResyncAfterSeconds float64 `json:"resyncAfterSeconds"`
			}
			if err := json.Unmarshal(first.Body.Bytes(), &answer); first.Code != 200 || err != nil {
				t.Fatalf("%s\n%s = %d %s, want 200", tc.reason, tc.path, first.Code, first.Body)
			}
			if waits := answer.ResyncAfterSeconds > 0; waits == tc.wantETag {
				t.Fatalf("%s\nresyncAfterSeconds = %v: the case no longer tests what it says", tc.reason, answer.ResyncAfterSeconds)
			}
			etag := first.Header().Get("ETag")
			if got := etag != ""; got != tc.wantETag {
				t.Fatalf("%s\nETag %q, want one: %v", tc.reason, etag, tc.wantETag)
			}
		})
	}
}

// TestRouterFailoverAfterDelayIsComputed plays Metacontroller's ETag cache
// (contract §4.5) over a failover: the record says the primary has been
// not ready for 15 s of a 30 s delay, so the answer waits; when the delay
// has run out, the same request with the ETag Metacontroller holds must be
// computed and fence the primary, not answered 412 (which would replay the waiting answer for as
// long as the request stays the same).
func TestRouterFailoverAfterDelayIsComputed(t *testing.T) {
	clock := time.Date(2026, 11, 30, 4, 59, 30, 0, time.UTC) // the record: the primary not ready since 04:59:15
	router := newRouter(routerConfig{
		maxBodyBytes: 8 << 20, build: "test", now: func() time.Time { return clock },
		log: slog.New(slog.NewJSONHandler(io.Discard, nil)), metrics: newMetrics(), parents: parentHooks(testDatabase(t)),
	})
	body := readFile(t, "../hooks/database/testdata/ha-fence/request.json")
	failingOver := func(rec *httptest.ResponseRecorder) (reason string, resync float64) {
		t.Helper()
		var answer struct {
			ResyncAfterSeconds float64 `json:"resyncAfterSeconds"`
			Status             struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); rec.Code != 200 || err != nil {
			t.Fatalf("sync = %d %s, want 200", rec.Code, rec.Body)
		}
		for _, c := range answer.Status.Conditions {
			if c.Type == "FailingOver" {
				return c.Reason, answer.ResyncAfterSeconds
			}
		}
		t.Fatalf("no FailingOver condition in %s", rec.Body)
		return "", 0
	}
	waiting := post(t, router, "/hooks/database/sync", "application/json", body)
	if reason, resync := failingOver(waiting); reason != "FailoverPending" || resync != 15 {
		t.Fatalf("15 s into the delay: FailingOver %s, resyncAfterSeconds %v; want FailoverPending, 15", reason, resync)
	}
	held := waiting.Header().Get("ETag") // what Metacontroller caches with this answer, if anything
	if held == "" {
		held = `"` + hex.EncodeToString(make([]byte, 32)) + `"` // the entry of an earlier request stays
	}
	clock = clock.Add(15 * time.Second)
	after := post(t, router, "/hooks/database/sync", "application/json", body, "If-None-Match", held)
	if after.Code == http.StatusPreconditionFailed {
		t.Fatal("the delay has run out and the same request was answered 412: Metacontroller would replay the waiting answer")
	}
	if reason, _ := failingOver(after); reason != "Fencing" {
		t.Errorf("the delay has run out: FailingOver %s, want Fencing", reason)
	}
}

// TestRouterETagCoversDatabaseInputs: a Database's answer depends on the
// reporter image and the credentials key the service runs with, so the same
// request gets another ETag from a service with another one of either; a
// MyApp's depends on neither.
func TestRouterETagCoversDatabaseInputs(t *testing.T) {
	const imageA, imageB = "registry.example/metahooks:1", "registry.example/metahooks:2"
	const keyA, keyB = testDatabaseKey, "another-test-key-0123456789abcdef"
	etagOf := func(agentImage, key, path, request string) string {
		hook, err := database.Hook([]byte(key), agentImage)
		if err != nil {
			t.Fatal(err)
		}
		router, _ := newTestRouter(t, 8<<20, parentHooks(bound(hook, agentImage, []byte(key)))...)
		rec := post(t, router, path, "application/json", readFile(t, request))
		if rec.Code != 200 || rec.Header().Get("ETag") == "" {
			t.Fatalf("%s with image %s = %d %s, want 200 with an ETag", path, agentImage, rec.Code, rec.Body)
		}
		return rec.Header().Get("ETag")
	}
	const databaseRequest, myappRequest = "../hooks/database/testdata/ha-streaming/request.json", "../examples/requests/myapp-sync-steady.json"
	dbETag := etagOf(imageA, keyA, "/hooks/database/sync", databaseRequest)
	if other := etagOf(imageB, keyA, "/hooks/database/sync", databaseRequest); other == dbETag {
		t.Errorf("Database sync: the same ETag %s from services with two reporter images", dbETag)
	}
	if other := etagOf(imageA, keyB, "/hooks/database/sync", databaseRequest); other == dbETag {
		t.Errorf("Database sync: the same ETag %s from services with two credentials keys", dbETag)
	}
	if again := etagOf(imageA, keyA, "/hooks/database/sync", databaseRequest); again != dbETag {
		t.Errorf("Database sync: ETags %s and %s from two services with the same image and key", dbETag, again)
	}
	myappETag := etagOf(imageA, keyA, "/hooks/myapp/sync", myappRequest)
	for _, other := range []string{etagOf(imageB, keyA, "/hooks/myapp/sync", myappRequest), etagOf(imageA, keyB, "/hooks/myapp/sync", myappRequest)} {
		if other != myappETag {
			t.Errorf("MyApp sync: ETags %s and %s; neither the reporter image nor the key is an input of a MyApp's answer", myappETag, other)
		}
	}
}

func TestProbesAndMetrics(t *testing.T) {
	hooks, m := newTestRouter(t, 8<<20)
	metrics := newMetricsRouter(m, nil)
	post(t, hooks, "/hooks/myapp/sync", "application/json", readFile(t, "testdata/metacontroller/sync-01-no-children.json"))
	for _, check := range []struct {
		listener   string
		router     http.Handler
		path, want string
	}{
		{"hook", hooks, "/healthz", `"ok"`},
		{"hook", hooks, "/readyz", `"ready"`},
		{"metrics", metrics, "/healthz", `"ok"`},
		{"metrics", metrics, "/readyz", `"ready"`},
		{"metrics", metrics, "/metrics", `metahooks_hook_requests_total{code="200",hook="sync",parent="myapp"} 1`},
		// Counters of rare events exist at 0 before the first one.
		{"metrics", metrics, "/metrics", `metahooks_hook_etag_hits_total{hook="finalize",parent="database"} 0`},
		{"metrics", metrics, "/metrics", `metahooks_hook_finalized_total{parent="myapp"} 0`},
		{"metrics", metrics, "/metrics", `metahooks_hook_unauthorized_total{hook="customize",parent="database"} 0`},
	} {
		rec := httptest.NewRecorder()
		check.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, check.path, nil))
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), check.want) {
			t.Errorf("GET %s on the %s listener = %d, want 200 containing %s; body:\n%.2000s", check.path, check.listener, rec.Code, check.want, rec.Body)
		}
	}
	rec := httptest.NewRecorder()
	hooks.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /metrics on the hook listener = %d, want 404: metrics have their own listener", rec.Code)
	}
}

// counterValue reads the sum of a counter family from the registry.
func counterValue(t *testing.T, m *metrics, name string) float64 {
	t.Helper()
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, metric := range family.GetMetric() {
			total += metric.GetCounter().GetValue()
		}
	}
	return total
}

// TestCompositeControllerRoutes: every hook path in deploy/compositecontroller.yaml
// is a route of the router, and database-controller has the customize hook
// finalize depends on to see the PVCs.
func TestCompositeControllerRoutes(t *testing.T) {
	router, _ := newTestRouter(t, 8<<20)
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(readFile(t, "../deploy/compositecontroller.yaml")), 4096)
	hooksOf := map[string]map[string]bool{}
	for {
		var cc struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Hooks map[string]struct {
					Webhook struct {
						Path string `json:"path"`
					} `json:"webhook"`
				} `json:"hooks"`
			} `json:"spec"`
		}
		if err := decoder.Decode(&cc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		hooksOf[cc.Metadata.Name] = map[string]bool{}
		for hook, h := range cc.Spec.Hooks {
			hooksOf[cc.Metadata.Name][hook] = true
			rec := post(t, router, h.Webhook.Path, "application/json", []byte(`{}`))
			if rec.Code == http.StatusNotFound || rec.Code == http.StatusMethodNotAllowed {
				t.Errorf("%s hook %s: POST %s = %d, not a route", cc.Metadata.Name, hook, h.Webhook.Path, rec.Code)
			}
		}
	}
	if !hooksOf["database-controller"]["customize"] {
		t.Errorf("database-controller has hooks %v; it needs customize, or no Database under Retain or Snapshot is ever finalized", hooksOf["database-controller"])
	}
}

// TestCapturedHeaders replays every header set Metacontroller was seen
// sending (testdata/metacontroller/request-headers.json), If-None-Match with
// a stale ETag included: each must get a 200 with a quoted ETag back.
func TestCapturedHeaders(t *testing.T) {
	var captured map[string][]struct {
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(readFile(t, "testdata/metacontroller/request-headers.json"), &captured); err != nil {
		t.Fatal(err)
	}
	router, _ := newTestRouter(t, 8<<20)
	body := readFile(t, "testdata/metacontroller/sync-01-no-children.json")
	seen := 0
	for run, requests := range captured {
		for i, r := range requests {
			req := httptest.NewRequest(http.MethodPost, "/hooks/myapp/sync", bytes.NewReader(body))
			for key, value := range r.Headers {
				if key != "Host" && key != "Content-Length" {
					req.Header.Set(key, value)
				}
			}
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, req)
			etag := rec.Header().Get("ETag")
			if rec.Code != 200 || !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) {
				t.Errorf("%s request %d (headers %v) = %d with ETag %q, want 200 and a quoted ETag", run, i, r.Headers, rec.Code, etag)
			}
			seen++
		}
	}
	if seen < 10 {
		t.Errorf("replayed %d captured header sets, want all 10", seen)
	}
}

// TestFailureLogNamesParent: a failed call logs one line naming the parent
// kind, the hook, the parent and the error, and never the request body.
func TestFailureLogNamesParent(t *testing.T) {
	var logs bytes.Buffer
	router := newRouter(routerConfig{
		maxBodyBytes: 8 << 20, build: "test", now: func() time.Time { return testNow },
		log:     slog.New(slog.NewJSONHandler(&logs, nil)),
		metrics: newMetrics(), parents: parentHooks(testDatabase(t)),
	})
	post(t, router, "/hooks/myapp/sync", "application/json", readFile(t, "../examples/requests/myapp-invalid.json"))
	line := logs.String()
	for _, want := range []string{
		`"msg":"hook failed"`, `"parent_kind":"MyApp"`, `"hook":"sync"`,
		`"parent":{"namespace":"apps","name":"demo","generation":1}`, `"code":422`, `spec.replicaCount`,
	} {
		if !strings.Contains(line, want) {
			t.Errorf("log %q lacks %s", line, want)
		}
	}
	if strings.Contains(line, "registry.example/demo") {
		t.Errorf("log line quotes the request body: %s", line)
	}
	logs.Reset()
	post(t, router, "/hooks/myapp/sync", "application/json", readFile(t, "../examples/requests/myapp-sync.json"))
	if logs.Len() != 0 {
		t.Errorf("a successful call at the info level logged: %s", logs.String())
	}
}

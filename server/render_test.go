package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// renderDocs runs the render command and splits its YAML stream.
func renderDocs(t *testing.T, args ...string) (docs []map[string]any, code int, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"render", "--now", "2026-11-30T05:00:00Z"}, args...), &out, &errOut)
	decoder := utilyaml.NewYAMLOrJSONDecoder(&out, 4096)
	for {
		var doc map[string]any
		if err := decoder.Decode(&doc); err != nil {
			break
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	return docs, code, errOut.String()
}

// httpAnswer posts a request file through the router and decodes the answer.
func httpAnswer(t *testing.T, route, requestFile string) map[string]any {
	t.Helper()
	router, _ := newTestRouter(t, 8<<20)
	rec := post(t, router, route, "application/json", readFile(t, requestFile))
	if rec.Code != 200 {
		t.Fatalf("POST %s = %d: %s", route, rec.Code, rec.Body)
	}
	var answer map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		t.Fatal(err)
	}
	return answer
}

// asAny round-trips v through JSON so YAML- and JSON-decoded values compare.
func asAny(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRenderRequestMatchesHTTP(t *testing.T) {
	cases := map[string]struct {
		reason, route, request string
	}{
		"CapturedSync":     {reason: "a captured sync request", route: "/hooks/myapp/sync", request: "testdata/metacontroller/sync-03-children-with-status.json"},
		"CapturedFinalize": {reason: "a captured finalize request", route: "/hooks/myapp/finalize", request: "testdata/metacontroller/finalize-01.json"},
		"ExampleSteady":    {reason: "the steady example", route: "/hooks/myapp/sync", request: "../examples/requests/myapp-sync-steady.json"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			docs, code, stderr := renderDocs(t, "--request", tc.request)
			if code != 0 {
				t.Fatalf("%s\nrender exited %d: %s", tc.reason, code, stderr)
			}
			want := httpAnswer(t, tc.route, tc.request)
			tail := docs[len(docs)-1]
			got := map[string]any{"children": docs[:len(docs)-1], "status": tail["status"]}
			for _, key := range []string{"resyncAfterSeconds", "finalized"} {
				if v, ok := tail[key]; ok {
					got[key] = v
				}
			}
			if diff := cmp.Diff(asAny(t, want), asAny(t, got)); diff != "" {
				t.Errorf("%s\nrender differs from the HTTP hook: -http +render:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRenderParentAndObserved(t *testing.T) {
	plain, code, stderr := renderDocs(t, "-f", "../examples/myapp.yaml")
	if code != 0 {
		t.Fatalf("render -f exited %d: %s", code, stderr)
	}
	// The example request carries the same spec as examples/myapp.yaml.
	want := httpAnswer(t, "/hooks/myapp/sync", "../examples/requests/myapp-sync.json")
	if diff := cmp.Diff(asAny(t, want["children"]), asAny(t, plain[:len(plain)-1])); diff != "" {
		t.Errorf("render -f children differ from the HTTP hook's for the same spec: -http +render:\n%s", diff)
	}
	if status := plain[len(plain)-1]["status"].(map[string]any); status["availableReplicas"] != float64(0) && status["availableReplicas"] != 0 {
		t.Errorf("nothing observed, yet availableReplicas = %v", status["availableReplicas"])
	}

	observed, code, stderr := renderDocs(t, "-f", "../examples/myapp.yaml", "--observed", "../examples/myapp-observed.yaml")
	if code != 0 {
		t.Fatalf("render --observed exited %d: %s", code, stderr)
	}
	status := asAny(t, observed[len(observed)-1]["status"]).(map[string]any)
	if status["availableReplicas"] != float64(3) || !strings.Contains(mustJSON(t, status["conditions"]), `"reason":"AllReplicasAvailable"`) {
		t.Errorf("render --observed status = %v, want 3 available and Ready", status)
	}

	finalizing, code, _ := renderDocs(t, "-f", "../examples/myapp.yaml", "--observed", "../examples/myapp-observed.yaml", "--finalizing")
	tail := finalizing[len(finalizing)-1]
	if code != 0 || tail["resyncAfterSeconds"] == nil || tail["finalized"] != nil {
		t.Errorf("render --finalizing with running pods = exit %d, tail %v; want a wait (resyncAfterSeconds) and no finalized", code, tail)
	}
}

func TestRenderErrors(t *testing.T) {
	cases := map[string]struct {
		reason   string
		args     []string
		wantCode int
		wantErr  string
	}{
		"NoInput":        {reason: "nothing to render", args: nil, wantCode: 2, wantErr: "-f"},
		"RequestAndFile": {reason: "--request holds the parent already", args: []string{"--request", "x.json", "-f", "y.yaml"}, wantCode: 2, wantErr: "--request"},
		"MissingFile":    {reason: "a file that is not there", args: []string{"-f", "does-not-exist.yaml"}, wantCode: 1, wantErr: "does-not-exist.yaml"},
		"InvalidParent":  {reason: "the same 422 the HTTP hook gives", args: []string{"--request", "../examples/requests/myapp-invalid.json"}, wantCode: 1, wantErr: "spec.replicaCount"},
		"UnknownKind":    {reason: "no hook for the kind", args: []string{"-f", "testdata/render/unknown-kind.yaml"}, wantCode: 1, wantErr: "no hook serves"},
		"BadNow":         {reason: "--now must be RFC3339", args: []string{"-f", "../examples/myapp.yaml", "--now", "yesterday"}, wantCode: 2, wantErr: "--now"},
		"ObservedNoName": {reason: "observed objects need a name", args: []string{"-f", "../examples/myapp.yaml", "--observed", "testdata/render/observed-no-name.yaml"}, wantCode: 1, wantErr: "metadata.name"},
		"UnknownField": {reason: "a field the kind does not have is refused, as kubectl apply's strict field validation refuses it (issue 31: render took spec.sise silently)",
			args: []string{"-f", "testdata/render/unknown-field.yaml"}, wantCode: 1, wantErr: `unknown field "spec.sise"`},
		"UnknownMetadataField": {reason: "and so in metadata",
			args: []string{"-f", "testdata/render/unknown-metadata-field.yaml"}, wantCode: 1, wantErr: `unknown field "metadata.lables"`},
		"RepeatedKey": {reason: "a key given twice in the manifest is refused",
			args: []string{"-f", "testdata/render/repeated-key.yaml"}, wantCode: 1, wantErr: `key "replicaCount" already set`},
		"OtherNamespace": {reason: "a manifest's namespace other than -n's is refused, as kubectl refuses it",
			args: []string{"-f", "../examples/myapp.yaml", "-n", "shop"}, wantCode: 1, wantErr: `the namespace of the parent ("apps") does not match the namespace given with -n ("shop")`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, code, stderr := renderDocs(t, tc.args...)
			if code != tc.wantCode || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("%s\nrender %v = exit %d, stderr %q; want exit %d mentioning %q", tc.reason, tc.args, code, stderr, tc.wantCode, tc.wantErr)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestRenderDatabaseRelatesPVCs: for a parent with a customize hook, render
// plays Metacontroller's customize manager: observed PVCs the rules select go
// to related. Rendered from the parent and a List of its observed objects, a
// Retain deletion with owned PVCs answers as the HTTP hook does for the
// example request; without them it is finalized.
func TestRenderDatabaseRelatesPVCs(t *testing.T) {
	keyFile := t.TempDir() + "/key"
	if err := os.WriteFile(keyFile, []byte(testDatabaseKey), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-f", "testdata/render/database-deleting.json", "--finalizing", "--credentials-key-file", keyFile}
	docs, code, stderr := renderDocs(t, append(args, "--observed", "testdata/render/database-observed-owned-pvcs.json")...)
	if code != 0 {
		t.Fatalf("render exited %d: %s", code, stderr)
	}
	want := httpAnswer(t, "/hooks/database/finalize", "../examples/requests/database-finalize-retain-owned.json")
	tail := docs[len(docs)-1]
	got := map[string]any{"children": docs[:len(docs)-1], "status": tail["status"], "resyncAfterSeconds": tail["resyncAfterSeconds"]}
	if diff := cmp.Diff(asAny(t, want), asAny(t, got)); diff != "" {
		t.Errorf("render differs from the HTTP hook: -http +render:\n%s", diff)
	}
	if !strings.Contains(mustJSON(t, tail["status"]), "still owned by StatefulSet orders") {
		t.Errorf("render status %v, want the owned PVCs named", tail["status"])
	}
}

// TestRenderDefaultsNamespace: a parent manifest without a namespace is
// rendered in "default", or in -n's, as kubectl apply would create it
// (issue 31: render needed a namespace the docs' first example lacked);
// -n that names the manifest's own namespace changes nothing.
func TestRenderDefaultsNamespace(t *testing.T) {
	cases := []struct {
		name, reason string
		args         []string
		want         string
	}{
		{"Default", "no -n: the default namespace", []string{"-f", "testdata/render/no-namespace.yaml"}, "default"},
		{"Given", "-n names it", []string{"-f", "testdata/render/no-namespace.yaml", "-n", "shop"}, "shop"},
		{"LongFlag", "--namespace is -n", []string{"-f", "testdata/render/no-namespace.yaml", "--namespace", "shop"}, "shop"},
		{"Same", "-n of the manifest's own namespace", []string{"-f", "../examples/myapp.yaml", "-n", "apps"}, "apps"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs, code, stderr := renderDocs(t, tc.args...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", tc.reason, code, stderr)
			}
			children := 0
			for _, doc := range docs {
				metadata, _ := doc["metadata"].(map[string]any)
				if metadata == nil {
					continue // the status document
				}
				children++
				if got := metadata["namespace"]; got != tc.want {
					t.Errorf("%s: %v %v has namespace %v, want %q", tc.reason, doc["kind"], metadata["name"], got, tc.want)
				}
			}
			if children == 0 {
				t.Errorf("%s: no child rendered", tc.reason)
			}
		})
	}
}

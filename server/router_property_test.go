package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Property tests: for random valid parents (a fixed seed, so a failure
// repeats) the answer is 200 and the same twice, every child is in the
// parent's namespace and of a kind deploy/compositecontroller.yaml declares
// for that parent, and feeding the children back as the observed state (as
// Metacontroller does once it created them) gives the same children.

const propertyRuns = 150

func TestPropertyMyApp(t *testing.T) {
	checkProperties(t, "myapp", "myapp-controller", func(r *rand.Rand) map[string]any {
		spec := map[string]any{"image": pick(r, "nginx:1.27", "registry.example/app@sha256:"+strings.Repeat("a", 64), "app:v2")}
		maybe(r, spec, "replicaCount", r.IntN(6))
		maybe(r, spec, "port", 1+r.IntN(65535))
		maybe(r, spec, "highAvailability", r.IntN(2) == 0)
		maybe(r, spec, "config", map[string]any{"app.conf": strings.Repeat("k=v\n", r.IntN(20)), "LEVEL": pick(r, "debug", "info")})
		maybe(r, spec, "resources", map[string]any{"requests": map[string]any{"cpu": pick(r, "100m", "250m"), "memory": "64Mi"}, "limits": map[string]any{"cpu": "1", "memory": pick(r, "128Mi", "1Gi")}})
		maybe(r, spec, "storage", map[string]any{"size": pick(r, "1Gi", "10Gi", "500Mi"), "storageClassName": pick(r, "standard", "fast.ssd")})
		if r.IntN(2) == 0 {
			spec["backupSchedule"] = pick(r, "0 2 * * *", "*/15 * * * *", "30 1 * * 0")
			maybe(r, spec, "backup", map[string]any{"command": []string{"/bin/backup", "--all"}})
		}
		return spec
	})
}

func TestPropertyDatabase(t *testing.T) {
	checkProperties(t, "database", "database-controller", func(r *rand.Rand) map[string]any {
		size := pick(r, "small", "medium", "large")
		spec := map[string]any{"size": size, "image": pick(r, "postgres:17", "postgres:16.4")}
		if r.IntN(3) == 0 {
			spec["storage"] = map[string]string{"small": "8Gi", "medium": "32Gi", "large": "200Gi"}[size]
		}
		maybe(r, spec, "storageClassName", pick(r, "standard", "fast.ssd"))
		maybe(r, spec, "backup", map[string]any{"schedule": pick(r, "0 3 * * *", "15 */6 * * *"), "retention": 1 + r.IntN(30)})
		maybe(r, spec, "deletionPolicy", pick(r, "Retain", "Delete", "Snapshot"))
		maybe(r, spec, "hibernate", r.IntN(4) == 0)
		return spec
	})
}

func pick(r *rand.Rand, choices ...string) string { return choices[r.IntN(len(choices))] }

func maybe(r *rand.Rand, spec map[string]any, key string, value any) {
	if r.IntN(2) == 0 {
		spec[key] = value
	}
}

func checkProperties(t *testing.T, route, controller string, randomSpec func(*rand.Rand) map[string]any) {
	router, _ := newTestRouter(t, 8<<20)
	kinds := declaredKinds(t, controller)
	apiVersion, kind := "example.com/v1alpha1", "MyApp"
	if route == "database" {
		apiVersion, kind = "example.com/v1", "Database"
	}
	r := rand.New(rand.NewPCG(8, 2026))
	for i := range propertyRuns {
		namespace := fmt.Sprintf("ns-%d", r.IntN(5))
		parent := map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": fmt.Sprintf("p%d-x%s", i, strings.Repeat("x", r.IntN(30))), "namespace": namespace, "uid": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "generation": 1 + r.IntN(9)},
			"spec":     randomSpec(r),
		}
		request := map[string]any{"parent": parent, "children": map[string]any{}, "finalizing": false}
		first := answer(t, router, route, request)
		if again := answer(t, router, route, request); canonical(t, again) != canonical(t, first) {
			t.Fatalf("run %d: two answers to the same request differ", i)
		}
		observed := map[string]map[string]json.RawMessage{}
		for _, child := range first.Children {
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(child, &meta); err != nil {
				t.Fatal(err)
			}
			if meta.Metadata.Namespace != "" && meta.Metadata.Namespace != namespace {
				t.Errorf("run %d: %s %s is in namespace %q, not the parent's %q", i, meta.Kind, meta.Metadata.Name, meta.Metadata.Namespace, namespace)
			}
			if !kinds[meta.APIVersion+" "+meta.Kind] {
				t.Errorf("run %d: %s %s is not a child kind %s declares (%v)", i, meta.APIVersion, meta.Kind, controller, kinds)
			}
			typeKey := meta.Kind + "." + meta.APIVersion
			if observed[typeKey] == nil {
				observed[typeKey] = map[string]json.RawMessage{}
			}
			observed[typeKey][meta.Metadata.Name] = child
		}
		request["children"] = observed
		fed := answer(t, router, route, request)
		if got, want := canonicalChildren(t, fed), canonicalChildren(t, first); got != want {
			t.Errorf("run %d: children differ once the first answer is observed\nspec: %v\nfirst: %s\nthen:  %s", i, parent["spec"], want, got)
		}
	}
}

// hookAnswer is a 200 answer: status and children as raw JSON.
type hookAnswer struct {
	Status   json.RawMessage   `json:"status"`
	Children []json.RawMessage `json:"children"`
}

func answer(t *testing.T, router http.Handler, route string, request map[string]any) hookAnswer {
	t.Helper()
	body, err := json.Marshal(request)
	if err != nil {
		t.Fatal(err)
	}
	rec := post(t, router, "/hooks/"+route+"/sync", "application/json", body)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST /hooks/%s/sync of a valid parent = %d: %s\nrequest: %s", route, rec.Code, rec.Body, body)
	}
	var a hookAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func canonical(t *testing.T, a hookAnswer) string {
	t.Helper()
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return canonicalJSON(t, raw)
}

// canonicalChildren is the children, each in canonical form, sorted.
func canonicalChildren(t *testing.T, a hookAnswer) string {
	t.Helper()
	children := make([]string, 0, len(a.Children))
	for _, c := range a.Children {
		children = append(children, canonicalJSON(t, c))
	}
	sort.Strings(children)
	return strings.Join(children, "\n")
}

// declaredKinds are "apiVersion Kind" of the childResources of controller in
// deploy/compositecontroller.yaml (resources are the kinds' plurals).
func declaredKinds(t *testing.T, controller string) map[string]bool {
	t.Helper()
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(readFile(t, "../deploy/compositecontroller.yaml")), 4096)
	plurals := map[string]string{"statefulsets": "StatefulSet", "services": "Service", "configmaps": "ConfigMap", "secrets": "Secret",
		"poddisruptionbudgets": "PodDisruptionBudget", "cronjobs": "CronJob", "jobs": "Job", "persistentvolumeclaims": "PersistentVolumeClaim",
		"serviceaccounts": "ServiceAccount", "roles": "Role", "rolebindings": "RoleBinding", "events": "Event"}
	for {
		var cc struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				ChildResources []struct {
					APIVersion string `json:"apiVersion"`
					Resource   string `json:"resource"`
				} `json:"childResources"`
			} `json:"spec"`
		}
		if err := decoder.Decode(&cc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if cc.Metadata.Name != controller {
			continue
		}
		kinds := map[string]bool{}
		for _, c := range cc.Spec.ChildResources {
			kind, ok := plurals[c.Resource]
			if !ok {
				t.Fatalf("%s declares %s: add its kind here", controller, c.Resource)
			}
			kinds[c.APIVersion+" "+kind] = true
		}
		return kinds
	}
	t.Fatalf("no CompositeController %s in deploy/compositecontroller.yaml", controller)
	return nil
}

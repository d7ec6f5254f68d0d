package composite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	dbv1 "metahooks/api/v1"
	"metahooks/api/v1alpha1"
)

// childTypes are the Go types the hooks decode observed objects into, by
// their type key's kind.
var childTypes = map[string]reflect.Type{
	"StatefulSet":           reflect.TypeFor[appsv1.StatefulSet](),
	"Service":               reflect.TypeFor[corev1.Service](),
	"ConfigMap":             reflect.TypeFor[corev1.ConfigMap](),
	"Secret":                reflect.TypeFor[corev1.Secret](),
	"Pod":                   reflect.TypeFor[corev1.Pod](),
	"PersistentVolumeClaim": reflect.TypeFor[corev1.PersistentVolumeClaim](),
	"ServiceAccount":        reflect.TypeFor[corev1.ServiceAccount](),
	"PodDisruptionBudget":   reflect.TypeFor[policyv1.PodDisruptionBudget](),
	"CronJob":               reflect.TypeFor[batchv1.CronJob](),
	"Job":                   reflect.TypeFor[batchv1.Job](),
	"Role":                  reflect.TypeFor[rbacv1.Role](),
	"RoleBinding":           reflect.TypeFor[rbacv1.RoleBinding](),
}

// TestDecodeCostOfCapturedRequests holds the budget against every captured
// request of the repository, compacted as Metacontroller sends it and
// charged as the scan charges it, every object decoded (the parent by its
// kind, each child into its type): each must cost at most costPerByte
// times its size, slack left out, or a large request of such objects
// would be refused; and the estimate of each object must be at least what
// decoding it allocated less a copy of its text, and within 1.25 of it.
func TestDecodeCostOfCapturedRequests(t *testing.T) {
	var files []string
	for _, pattern := range []string{
		"../database/testdata/*/request.json",
		"../../server/testdata/metacontroller/sync-*.json",
		"../../server/testdata/metacontroller/finalize-*.json",
	} {
		found, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d captured requests, want the repository's 20 or more", len(files))
	}
	lowest, highest, worst := 1e9, 0.0, 0.0
	for _, file := range files {
		pretty, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer // as Metacontroller sends it
		if err := json.Compact(&compact, pretty); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		body := compact.Bytes()
		var req Request
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// As the scan charges: each child, then every object as the hooks
		// decode it (the parent by its kind, each child by its type).
		budget := newCostBudget(body)
		parentType := reflect.TypeFor[dbv1.Database]()
		if strings.Contains(string(req.Parent), `"kind":"MyApp"`) {
			parentType = reflect.TypeFor[v1alpha1.MyApp]()
		}
		objects := []struct {
			raw []byte
			t   reflect.Type
		}{{req.Parent, parentType}}
		for _, section := range []ChildMap{req.Children, req.Related} {
			for _, byName := range section {
				budget.take(childCost * int64(len(byName)))
			}
		}
		for _, section := range []ChildMap{req.Children, req.Related} {
			for key, byName := range section {
				typ, ok := childTypes[strings.SplitN(key, ".", 2)[0]]
				if !ok {
					typ = reflect.TypeFor[map[string]any]()
				}
				for _, raw := range byName {
					objects = append(objects, struct {
						raw []byte
						t   reflect.Type
					}{raw, typ})
				}
			}
		}
		for _, o := range objects {
			tree := pruneTreeOf(o.t, o.t != parentType) // the parent is no observed object
			estimate, err := budget.charge(o.raw, o.t, tree)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			// The estimate leaves out the decoded strings, which the
			// bound of TestDecodeCostBoundsAllocation (server) counts
			// as a copy of the body.
			allocated := decodeAllocation(t, o.raw, o.t, tree)
			if bound := estimate + int64(len(o.raw)); int64(allocated) > bound || float64(allocated) > 1.25*float64(estimate) {
				t.Errorf("%s: a %s of %d bytes allocated %d decoding, more than its estimate of %d and a copy of its text, or 1.25 x the estimate",
					file, o.t, len(o.raw), allocated, estimate)
			}
			worst = max(worst, float64(allocated)/float64(estimate))
		}
		ratio := float64(budget.limit-budget.left) / float64(len(body))
		lowest, highest = min(lowest, ratio), max(highest, ratio)
		// Real requests fit without the slack: a large one of the same
		// objects is never refused.
		if used := budget.limit - budget.left; used > costPerByte*int64(len(body)) {
			t.Errorf("%s: decoding it costs %d, more than %d x its %d bytes: a large request of such objects would be refused",
				file, used, costPerByte, len(body))
		}
	}
	t.Logf("%d captured requests estimate at %.1f to %.1f times their size (budget %d x + %d); an object allocated at most %.2f x its estimate",
		len(files), lowest, highest, costPerByte, costSlack, worst)
}

// decodeAllocation is what decoding raw into a new t, cut as tree says,
// allocates, the least
// of three tries (a collection may run between the readings).
func decodeAllocation(t *testing.T, raw []byte, typ reflect.Type, tree *pruneNode) uint64 {
	t.Helper()
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		into := reflect.New(typ).Interface()
		if err := decodeTree(raw, into, tree, newCostBudget(raw), unpaid); err != nil {
			t.Fatalf("decoding a %s: %v", typ, err)
		}
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

package composite

import (
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
// request of the repository, decoded whole (the parent generically, each
// child into its type): each must cost well under its budget, or a real
// request could be refused, and the estimate of each decoded object must
// be at least what decoding it allocated, or the bound would not hold.
func TestDecodeCostOfCapturedRequests(t *testing.T) {
	var files []string
	for _, pattern := range []string{
		"../database/testdata/*/request.json",
		"../myapp/testdata/*/request.json",
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
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var req Request
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		budget := newCostBudget(len(body))
		if _, err := budget.charge(body, reflect.TypeFor[Request](), nil); err != nil {
			t.Fatalf("%s: the request itself: %v", file, err)
		}
		objects := []struct {
			raw []byte
			t   reflect.Type
		}{{req.Parent, reflect.TypeFor[map[string]any]()}}
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
			estimate, err := budget.charge(o.raw, o.t, pruneTreeOf(o.t, true))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			// The estimate leaves out the decoded strings, which the
			// bound of TestDecodeCostBoundsAllocation (server) counts
			// as a copy of the body.
			allocated := decodeAllocation(t, o.raw, o.t)
			if bound := estimate + int64(len(o.raw)); int64(allocated) > bound {
				t.Errorf("%s: a %s of %d bytes allocated %d decoding, more than its estimate of %d and a copy of its text",
					file, o.t, len(o.raw), allocated, estimate)
			}
			worst = max(worst, float64(allocated)/float64(estimate))
		}
		ratio := float64(budget.limit-budget.left) / float64(len(body))
		lowest, highest = min(lowest, ratio), max(highest, ratio)
		if used := budget.limit - budget.left; used > budget.limit/2 {
			t.Errorf("%s: decoding it costs %d of its budget of %d: a real request would come near a refusal",
				file, used, budget.limit)
		}
	}
	t.Logf("%d captured requests estimate at %.1f to %.1f times their size (budget %d x + %d); an object allocated at most %.2f x its estimate",
		len(files), lowest, highest, costPerByte, costSlack, worst)
}

// decodeAllocation is what decoding raw into a new t allocates, the least
// of three tries (a collection may run between the readings).
func decodeAllocation(t *testing.T, raw []byte, typ reflect.Type) uint64 {
	t.Helper()
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		into := reflect.New(typ).Interface()
		if err := decodeTree(raw, into, pruneTreeOf(typ, true), newCostBudget(len(raw))); err != nil {
			t.Fatalf("decoding a %s: %v", typ, err)
		}
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

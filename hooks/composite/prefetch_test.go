package composite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"metahooks/api/v1alpha1"
)

var (
	statefulSetKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	cronJobKind     = batchv1.SchemeGroupVersion.WithKind("CronJob")
	testPrefetch    = NewPrefetch[v1alpha1.MyApp](map[schema.GroupVersionKind]any{statefulSetKind: appsv1.StatefulSet{}, cronJobKind: batchv1.CronJob{}})
)

// readAll decodes the request's parent and every observed child of the
// prefetched kinds, twice each, and renders what each read gave (value or
// error) for comparison.
func readAll(t *testing.T, req *Request) []string {
	t.Helper()
	var out []string
	for range 2 { // the second read must give the same as the first
		var parent v1alpha1.MyApp
		err := req.DecodeParent(&parent, myAppKind)
		out = append(out, fmt.Sprintf("parent: %s, %v", mustMarshal(t, parent), err))
		for _, gvk := range []schema.GroupVersionKind{statefulSetKind, cronJobKind} {
			for _, key := range slices.Sorted(maps.Keys(req.Children[TypeKey(gvk)])) {
				var obj any = &appsv1.StatefulSet{}
				if gvk == cronJobKind {
					obj = &batchv1.CronJob{}
				}
				found, err := req.Observed(gvk, "", key, obj)
				out = append(out, fmt.Sprintf("%s %s: %v %s, %v", TypeKey(gvk), key, found, mustMarshal(t, obj), err))
			}
		}
	}
	return out
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// checkPrefetchAgrees: a request decoded with a Prefetch reads, parent and
// children, exactly as one decoded without; it reports whether anything was
// prefetched.
func checkPrefetchAgrees(t *testing.T, name string, body []byte) bool {
	plain, plainErr := DecodeRequest(body)
	pre, preErr := DecodeRequestPrefetching(body, testPrefetch)
	if diff := cmp.Diff(fmt.Sprint(plainErr), fmt.Sprint(preErr)); diff != "" {
		t.Fatalf("%s: error -without +with Prefetch:\n%s", name, diff)
	}
	if plainErr != nil {
		return false
	}
	if diff := cmp.Diff(plain, pre, ignorePrefetched); diff != "" {
		t.Fatalf("%s: Request -without +with Prefetch:\n%s", name, diff)
	}
	prefetchedAny := len(pre.prefetched) > 0
	if diff := cmp.Diff(readAll(t, plain), readAll(t, pre)); diff != "" {
		t.Fatalf("%s: what the hook reads -without +with Prefetch:\n%s", name, diff)
	}
	if len(pre.prefetched) != 0 {
		t.Errorf("%s: %d prefetched values never taken by the reads of their objects", name, len(pre.prefetched))
	}
	return prefetchedAny
}

func TestPrefetchAgreesWithLookup(t *testing.T) {
	prefetched := 0
	for name, body := range requestFiles(t) {
		if checkPrefetchAgrees(t, name, body) {
			prefetched++
		}
	}
	if prefetched == 0 {
		t.Error("no request file had anything prefetched: the test compares nothing")
	}
	edges := map[string]struct {
		reason, body string
		prefetches   bool
	}{
		"Prefetched": {reason: "parent and StatefulSet decoded in the scan", prefetches: true,
			body: `{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"}},"children":{"StatefulSet.apps/v1":{"a": {"metadata":{"name":"a"},"spec":{"replicas":2}}}}}`},
		"DuplicateInChild": {reason: "a repeated name takes the slow path, and the read names it; the parent the scan decoded before is handed on", prefetches: true,
			body: `{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"}},"children":{"StatefulSet.apps/v1":{"a":{"metadata":{"name":"a"},"spec":{"replicas":2,"replicas":3}}}}}`},
		"WrongTypeInChild": {reason: "a child that does not decode takes the slow path, and the read names the field; the parent the scan decoded before is handed on", prefetches: true,
			body: `{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"}},"children":{"StatefulSet.apps/v1":{"a":{"metadata":{"name":"a"},"spec":{"replicas":"2"}}}}}`},
		"WrongTypeInParent": {reason: "a parent that does not decode takes the slow path, and DecodeParent names the field",
			body: `{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"},"spec":{"replicaCount":"x"}}}`},
		"OtherKind": {reason: "a parent of another kind decodes and is refused by its kind", prefetches: true,
			body: `{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a"}}}`},
		"UnnamedChild": {reason: "a child without a name takes the slow path's error",
			body: `{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"}},"children":{"StatefulSet.apps/v1":{"a":{"metadata":{}}}}}`},
		"ParentNotObject": {reason: "a parent that is not an object is refused as without a Prefetch",
			body: `{"parent":[1]}`},
		"WhiteSpace": {reason: "white space around the values is not part of them", prefetches: true,
			body: "{ \"parent\" :\n {\"apiVersion\":\"example.com/v1alpha1\",\"kind\":\"MyApp\",\"metadata\":{\"name\":\"a\"}} , \"children\" : { \"StatefulSet.apps/v1\" : { \"a\" :\t{\"metadata\":{\"name\":\"a\"}} } } }"},
	}
	for name, tc := range edges {
		if got := checkPrefetchAgrees(t, name, []byte(tc.body)); got != tc.prefetches {
			t.Errorf("%s (%s): prefetched anything = %v, want %v", name, tc.reason, got, tc.prefetches)
		}
	}
}

func TestPrefetchKeepsRawChildren(t *testing.T) {
	body := []byte(`{"parent":{"kind":"MyApp","metadata":{"name":"a"}},"children":{"StatefulSet.apps/v1":{"a": {"metadata":{"name":"a"}} }}}`)
	req, err := DecodeRequestPrefetching(body, testPrefetch)
	if err != nil {
		t.Fatal(err)
	}
	raw := req.Children["StatefulSet.apps/v1"]["a"]
	if want := []byte(`{"metadata":{"name":"a"}}`); !bytes.Equal(raw, want) {
		t.Errorf("raw child = %s, want %s", raw, want)
	}
	if want := []byte(`{"kind":"MyApp","metadata":{"name":"a"}}`); !bytes.Equal(req.Parent, want) {
		t.Errorf("raw parent = %s, want %s", req.Parent, want)
	}
}

// FuzzPrefetch: whatever the body, a Prefetch changes nothing a hook reads.
func FuzzPrefetch(f *testing.F) {
	for _, body := range requestFiles(f) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkPrefetchAgrees(t, "fuzzed", body)
	})
}

// TestObservedAsHandsOutThePrefetchedValue: ObservedAs gives the value the
// scan decoded itself, once; a second call decodes the child again, to the
// same value in a new object, as ObservedAs without a Prefetch does.
func TestObservedAsHandsOutThePrefetchedValue(t *testing.T) {
	body := []byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"}},` +
		`"children":{"StatefulSet.apps/v1":{"ns/a":{"metadata":{"name":"a","namespace":"ns"},"spec":{"replicas":2}}}}}`)
	req, err := DecodeRequestPrefetching(body, testPrefetch)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.prefetched) != 2 {
		t.Fatalf("prefetched %d values, want the parent and the StatefulSet", len(req.prefetched))
	}
	raw := req.Children[TypeKey(statefulSetKind)]["ns/a"]
	decoded := req.prefetched[&raw[0]]
	first, err := ObservedAs[appsv1.StatefulSet](req, statefulSetKind, "ns", "a")
	if err != nil || first == nil {
		t.Fatalf("ObservedAs = %v, %v; want the StatefulSet", first, err)
	}
	if any(first) != decoded {
		t.Errorf("ObservedAs gave %p, not the value the scan decoded (%p): a copy", first, decoded)
	}
	if len(req.prefetched) != 1 {
		t.Errorf("after ObservedAs %d values are kept, want only the parent's: the StatefulSet is handed out", len(req.prefetched))
	}
	second, err := ObservedAs[appsv1.StatefulSet](req, statefulSetKind, "ns", "a")
	if err != nil || second == nil || second == first {
		t.Fatalf("ObservedAs again = %p, %v; want a new object (first %p)", second, err, first)
	}
	plain, err := DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ObservedAs[appsv1.StatefulSet](plain, statefulSetKind, "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []*appsv1.StatefulSet{first, second} {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ObservedAs -without +with Prefetch:\n%s", diff)
		}
	}
}

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scaleMyApps is how many MyApps TestMyAppsAtScale runs: 300 (the figure
// the issue measured beside the project), or $METAHOOKS_E2E_MYAPPS.
func scaleMyApps(t *testing.T) int {
	raw := os.Getenv("METAHOOKS_E2E_MYAPPS")
	if raw == "" {
		return 300
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		t.Fatalf("METAHOOKS_E2E_MYAPPS=%q: want a positive number", raw)
	}
	return n
}

// TestMyAppsAtScale creates many MyApps of 2 replicas each at once and plays
// Metacontroller's loop over all of them, one sync after the other as one
// worker would, until every one says availableReplicas 2 and Ready=True with
// its pods made by the StatefulSet controller, scheduled, and run by kwok.
// The figure is the time that took; no time is asserted.
func TestMyAppsAtScale(t *testing.T) {
	cl := useCluster(t)
	c := myAppController
	n := scaleMyApps(t)
	ns := createNamespace(t, "scale-myapps")
	t.Cleanup(func() { releaseParents(t, c, ns) })

	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("app-%03d", i)
		createParent(t, c, ns, fmt.Sprintf(`apiVersion: example.com/v1alpha1
kind: MyApp
metadata: {name: %s}
spec:
  replicaCount: 2
  image: registry.example/app:1.0
  storage: {size: 1Gi}
`, names[i]))
	}

	start := time.Now()
	pending := names
	syncs, rounds := 0, 0
	for len(pending) > 0 {
		if time.Since(start) > 10*time.Minute {
			t.Fatalf("%d of %d MyApps not converged after 10 minutes (%d syncs), e.g. %s", len(pending), n, syncs, pending[0])
		}
		rounds++
		var next []string
		for _, name := range pending {
			answer, _ := c.sync(t, ns, name, false)
			syncs++
			available, _, _ := unstructured.NestedInt64(answer.Status, "availableReplicas")
			if available != 2 || conditionStatus(answer.Status, "Ready") != "True" {
				next = append(next, name)
			}
		}
		pending = next
		if len(pending) > 0 {
			time.Sleep(loopInterval)
		}
	}
	took := time.Since(start)

	pods := &corev1.PodList{}
	if err := k8s.List(testContext(t), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	ready := 0
	for i := range pods.Items {
		if podReady(&pods.Items[i]) && pods.Items[i].Spec.NodeName != "" {
			ready++
		}
	}
	if ready != 2*n {
		t.Fatalf("%d pods Ready on a node, want %d (2 per MyApp)", ready, 2*n)
	}
	figure(t, cl, c, "%d MyApps of 2 replicas (%d pods Ready) converged in %s: %d syncs in %d rounds", n, ready, seconds(took), syncs, rounds)
}

// releaseParents lets the namespace go without finalize calls: the
// finalizers come off every parent, then the namespace is deleted and the
// garbage collector takes the children. It does not wait.
func releaseParents(t *testing.T, c controller, namespace string) {
	parents := &unstructured.UnstructuredList{}
	parents.SetGroupVersionKind(c.parent.GroupVersion().WithKind(c.parent.Kind + "List"))
	if err := k8s.List(testContext(t), parents, client.InNamespace(namespace)); err != nil {
		t.Errorf("cannot list the %ss of %s: %v", c.parent.Kind, namespace, err)
		return
	}
	for i := range parents.Items {
		parent := &parents.Items[i]
		parent.SetFinalizers(nil)
		if err := k8s.Update(testContext(t), parent); err != nil {
			t.Errorf("cannot remove the finalizer of %s: %v", parent.GetName(), err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := k8s.Delete(testContext(t), ns); err != nil {
		t.Errorf("cannot delete namespace %s: %v", namespace, err)
	}
}

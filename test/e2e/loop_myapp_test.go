package e2e

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const myAppConfigHashKey = "example.com/config-hash"

// TestMyAppFullLoop is a MyApp's life on a cluster whose StatefulSet
// controller makes the pods, kwok runs them and the garbage collector cleans
// up; the test only plays Metacontroller. Once per hook version and apply
// strategy.
func TestMyAppFullLoop(t *testing.T) {
	cases := map[string]struct {
		reason string
		c      controller
	}{
		"V1ThreeWayMerge": {
			reason: "Metacontroller's defaults: hook version v1, dynamic apply",
			c:      myAppController,
		},
		"V2ServerSideApply": {
			reason: "hook version v2 (namespace/name keys) with --apply-strategy=server-side-apply",
			c:      withMode(myAppController, "v2", true),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl := useCluster(t)
			runMyAppLoop(t, cl, tc.c, "loop-myapp-"+strings.ToLower(name))
		})
	}
}

// withMode is the controller with another hook version and apply strategy.
func withMode(c controller, hookVersion string, serverSideApply bool) controller {
	c.hookVersion, c.serverSideApply = hookVersion, serverSideApply
	return c
}

func runMyAppLoop(t *testing.T, cl *cluster, c controller, namespace string) {
	ns := createNamespace(t, namespace)
	const name = "shop"
	createParent(t, c, ns, `apiVersion: example.com/v1alpha1
kind: MyApp
metadata: {name: shop}
spec:
  replicaCount: 3
  image: registry.example/shop:1.0
  highAvailability: true
  storage: {size: 1Gi}
  config: {LOG_LEVEL: info}
`)
	available := func(n int64) func(loopState) bool {
		return func(s loopState) bool {
			got, _, _ := unstructured.NestedInt64(s.answer.Status, "availableReplicas")
			return got == n && conditionStatus(s.answer.Status, "Ready") == "True" && conditionStatus(s.answer.Status, "Progressing") == "False"
		}
	}

	// 3 pods Ready by kwok; the StatefulSet status from its controller; the
	// MyApp's from the hook.
	took := c.loop(t, ns, name, "3 replicas available", 2*time.Minute, available(3))
	selector := mustSelector(t, c, ns, name)
	assertPodsReady(t, ns, selector, 3)
	if sts := getStatefulSet(t, ns, name); sts.Status.ReadyReplicas != 3 || sts.Status.AvailableReplicas != 3 {
		t.Fatalf("StatefulSet status %+v, want 3 ready and available (from the controller)", sts.Status)
	}
	figure(t, cl, c, "MyApp create -> 3 pods Ready, availableReplicas 3, Ready=True in %s", seconds(took))

	// Settled: no writes for 20 s with the controllers running.
	c.assertNoHotLoop(t, ns, name, 20*time.Second, selector)
	figure(t, cl, c, "MyApp settled: no write for 20 s")

	// A deleted child comes back.
	service := &corev1.Service{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, service); err != nil {
		t.Fatalf("cannot read the MyApp's Service %s: %v", name, err)
	}
	if err := k8s.Delete(testContext(t), service); err != nil {
		t.Fatal(err)
	}
	took = c.loop(t, ns, name, "deleted Service recreated", time.Minute, func(loopState) bool {
		again := &corev1.Service{}
		return k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, again) == nil && again.UID != service.UID
	})
	figure(t, cl, c, "deleted Service recreated in %s", seconds(took))

	// Scale to 5.
	patchSpec(t, c, ns, name, map[string]any{"replicaCount": int64(5)})
	took = c.loop(t, ns, name, "5 replicas available", 2*time.Minute, available(5))
	assertPodsReady(t, ns, selector, 5)
	figure(t, cl, c, "scale 3 -> 5: availableReplicas 5, Ready=True in %s", seconds(took))

	// Image change: every pod replaced, highest ordinal first, Progressing
	// True while it rolls, then False.
	const image = "registry.example/shop:2.0"
	patchSpec(t, c, ns, name, map[string]any{"image": image})
	took = watchRoll(t, cl, c, ns, name, selector, "image change", func(pod corev1.Pod) bool {
		return pod.Spec.Containers[0].Image == image
	})
	figure(t, cl, c, "image change: 5 pods replaced in order, Progressing True then False, in %s", seconds(took))

	// Config change: the pods roll through the hash annotation.
	oldHash := getStatefulSet(t, ns, name).Spec.Template.Annotations[myAppConfigHashKey]
	patchSpec(t, c, ns, name, map[string]any{"config": map[string]any{"LOG_LEVEL": "debug"}})
	took = watchRoll(t, cl, c, ns, name, selector, "config change", func(pod corev1.Pod) bool {
		hash := pod.Annotations[myAppConfigHashKey]
		return hash != "" && hash != oldHash
	})
	figure(t, cl, c, "config change: 5 pods rolled (config hash annotation) in %s", seconds(took))

	// Delete: finalize scales to 0 and answers finalized only once the
	// controller has removed the pods.
	if err := k8s.Delete(testContext(t), c.get(t, ns, name)); err != nil {
		t.Fatal(err)
	}
	first, finalized := true, time.Time{}
	took = c.loop(t, ns, name, "MyApp finalized", 2*time.Minute, func(s loopState) bool {
		if s.gone {
			return true
		}
		if first {
			first = false
			if s.answer.Finalized {
				t.Fatalf("the first finalize with 5 pods running answered finalized")
			}
		}
		if s.answer.Finalized {
			finalized = time.Now()
			if pods := listPods(t, ns, selector); len(pods) != 0 {
				t.Fatalf("finalized while %d pods still exist (first %s)", len(pods), pods[0].Name)
			}
		}
		return false
	})
	figure(t, cl, c, "delete -> scaled to 0, pods gone, finalized in %s", seconds(took))

	// Garbage collection removes the children; the PVCs stay (whenDeleted Retain).
	waitFor(t, "children garbage collected", 2*time.Minute, func() bool {
		for _, obj := range []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.ConfigMap{}} {
			if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, obj); err == nil {
				return false
			}
		}
		return true
	})
	collected := time.Since(finalized)
	time.Sleep(2 * time.Second) // time for the controllers to do what they should not
	claims := listClaims(t, ns)
	if len(claims) != 5 {
		t.Fatalf("%d PVCs after the MyApp went, want the 5 data claims kept", len(claims))
	}
	for _, claim := range claims {
		if claim.DeletionTimestamp != nil || claim.Status.Phase != corev1.ClaimBound {
			t.Errorf("PVC %s: phase %s, deleting %v; want kept and Bound", claim.Name, claim.Status.Phase, claim.DeletionTimestamp != nil)
		}
	}
	figure(t, cl, c, "garbage collection removed StatefulSet, Service, ConfigMap within %s of the finalizer's removal; the 5 PVCs kept", seconds(collected))
}

// watchRoll runs the loop through a rolling update of the MyApp's pods until
// every pod is updated and Ready and the MyApp says Progressing False after
// having said True. The StatefulSet controller replaces pods from the highest
// ordinal down: at every turn the updated pods must be the highest ordinals.
func watchRoll(t *testing.T, cl *cluster, c controller, namespace, name, selector, what string, updated func(corev1.Pod) bool) time.Duration {
	t.Helper()
	progressing := false
	return c.loop(t, namespace, name, what+": every pod replaced", 3*time.Minute, func(s loopState) bool {
		if conditionStatus(s.answer.Status, "Progressing") == "True" {
			progressing = true
		}
		pods := listPods(t, namespace, selector)
		seenOld, all := false, true
		for i := len(pods) - 1; i >= 0; i-- { // highest ordinal first (listPods sorts by ordinal)
			if updated(pods[i]) {
				if seenOld {
					t.Fatalf("%s: pod %s updated before a higher ordinal: out of order", what, pods[i].Name)
				}
			} else {
				seenOld, all = true, false
			}
		}
		for _, pod := range pods {
			all = all && podReady(&pod) && pod.DeletionTimestamp == nil
		}
		done := all && len(pods) == 5 && conditionStatus(s.answer.Status, "Progressing") == "False" &&
			conditionStatus(s.answer.Status, "Ready") == "True"
		if done && !progressing {
			t.Fatalf("%s: Progressing never True during the roll", what)
		}
		return done
	})
}

// mustSelector is the MyApp's status.selector.
func mustSelector(t *testing.T, c controller, namespace, name string) string {
	t.Helper()
	selector, _, _ := unstructured.NestedString(c.get(t, namespace, name).Object, "status", "selector")
	if selector == "" {
		t.Fatal("MyApp status.selector is empty")
	}
	return selector
}

// assertPodsReady checks that exactly n pods match and all are Ready (by kwok)
// on a node the scheduler picked.
func assertPodsReady(t *testing.T, namespace, selector string, n int) {
	t.Helper()
	pods := listPods(t, namespace, selector)
	if len(pods) != n {
		t.Fatalf("%d pods, want %d", len(pods), n)
	}
	for _, pod := range pods {
		if !podReady(&pod) || pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: phase %s, node %q, ready %v; want Running and Ready on a node", pod.Name, pod.Status.Phase, pod.Spec.NodeName, podReady(&pod))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

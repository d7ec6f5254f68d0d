package e2e

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// loopInterval is how often the test's Metacontroller syncs a parent while it
// waits for the real controllers: about as often as their status writes would
// trigger a sync through Metacontroller's watches.
const loopInterval = 200 * time.Millisecond

// loopState is what one turn of the loop saw.
type loopState struct {
	gone   bool // the parent no longer exists
	answer hookAnswer
	writes writes
}

// loop plays Metacontroller's reconcile loop for one parent: a sync (a
// finalize once the parent is being deleted) every loopInterval, each
// followed by done, until done reports true. It returns the time that took;
// past the timeout the test fails naming what it waited for.
func (c controller) loop(t *testing.T, namespace, name, what string, timeout time.Duration, done func(loopState) bool) time.Duration {
	t.Helper()
	start := time.Now()
	var last loopState
	for {
		parent := &unstructured.Unstructured{}
		parent.SetGroupVersionKind(c.parent)
		err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, parent)
		switch {
		case apierrors.IsNotFound(err):
			last = loopState{gone: true}
		case err != nil:
			t.Fatalf("cannot read %s %s/%s: %v", c.parent.Kind, namespace, name, err)
		default:
			answer, w := c.sync(t, namespace, name, parent.GetDeletionTimestamp() != nil)
			last = loopState{answer: answer, writes: w}
		}
		if done(last) {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s: not reached in %s; last sync: gone %v, finalized %v, %s, status %v",
				what, timeout, last.gone, last.answer.Finalized, last.writes, last.answer.Status)
		}
		time.Sleep(loopInterval)
	}
}

// assertNoHotLoop runs the loop on a settled parent for the given time with
// the real controllers running: no sync may write anything, and neither the
// parent, nor a child, nor a pod may change.
func (c controller) assertNoHotLoop(t *testing.T, namespace, name string, quiet time.Duration, podSelector string) {
	t.Helper()
	before := versions(t, c, namespace, name, podSelector)
	syncs, start, hitsBefore := 0, time.Now(), etagHits(namespace+"/"+name)
	c.loop(t, namespace, name, "quiet", quiet+time.Minute, func(s loopState) bool {
		syncs++
		if s.gone || !s.writes.none() {
			t.Fatalf("settled %s %s: sync %d wrote %s (gone %v)", c.parent.Kind, name, syncs, s.writes, s.gone)
		}
		return time.Since(start) >= quiet
	})
	after := versions(t, c, namespace, name, podSelector)
	if diff := diffVersions(before, after); diff != "" {
		t.Fatalf("settled %s %s changed within %s (%d syncs, none wrote):\n%s", c.parent.Kind, name, quiet, syncs, diff)
	}
	// Nothing changed, so the requests were the same and their ETag too:
	// the service answered 412 and the cached answer was used.
	hits := etagHits(namespace+"/"+name) - hitsBefore
	if hits < syncs-1 {
		t.Errorf("settled %s %s: %d of %d syncs answered 412 from the ETag, want all but the first", c.parent.Kind, name, hits, syncs)
	}
	t.Logf("settled %s %s (%s): %d syncs in %s, %d answered 412", c.parent.Kind, name, c.mode(), syncs, quiet, hits)
}

// versions maps the parent, every child and every pod to its resourceVersion.
func versions(t *testing.T, c controller, namespace, name, podSelector string) map[string]string {
	t.Helper()
	parent := c.get(t, namespace, name)
	out := map[string]string{c.parent.Kind + " " + name: parent.GetResourceVersion()}
	for typeKey, objects := range c.observed(t, parent) {
		for key, obj := range objects {
			out[typeKey+" "+key] = obj.GetResourceVersion()
		}
	}
	for _, pod := range listPods(t, namespace, podSelector) {
		out["Pod "+pod.Name] = pod.ResourceVersion
	}
	return out
}

func diffVersions(before, after map[string]string) string {
	var lines []string
	for key, v := range before {
		if after[key] != v {
			lines = append(lines, fmt.Sprintf("  %s: resourceVersion %s -> %q", key, v, after[key]))
		}
	}
	for key := range after {
		if _, ok := before[key]; !ok {
			lines = append(lines, "  new: "+key)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// listPods lists the pods in the namespace that match a label selector.
func listPods(t *testing.T, namespace, selector string) []corev1.Pod {
	t.Helper()
	parsed, err := labels.Parse(selector)
	if err != nil {
		t.Fatalf("bad selector %q: %v", selector, err)
	}
	pods := &corev1.PodList{}
	if err := k8s.List(testContext(t), pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: parsed}); err != nil {
		t.Fatalf("cannot list pods: %v", err)
	}
	// Pods of one StatefulSet share the prefix <set>-, so a shorter name is a
	// lower ordinal: <set>-9 sorts before <set>-10.
	sort.Slice(pods.Items, func(i, j int) bool {
		a, b := pods.Items[i].Name, pods.Items[j].Name
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	return pods.Items
}

func podReady(pod *corev1.Pod) bool {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// listClaims lists the PVCs in the namespace.
func listClaims(t *testing.T, namespace string) []corev1.PersistentVolumeClaim {
	t.Helper()
	claims := &corev1.PersistentVolumeClaimList{}
	if err := k8s.List(testContext(t), claims, client.InNamespace(namespace)); err != nil {
		t.Fatalf("cannot list PVCs: %v", err)
	}
	sort.Slice(claims.Items, func(i, j int) bool { return claims.Items[i].Name < claims.Items[j].Name })
	return claims.Items
}

// waitFor polls cond every 100 ms until it holds and returns the time taken.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not reached in %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// figure records one measured figure of a full-loop scenario, naming the
// Kubernetes version: in the test log, and in $METAHOOKS_FIGURES when set
// (hack/e2e.sh collects them there).
func figure(t *testing.T, cl *cluster, c controller, format string, args ...any) {
	t.Helper()
	recordFigure(t, fmt.Sprintf("figure: Kubernetes %s, %s: %s", cl.version, c.mode(), fmt.Sprintf(format, args...)))
}

// recordFigure logs one figure line and appends it to $METAHOOKS_FIGURES.
func recordFigure(t *testing.T, line string) {
	t.Helper()
	t.Log(line)
	if file := os.Getenv("METAHOOKS_FIGURES"); file != "" {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, line); err != nil {
			t.Fatal(err)
		}
	}
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

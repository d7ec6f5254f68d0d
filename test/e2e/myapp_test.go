package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

var myAppController = controller{
	parent: schema.GroupVersionKind{Group: "example.com", Version: "v1alpha1", Kind: "MyApp"},
	route:  "myapp",
	// customize: a restoring MyApp's pods are related objects.
	customize: true,
	children: []schema.GroupVersionKind{
		appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
		corev1.SchemeGroupVersion.WithKind("Service"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
		batchv1.SchemeGroupVersion.WithKind("CronJob"),
	},
}

// createNamespace makes a fresh namespace for one test.
func createNamespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8s.Create(testContext(t), ns); err != nil {
		t.Fatalf("cannot create namespace %s: %v", name, err)
	}
	return name
}

// createParent creates a parent from a YAML manifest in the namespace, with
// Metacontroller's finalizer already on it (it adds it before the first sync).
func createParent(t *testing.T, c controller, namespace, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(namespace)
	obj.SetFinalizers([]string{"metacontroller.io/compositecontroller-" + c.route + "-controller"})
	if err := k8s.Create(testContext(t), obj); err != nil {
		t.Fatalf("the API server rejected the %s: %v", c.parent.Kind, err)
	}
	return obj
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repo, "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// rollOut plays the StatefulSet controller (not part of kube-apiserver): it
// reports every replica of the current spec ready on one revision.
func rollOut(t *testing.T, namespace, name string) {
	t.Helper()
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, sts); err != nil {
		t.Fatalf("cannot read StatefulSet %s: %v", name, err)
	}
	replicas := *sts.Spec.Replicas
	sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: sts.Generation, Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		CurrentReplicas: replicas, UpdatedReplicas: replicas, CurrentRevision: name + "-rev1", UpdateRevision: name + "-rev1",
	}
	if err := k8s.Status().Update(testContext(t), sts); err != nil {
		t.Fatalf("cannot write StatefulSet status: %v", err)
	}
}

func TestMyAppLifecycle(t *testing.T) {
	cases := map[string]struct {
		reason       string
		manifest     string
		wantChildren int
	}{
		"Minimal": {
			reason:       "only the required fields; the CRD fills in the defaults",
			manifest:     "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: minimal}\nspec: {image: registry.example/demo:1.0}\n",
			wantChildren: 3,
		},
		"Example": {
			reason:       "examples/myapp.yaml: every option, the backup by spec.backup.command, five children",
			manifest:     readExample(t, "myapp.yaml"),
			wantChildren: 5,
		},
		"DefaultBackup": {
			reason:       "examples/myapp-backup.yaml: backupSchedule alone, one archive CronJob per replica, seven children",
			manifest:     readExample(t, "myapp-backup.yaml"),
			wantChildren: 7,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := createNamespace(t, "myapp-"+strings.ToLower(name))
			parent := createParent(t, myAppController, ns, tc.manifest)
			id := parent.GetName()

			// 1. First sync: every child must pass the API server's validation.
			_, w := myAppController.sync(t, ns, id, false)
			if len(w.created) != tc.wantChildren || len(w.updated)+len(w.deleted) != 0 || !w.status {
				t.Fatalf("%s\nfirst sync: %s; want %d children created and a status", tc.reason, w, tc.wantChildren)
			}
			// 2. The children now exist: the status may say so, but no child
			// may change, and then nothing at all: the fixed point.
			if _, w := myAppController.sync(t, ns, id, false); len(w.created)+len(w.updated)+len(w.deleted) != 0 {
				t.Errorf("%s\nsecond sync rewrote children: %s", tc.reason, w)
			}
			if _, w := myAppController.sync(t, ns, id, false); !w.none() {
				t.Errorf("%s\nthird sync with nothing changed wrote: %s", tc.reason, w)
			}
			assertServerSideApplyNoop(t, myAppController, ns, id)

			// 3. The pods come up: status turns Ready, children stay.
			rollOut(t, ns, id)
			answer, w := myAppController.sync(t, ns, id, false)
			if len(w.created)+len(w.updated)+len(w.deleted) != 0 || !w.status {
				t.Errorf("%s\nsync after rollout: %s; want only a status write", tc.reason, w)
			}
			if ready := conditionStatus(answer.Status, "Ready"); ready != "True" {
				t.Errorf("%s\nReady = %q after rollout, want True; status %v", tc.reason, ready, answer.Status)
			}
			// 4. And again nothing to write: the fixed point Metacontroller needs.
			if _, w := myAppController.sync(t, ns, id, false); !w.none() {
				t.Errorf("%s\nidle sync after rollout wrote: %s", tc.reason, w)
			}

			// 5. Delete: the finalize hook scales to 0, then lets go.
			if err := k8s.Delete(testContext(t), myAppController.get(t, ns, id)); err != nil {
				t.Fatal(err)
			}
			answer, w = myAppController.sync(t, ns, id, true)
			if answer.Finalized || answer.ResyncAfterSeconds <= 0 || !anyHasPrefix(w.updated, "StatefulSet.apps/v1 "+id) {
				t.Fatalf("%s\nfinalize with pods running: finalized %v, resync %v, %s; want a scale-down and a wait", tc.reason, answer.Finalized, answer.ResyncAfterSeconds, w)
			}
			sts := &appsv1.StatefulSet{}
			if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: id}, sts); err != nil || *sts.Spec.Replicas != 0 {
				t.Fatalf("%s\nStatefulSet after finalize: %v, replicas %v; want scaled to 0", tc.reason, err, sts.Spec.Replicas)
			}
			rollOut(t, ns, id) // the controller reports 0 pods
			answer, _ = myAppController.sync(t, ns, id, true)
			if !answer.Finalized {
				t.Fatalf("%s\nfinalize with no pods left did not finalize: %+v", tc.reason, answer)
			}
			gone := &unstructured.Unstructured{}
			gone.SetGroupVersionKind(myAppController.parent)
			if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: id}, gone); err == nil {
				t.Errorf("%s\nMyApp still exists after finalized: finalizers %v", tc.reason, gone.GetFinalizers())
			}
		})
	}
}

// conditionStatus returns the status of a condition type in a status map.
func conditionStatus(status map[string]any, conditionType string) string {
	conditions, _, _ := unstructured.NestedSlice(status, "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == conditionType {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// assertServerSideApplyNoop applies the hook's current answer with
// server-side apply as a dry run (what Metacontroller's server-side-apply
// strategy sends) and checks that no child would change.
func assertServerSideApplyNoop(t *testing.T, c controller, namespace, name string) {
	t.Helper()
	parent, observed, answer := c.call(t, namespace, name, false)
	for _, desired := range answer.Children {
		child := &unstructured.Unstructured{Object: desired}
		child.SetNamespace(namespace)
		labels := child.GetLabels()
		labels["controller-uid"] = string(parent.GetUID())
		child.SetLabels(labels)
		typeKey := child.GetKind() + "." + child.GetAPIVersion()
		current := observed[typeKey][c.objectKey(child)]
		if current == nil {
			t.Errorf("desired %s %s was not observed", typeKey, child.GetName())
			continue
		}
		if err := k8s.Patch(testContext(t), child, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("metacontroller")); err != nil {
			t.Errorf("server-side apply (dry run) of %s %s failed: %v", typeKey, child.GetName(), err)
			continue
		}
		for _, section := range []string{"spec", "data", "stringData"} {
			if !equalJSON(t, current.Object[section], child.Object[section]) {
				t.Errorf("server-side apply would change %s of %s %s:%s", section, typeKey, child.GetName(), diffPaths(current.Object, child.Object))
			}
		}
		if !equalJSON(t, current.GetLabels(), child.GetLabels()) {
			t.Errorf("server-side apply would change the labels of %s %s: %v -> %v", typeKey, child.GetName(), current.GetLabels(), child.GetLabels())
		}
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	return normalizeAny(t, a) == normalizeAny(t, b)
}

func normalizeAny(t *testing.T, v any) string {
	t.Helper()
	raw, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func anyHasPrefix(items []string, prefix string) bool {
	for _, item := range items {
		if strings.HasPrefix(item, prefix) {
			return true
		}
	}
	return false
}

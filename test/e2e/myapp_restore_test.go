package e2e

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMyAppRestore: a MyApp created with restoreFrom gets a StatefulSet with
// the restore init container and the backups volume template, which the API
// server accepts; once every replica is ready on that template the init
// container goes and the StatefulSet is marked restored; restoreFrom cannot
// be changed.
func TestMyAppRestore(t *testing.T) {
	ns := createNamespace(t, "myapp-restore")
	parent := createParent(t, myAppController, ns, readExample(t, "myapp-restore.yaml"))
	id := parent.GetName()

	answer, w := myAppController.sync(t, ns, id, false)
	if len(w.created) != 7 || len(w.updated)+len(w.deleted) != 0 {
		t.Fatalf("first sync: %s; want 7 children created", w)
	}
	if got := conditionStatus(answer.Status, "Restored"); got != "False" {
		t.Errorf("Restored = %q while restoring, want False; status %v", got, answer.Status)
	}
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: id}, sts); err != nil {
		t.Fatal(err)
	}
	if init := sts.Spec.Template.Spec.InitContainers; len(init) != 1 || init[0].Name != "restore" || len(sts.Spec.VolumeClaimTemplates) != 2 {
		t.Fatalf("stored StatefulSet: init containers %v, %d volume templates; want the restore and data+backups", init, len(sts.Spec.VolumeClaimTemplates))
	}
	if _, w := myAppController.sync(t, ns, id, false); len(w.created)+len(w.updated)+len(w.deleted) != 0 {
		t.Errorf("second sync while restoring rewrote children: %s", w)
	}
	assertServerSideApplyNoop(t, myAppController, ns, id)

	// Pod demo-0's restore refuses (its backup is missing): the customize
	// hook makes the pods related objects, and the status quotes the refusal.
	refusal := "restore: backup latest not found on volume backups-" + id + "-0; refusing to start on an empty data volume"
	crashLooping(t, ns, id+"-0", sts.Spec.Template.Labels, refusal)
	answer, w = myAppController.sync(t, ns, id, false)
	if len(w.created)+len(w.updated)+len(w.deleted) != 0 {
		t.Errorf("sync with a refusing restore rewrote children: %s", w)
	}
	if got := conditionMessage(answer.Status, "Restored"); !strings.Contains(got, id+"-0: "+refusal) {
		t.Errorf("Restored message %q; want it to quote pod %s-0's refusal", got, id)
	}
	if err := k8s.Delete(testContext(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id + "-0"}}); err != nil {
		t.Fatal(err)
	}

	// Every replica restored and ready: the init container goes.
	rollOut(t, ns, id)
	answer, w = myAppController.sync(t, ns, id, false)
	if len(w.updated) != 1 || !anyHasPrefix(w.updated, "StatefulSet.apps/v1 "+id) || len(w.created)+len(w.deleted) != 0 {
		t.Fatalf("sync after the restore: %s; want only the StatefulSet updated", w)
	}
	if got := conditionStatus(answer.Status, "Restored"); got != "True" {
		t.Errorf("Restored = %q after every replica came up, want True; status %v", got, answer.Status)
	}
	// Dropping the init container rolls every pod once more: the answer says so.
	if got := conditionStatus(answer.Status, "Progressing"); got != "True" {
		t.Errorf("Progressing = %q in the answer that drops the restore init container, want True; status %v", got, answer.Status)
	}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: id}, sts); err != nil {
		t.Fatal(err)
	}
	if len(sts.Spec.Template.Spec.InitContainers) != 0 || sts.Annotations["example.com/restored-from"] != "latest" {
		t.Errorf("StatefulSet after the restore: init containers %v, annotations %v", sts.Spec.Template.Spec.InitContainers, sts.Annotations)
	}
	// The new template rolls out; from then on a fixed point.
	rollOut(t, ns, id)
	if _, w := myAppController.sync(t, ns, id, false); len(w.created)+len(w.updated)+len(w.deleted) != 0 {
		t.Errorf("sync after the restored template rolled out: %s", w)
	}
	if _, w := myAppController.sync(t, ns, id, false); !w.none() {
		t.Errorf("idle sync after the restore wrote: %s", w)
	}
	assertServerSideApplyNoop(t, myAppController, ns, id)

	// restoreFrom is immutable: the API server refuses a change or removal.
	for _, change := range []any{"20261201T020000Z", nil} {
		obj := myAppController.get(t, ns, id)
		if change == nil {
			unstructured.RemoveNestedField(obj.Object, "spec", "restoreFrom")
		} else if err := unstructured.SetNestedField(obj.Object, change, "spec", "restoreFrom"); err != nil {
			t.Fatal(err)
		}
		err := k8s.Update(testContext(t), obj)
		if err == nil || !strings.Contains(err.Error(), "spec.restoreFrom is immutable") {
			t.Errorf("changing restoreFrom to %v: %v; want the API server to refuse it as immutable", change, err)
		}
	}
}

// crashLooping creates pod name with labels, its restore init container
// crash-looping after saying said last (the kubelet's part, written as its
// status).
func crashLooping(t *testing.T, namespace, name string, labels map[string]string, said string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "restore", Image: "busybox:1.37"}},
			Containers:     []corev1.Container{{Name: "app", Image: "registry.example/demo:1.0"}},
		},
	}
	if err := k8s.Create(testContext(t), pod); err != nil {
		t.Fatalf("cannot create pod %s: %v", name, err)
	}
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodPending,
		InitContainerStatuses: []corev1.ContainerStatus{{
			Name:                 "restore",
			Image:                "busybox:1.37",
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: said + "\n"}},
		}},
	}
	if err := k8s.Status().Update(testContext(t), pod); err != nil {
		t.Fatalf("cannot write pod %s's status: %v", name, err)
	}
}

// conditionMessage returns the message of a condition type in a status map.
func conditionMessage(status map[string]any, conditionType string) string {
	conditions, _, _ := unstructured.NestedSlice(status, "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == conditionType {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}

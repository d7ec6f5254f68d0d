package e2e

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The API server runs no StatefulSet controller and no garbage collector:
// these tests play the StatefulSet controller (rollOut, observeNoPod) and
// make the PVCs by hand, with or without the owner reference to the
// StatefulSet that its controller sets or removes (through a ready pod only)
// and that garbage collection would follow when the StatefulSet goes.

func getStatefulSet(t *testing.T, namespace, name string) *appsv1.StatefulSet {
	t.Helper()
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, sts); err != nil {
		t.Fatalf("cannot read StatefulSet %s: %v", name, err)
	}
	return sts
}

// createClaims makes PVCs data-<name>-0 and backups-<name>-0 as the StatefulSet
// controller would, owned by the StatefulSet when owned.
func createClaims(t *testing.T, namespace, name string, owned bool) {
	t.Helper()
	sts := getStatefulSet(t, namespace, name)
	for _, template := range []string{"data", "backups"} {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: template + "-" + name + "-0", Namespace: namespace, Labels: sts.Spec.Selector.MatchLabels},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
			},
		}
		if owned {
			pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID}}
		}
		if err := k8s.Create(testContext(t), pvc); err != nil {
			t.Fatalf("cannot create PVC %s: %v", pvc.Name, err)
		}
	}
}

// patchClaims applies a JSON patch to both PVCs of the Database.
func patchClaims(t *testing.T, namespace, name, patch string) {
	t.Helper()
	for _, template := range []string{"data", "backups"} {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: template + "-" + name + "-0", Namespace: namespace}}
		if err := k8s.Patch(testContext(t), pvc, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatalf("cannot patch PVC %s: %v", pvc.Name, err)
		}
	}
}

// releasePatch is the manual fix the status names.
const releasePatch = `[{"op":"remove","path":"/metadata/ownerReferences"}]`

// observeNoPod plays a StatefulSet controller pass with no ready pod (none
// scheduled yet, Pending, CrashLooping): it records observedGeneration, and
// changes no PVC.
func observeNoPod(t *testing.T, namespace, name string) {
	t.Helper()
	sts := getStatefulSet(t, namespace, name)
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: *sts.Spec.Replicas, CurrentRevision: name + "-rev1", UpdateRevision: name + "-rev1"}
	if err := k8s.Status().Update(testContext(t), sts); err != nil {
		t.Fatalf("cannot write StatefulSet status: %v", err)
	}
}

func readyMessage(status map[string]any) string {
	conditions, _, _ := unstructured.NestedSlice(status, "conditions")
	for _, c := range conditions {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}

// runDatabase creates a Database from manifest and plays Metacontroller and
// the StatefulSet controller until it runs (or hibernates) at a fixed point.
func runDatabase(t *testing.T, c controller, namespace, manifest string) string {
	t.Helper()
	name := createParent(t, c, namespace, manifest).GetName()
	settle(t, c, namespace, name, "new Database")
	rollOut(t, namespace, name)
	settle(t, c, namespace, name, "Database rolled out")
	return name
}

func deleteDatabase(t *testing.T, c controller, namespace, name string) {
	t.Helper()
	if err := k8s.Delete(testContext(t), c.get(t, namespace, name)); err != nil {
		t.Fatal(err)
	}
}

func assertGone(t *testing.T, c controller, namespace, name string) {
	t.Helper()
	gone := &unstructured.Unstructured{}
	gone.SetGroupVersionKind(c.parent)
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, gone); err == nil {
		t.Errorf("Database %s still exists after finalized: finalizers %v", name, gone.GetFinalizers())
	}
}

// TestDatabaseRetainWithOwnedVolumes is the data-loss scenario: a Database
// that ran under Delete (its PVCs got owned by the StatefulSet), was
// hibernated, and is deleted under Retain. The StatefulSet says whenDeleted
// Retain and its controller has seen it, but with no pod it never released
// the PVCs: finalizing would let garbage collection delete them.
func TestDatabaseRetainWithOwnedVolumes(t *testing.T) {
	ns := createNamespace(t, "database-retain-owned")
	name := runDatabase(t, databaseController, ns, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: keep}\nspec: {size: small, image: postgres:17, deletionPolicy: Delete}\n")
	createClaims(t, ns, name, true) // the ready pod let the controller own them

	patchSpec(t, databaseController, ns, name, map[string]any{"hibernate": true})
	settle(t, databaseController, ns, name, "hibernating")
	rollOut(t, ns, name) // 0 replicas
	patchSpec(t, databaseController, ns, name, map[string]any{"deletionPolicy": "Retain"})
	settle(t, databaseController, ns, name, "hibernated, policy Retain")
	observeNoPod(t, ns, name) // the controller saw whenDeleted Retain, with no pod to act through
	if got := getStatefulSet(t, ns, name).Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted; got != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Fatalf("StatefulSet whenDeleted %s, want Retain before the deletion", got)
	}

	deleteDatabase(t, databaseController, ns, name)
	answer, _ := databaseController.sync(t, ns, name, true)
	if answer.Finalized {
		t.Fatal("finalized under Retain while both PVCs are owned by the StatefulSet: garbage collection would delete them")
	}
	if replicas := *getStatefulSet(t, ns, name).Spec.Replicas; replicas != 1 {
		t.Errorf("replicas %d while the PVCs are owned, want 1: only a ready pod lets the controller release them", replicas)
	}
	observeNoPod(t, ns, name) // the pod does not become ready (CrashLoopBackOff)
	answer, _ = databaseController.sync(t, ns, name, true)
	message := readyMessage(answer.Status)
	if answer.Finalized || !strings.Contains(message, "waiting for pod "+name+"-0") || !strings.Contains(message, "patch pvc data-"+name+"-0 --type=json -p '"+releasePatch+"'") {
		t.Fatalf("finalized %v, Ready message %q; want a wait naming the pod and the manual fix", answer.Finalized, message)
	}

	patchClaims(t, ns, name, releasePatch) // the manual fix, as the status says
	answer, _ = databaseController.sync(t, ns, name, true)
	if !answer.Finalized {
		t.Fatalf("PVCs released, yet not finalized: %q", readyMessage(answer.Status))
	}
	assertGone(t, databaseController, ns, name)
}

// TestDatabaseDeleteWaitsForOwnedVolumes is the reverse: Delete chosen while
// hibernated, PVCs never owned. Finalizing would leave them behind.
func TestDatabaseDeleteWaitsForOwnedVolumes(t *testing.T) {
	ns := createNamespace(t, "database-delete-unowned")
	name := runDatabase(t, databaseController, ns, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: drop}\nspec: {size: small, image: postgres:17, deletionPolicy: Delete, hibernate: true}\n")
	createClaims(t, ns, name, false)

	deleteDatabase(t, databaseController, ns, name)
	if answer, _ := databaseController.sync(t, ns, name, true); answer.Finalized {
		t.Fatal("finalized under Delete while no PVC is owned by the StatefulSet: they would be left behind")
	}
	if replicas := *getStatefulSet(t, ns, name).Spec.Replicas; replicas != 1 {
		t.Errorf("replicas %d, want 1 so the controller can take ownership", replicas)
	}
	rollOut(t, ns, name) // the pod is ready; ownership follows
	if answer, _ := databaseController.sync(t, ns, name, true); answer.Finalized || !strings.Contains(readyMessage(answer.Status), "take ownership") {
		t.Fatalf("finalized %v, message %q; want a wait for the controller", answer.Finalized, readyMessage(answer.Status))
	}
	sts := getStatefulSet(t, ns, name)
	patchClaims(t, ns, name, `[{"op":"add","path":"/metadata/ownerReferences","value":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"`+sts.Name+`","uid":"`+string(sts.UID)+`"}]}]`)
	if answer, _ := databaseController.sync(t, ns, name, true); !answer.Finalized {
		t.Fatalf("PVCs owned, yet not finalized: %q", readyMessage(answer.Status))
	}
	assertGone(t, databaseController, ns, name)
}

// TestDatabaseRetainWithoutCustomize: a CompositeController without the
// customize hook sends no PVCs; nothing proves them unowned, so a Retain
// deletion waits and says why.
func TestDatabaseRetainWithoutCustomize(t *testing.T) {
	legacy := databaseController
	legacy.customize = false
	ns := createNamespace(t, "database-no-customize")
	name := runDatabase(t, legacy, ns, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: legacy}\nspec: {size: small, image: postgres:17}\n")
	createClaims(t, ns, name, false)
	deleteDatabase(t, legacy, ns, name)
	answer, _ := legacy.sync(t, ns, name, true)
	if answer.Finalized || !strings.Contains(readyMessage(answer.Status), "no customize hook") {
		t.Fatalf("finalized %v, message %q; want a wait naming the missing customize hook", answer.Finalized, readyMessage(answer.Status))
	}
	// With the customize hook configured, the same Database finishes.
	if answer, _ := databaseController.sync(t, ns, name, true); !answer.Finalized {
		t.Fatalf("with the customize hook and unowned PVCs, not finalized: %q", readyMessage(answer.Status))
	}
}

// TestDatabaseSnapshotOfHibernated: the final backup Job is created only once
// the server started for it is ready, so pg_dump never races its start.
func TestDatabaseSnapshotOfHibernated(t *testing.T) {
	ns := createNamespace(t, "database-snapshot-hibernated")
	name := runDatabase(t, databaseController, ns, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: snap}\nspec: {size: small, image: postgres:17, deletionPolicy: Snapshot, hibernate: true}\n")

	deleteDatabase(t, databaseController, ns, name)
	for i := range 2 {
		answer, w := databaseController.sync(t, ns, name, true)
		if answer.Finalized || anyHasPrefix(w.created, "Job.batch/v1 ") {
			t.Fatalf("call %d with the server not ready: finalized %v, %s; want no Job yet", i, answer.Finalized, w)
		}
		if replicas := *getStatefulSet(t, ns, name).Spec.Replicas; replicas != 1 {
			t.Fatalf("replicas %d, want 1: the final backup needs the server", replicas)
		}
		observeNoPod(t, ns, name)
	}
	rollOut(t, ns, name) // the server is ready
	if answer, w := databaseController.sync(t, ns, name, true); answer.Finalized || !anyHasPrefix(w.created, "Job.batch/v1 "+name+"-final-backup") {
		t.Fatalf("server ready: finalized %v, %s; want the final backup Job created", answer.Finalized, w)
	}
	completeJob(t, ns, name+"-final-backup")
	if answer, _ := databaseController.sync(t, ns, name, true); !answer.Finalized {
		t.Fatalf("final backup done, no PVC owned, yet not finalized: %q", readyMessage(answer.Status))
	}
	assertGone(t, databaseController, ns, name)
}

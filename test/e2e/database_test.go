package e2e

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var databaseController = controller{
	parent: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Database"},
	route:  "database",
	children: []schema.GroupVersionKind{
		appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
		corev1.SchemeGroupVersion.WithKind("Service"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		corev1.SchemeGroupVersion.WithKind("Secret"),
		batchv1.SchemeGroupVersion.WithKind("CronJob"),
		batchv1.SchemeGroupVersion.WithKind("Job"),
	},
	customize: true,
}

// settle runs syncs until one writes no child (at most three), then asserts
// the next one writes nothing at all: the fixed point.
func settle(t *testing.T, c controller, namespace, name, why string) hookAnswer {
	t.Helper()
	for range 3 {
		if _, w := c.sync(t, namespace, name, false); len(w.created)+len(w.updated)+len(w.deleted) == 0 {
			break
		}
	}
	answer, w := c.sync(t, namespace, name, false)
	if !w.none() {
		t.Fatalf("%s: no fixed point, an idle sync wrote: %s", why, w)
	}
	assertServerSideApplyNoop(t, c, namespace, name)
	return answer
}

// patchSpec changes the parent's spec like a user's kubectl edit.
func patchSpec(t *testing.T, c controller, namespace, name string, set map[string]any) {
	t.Helper()
	parent := c.get(t, namespace, name)
	for key, value := range set {
		if err := unstructured.SetNestedField(parent.Object, value, "spec", key); err != nil {
			t.Fatal(err)
		}
	}
	if err := k8s.Update(testContext(t), parent); err != nil {
		t.Fatalf("the API server rejected the spec change %v: %v", set, err)
	}
}

// setBackupRequest sets annotation example.com/backup-request on the parent
// like kubectl annotate; "" removes it.
func setBackupRequest(t *testing.T, c controller, namespace, name, value string) {
	t.Helper()
	parent := c.get(t, namespace, name)
	annotations := parent.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	if value == "" {
		delete(annotations, "example.com/backup-request")
	} else {
		annotations["example.com/backup-request"] = value
	}
	parent.SetAnnotations(annotations)
	if err := k8s.Update(testContext(t), parent); err != nil {
		t.Fatalf("the API server rejected the annotation: %v", err)
	}
}

func secretData(t *testing.T, namespace, name string) map[string][]byte {
	t.Helper()
	secret := &corev1.Secret{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		t.Fatalf("cannot read Secret %s: %v", name, err)
	}
	return secret.Data
}

func TestDatabaseLifecycle(t *testing.T) {
	ns := createNamespace(t, "database-lifecycle")
	parent := createParent(t, databaseController, ns, readExample(t, "database.yaml"))
	name := parent.GetName()

	// Created: every child passes the API server's validation; then a fixed point.
	_, w := databaseController.sync(t, ns, name, false)
	if len(w.created) < 5 || !w.status {
		t.Fatalf("first sync: %s; want the StatefulSet, Services, Secret, ConfigMap and CronJob", w)
	}
	settle(t, databaseController, ns, name, "new Database")
	credentials := secretData(t, ns, name+"-credentials")
	for _, key := range []string{"username", "password", "uri"} {
		if len(credentials[key]) == 0 {
			t.Errorf("Secret %s-credentials has no %s", name, key)
		}
	}

	// The server comes up: Ready, and still a fixed point.
	rollOut(t, ns, name)
	answer := settle(t, databaseController, ns, name, "running Database")
	if ready := conditionStatus(answer.Status, "Ready"); ready != "True" {
		t.Errorf("Ready = %q once the pod is ready, want True; status %v", ready, answer.Status)
	}
	if endpoint, _, _ := unstructured.NestedString(answer.Status, "endpoint"); !strings.Contains(endpoint, ":5432") {
		t.Errorf("status.endpoint = %q, want host:5432", endpoint)
	}

	// A size change rolls the pod with the new resources; credentials stay.
	patchSpec(t, databaseController, ns, name, map[string]any{"size": "medium"})
	if _, w := databaseController.sync(t, ns, name, false); !anyHasPrefix(w.updated, "StatefulSet.apps/v1 "+name) {
		t.Errorf("size change: %s; want the StatefulSet updated", w)
	}
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
		t.Fatal(err)
	}
	if memory := sts.Spec.Template.Spec.Containers[0].Resources.Requests.Memory(); memory.IsZero() {
		t.Errorf("StatefulSet after a size change has no memory request")
	}
	rollOut(t, ns, name)
	settle(t, databaseController, ns, name, "resized Database")
	if after := secretData(t, ns, name+"-credentials"); string(after["password"]) != string(credentials["password"]) {
		t.Error("the password changed on a size change")
	}

	// An on-demand backup: the annotation adds Job <name>-backup-<hash>, which
	// the API server accepts; once it succeeded the status says so, and a
	// removed annotation deletes the Job.
	setBackupRequest(t, databaseController, ns, name, "1764470000")
	if _, w := databaseController.sync(t, ns, name, false); !anyHasPrefix(w.created, "Job.batch/v1 "+name+"-backup-") {
		t.Fatalf("backup request: %s; want the on-demand backup Job created", w)
	}
	onDemand := name + "-backup-8473348d" // sha256("1764470000")
	completeJob(t, ns, onDemand)
	answer = settle(t, databaseController, ns, name, "on-demand backup done")
	if state, _, _ := unstructured.NestedString(answer.Status, "onDemandBackup", "state"); state != "Succeeded" {
		t.Errorf("status.onDemandBackup.state = %q once the Job succeeded, want Succeeded; status %v", state, answer.Status)
	}
	setBackupRequest(t, databaseController, ns, name, "")
	if _, w := databaseController.sync(t, ns, name, false); !anyHasPrefix(w.deleted, "Job.batch/v1 "+onDemand) {
		t.Errorf("backup request removed: %s; want Job %s deleted", w, onDemand)
	}
	settle(t, databaseController, ns, name, "on-demand backup removed")

	// Delete under Snapshot: a final backup Job first, finalized only after it succeeded.
	if err := k8s.Delete(testContext(t), databaseController.get(t, ns, name)); err != nil {
		t.Fatal(err)
	}
	answer, w = databaseController.sync(t, ns, name, true)
	if answer.Finalized || !anyHasPrefix(w.created, "Job.batch/v1 "+name+"-final-backup") {
		t.Fatalf("finalize under Snapshot: finalized %v, %s; want the final backup Job created and a wait", answer.Finalized, w)
	}
	if answer, _ := databaseController.sync(t, ns, name, true); answer.Finalized {
		t.Fatal("finalized before the final backup Job succeeded")
	}
	completeJob(t, ns, name+"-final-backup")
	rollOut(t, ns, name)
	answer, _ = databaseController.sync(t, ns, name, true)
	if !answer.Finalized {
		t.Fatalf("final backup succeeded, yet not finalized: status %v", answer.Status)
	}
}

// completeJob plays the Job controller: the Job succeeded.
func completeJob(t *testing.T, namespace, name string) {
	t.Helper()
	job := &batchv1.Job{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, job); err != nil {
		t.Fatalf("cannot read Job %s: %v", name, err)
	}
	start := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	done := metav1.NewTime(time.Now().Truncate(time.Second))
	job.Status = batchv1.JobStatus{
		StartTime: &start, CompletionTime: &done, Succeeded: 1,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: done, LastProbeTime: done},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: done, LastProbeTime: done},
		},
	}
	if err := k8s.Status().Update(testContext(t), job); err != nil {
		t.Fatalf("cannot mark Job %s complete: %v", name, err)
	}
}

func TestDatabaseScenarios(t *testing.T) {
	cases := map[string]struct {
		reason   string
		manifest string
		check    func(t *testing.T, ns, name string)
	}{
		"Hibernate": {
			reason:   "hibernate keeps everything but the pod",
			manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: sleepy}\nspec: {size: small, image: postgres:17, hibernate: true, deletionPolicy: Delete}\n",
			check: func(t *testing.T, ns, name string) {
				sts := &appsv1.StatefulSet{}
				if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil || *sts.Spec.Replicas != 0 {
					t.Errorf("hibernated StatefulSet: %v, replicas %v; want 0", err, sts.Spec.Replicas)
				}
			},
		},
		"Large": {
			reason:   "the large preset with more storage than it asks for",
			manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: big}\nspec: {size: large, image: postgres:17, storage: 200Gi, backup: {schedule: '0 3 * * 0', retention: 2}}\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := createNamespace(t, "database-"+strings.ToLower(name))
			parent := createParent(t, databaseController, ns, tc.manifest)
			settle(t, databaseController, ns, parent.GetName(), tc.reason)
			rollOut(t, ns, parent.GetName())
			settle(t, databaseController, ns, parent.GetName(), tc.reason+" (pod up)")
			if tc.check != nil {
				tc.check(t, ns, parent.GetName())
			}
		})
	}
}

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDatabaseBackupFailureReason: a scheduled backup failed; its pod (as the
// Job controller labels it and the kubelet ends it) is selected by the
// customize hook's label rule on a real API server, and BackupSucceeded says
// why in the pod's words; a server pod with the same words is not read; the
// next sync is a fixed point.
func TestDatabaseBackupFailureReason(t *testing.T) {
	ns := createNamespace(t, "database-backup-failed")
	parent := createParent(t, databaseController, ns, readExample(t, "database.yaml"))
	name := parent.GetName()
	settle(t, databaseController, ns, name, "new Database")

	cj := &batchv1.CronJob{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name + "-backup"}, cj); err != nil {
		t.Fatal(err)
	}
	scheduled := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	cj.Status.LastScheduleTime = &metav1.Time{Time: scheduled}
	if err := k8s.Status().Update(testContext(t), cj); err != nil {
		t.Fatalf("cannot write the CronJob's status: %v", err)
	}
	job := fmt.Sprintf("%s-backup-%d", name, scheduled.Unix()/60) // the CronJob controller's name for that run
	said := "the server " + name + "." + ns + ".svc:5432 did not accept connections for 5 minutes; no backup written, older ones kept"
	labels := map[string]string{"batch.kubernetes.io/job-name": job, "job-name": job}
	for k, v := range cj.Spec.JobTemplate.Spec.Template.Labels {
		labels[k] = v
	}
	failedPod(t, ns, job+"-x7k2p", labels, "pg_isready: no response\nbackup: FAILED: "+said+"\n")
	serverLabels := map[string]string{"batch.kubernetes.io/job-name": job}
	for k, v := range cj.Spec.JobTemplate.Spec.Template.Labels {
		serverLabels[k] = v
	}
	serverLabels["app.kubernetes.io/component"] = "server"
	failedPod(t, ns, job+"-decoy", serverLabels, "backup: FAILED: not this Database's backup\n")

	answer, w := databaseController.sync(t, ns, name, false)
	if len(w.created)+len(w.updated)+len(w.deleted) != 0 {
		t.Errorf("sync after the failed backup rewrote children: %s", w)
	}
	got := conditionMessage(answer.Status, "BackupSucceeded")
	want := "the backup scheduled at 2026-11-30T02:00:00Z did not succeed: " + said + "; see the Jobs of CronJob " + name + "-backup"
	if got != want || conditionStatus(answer.Status, "BackupSucceeded") != "False" {
		t.Errorf("BackupSucceeded %s %q, want False %q", conditionStatus(answer.Status, "BackupSucceeded"), got, want)
	}
	if strings.Contains(got, "not this Database") {
		t.Errorf("the server pod's words reached the status: %q", got)
	}
	settle(t, databaseController, ns, name, "failed backup reported")
}

// failedPod creates pod name with labels, its backup container ended with
// exit code 1 and the termination message the kubelet takes from its log.
func failedPod(t *testing.T, namespace, name string, labels map[string]string, message string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "backup", Image: "postgres:17"}}},
	}
	if err := k8s.Create(testContext(t), pod); err != nil {
		t.Fatalf("cannot create pod %s: %v", name, err)
	}
	finished := metav1.NewTime(time.Date(2026, 11, 30, 2, 5, 0, 0, time.UTC))
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "backup", Image: "postgres:17",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: message,
			StartedAt: metav1.NewTime(finished.Add(-5 * time.Minute)), FinishedAt: finished}},
	}}}
	if err := k8s.Status().Update(testContext(t), pod); err != nil {
		t.Fatalf("cannot write pod %s's status: %v", name, err)
	}
}

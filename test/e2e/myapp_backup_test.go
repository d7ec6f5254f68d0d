package e2e

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMyAppBackupJobName: the default backup names its archive after the
// Job's name, which its pod reads from the label batch.kubernetes.io/job-name
// (downward API). The CronJob controller names a run's Job
// <cronjob>-<unix minutes of the scheduled time>; here the real API server
// must stamp that label on the pod template of a Job made from the hook's
// CronJob, as it does for the controller's.
func TestMyAppBackupJobName(t *testing.T) {
	ns := createNamespace(t, "myapp-backup-job")
	parent := createParent(t, myAppController, ns, readExample(t, "myapp-backup.yaml"))
	if _, w := myAppController.sync(t, ns, parent.GetName(), false); len(w.created) != 7 {
		t.Fatalf("first sync: %s; want 7 children", w)
	}
	cj := &batchv1.CronJob{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: parent.GetName() + "-backup-1"}, cj); err != nil {
		t.Fatalf("CronJob of replica 1: %v", err)
	}
	scheduled := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	name := fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: cj.Spec.JobTemplate.Labels},
		Spec:       *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	if err := k8s.Create(testContext(t), job); err != nil {
		t.Fatalf("the API server refused a Job made from the CronJob's template: %v", err)
	}
	if got := job.Spec.Template.Labels[batchv1.JobNameLabel]; got != name {
		t.Errorf("pod template label %s = %q, want the Job's name %q (the archive's name comes from it)", batchv1.JobNameLabel, got, name)
	}
	env := job.Spec.Template.Spec.Containers[0].Env
	var fieldPath string
	for _, e := range env {
		if e.Name == "JOB_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			fieldPath = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if want := "metadata.labels['" + batchv1.JobNameLabel + "']"; fieldPath != want {
		t.Errorf("JOB_NAME comes from %q, want %q", fieldPath, want)
	}
	if job.Labels["app.kubernetes.io/component"] != "backup" || job.Labels["app.kubernetes.io/instance"] != parent.GetName() {
		t.Errorf("Job labels %v: want the backup labels, for kubectl get jobs -l", job.Labels)
	}
}

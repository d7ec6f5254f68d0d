package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestCronJob(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "demo-backup", Namespace: "apps", Labels: map[string]string{"a": "b"}}
	labels := map[string]string{"app.kubernetes.io/component": "backup"}
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "backup", Image: "demo:1"}}}
	want := &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: meta,
		Spec: batchv1.CronJobSpec{
			Schedule:                   "0 2 * * *",
			Suspend:                    ptr.To(true),
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](3),
			FailedJobsHistoryLimit:     ptr.To[int32](3),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](2),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "backup", Image: "demo:1"}},
					},
				},
			}},
		},
	}
	got := CronJob(meta, "0 2 * * *", true, JobSpec(labels, pod))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CronJob: -want +got:\n%s", diff)
	}
	if pod.RestartPolicy != "" {
		t.Errorf("JobSpec changed the caller's pod spec: restartPolicy %q", pod.RestartPolicy)
	}
}

func TestCronJobRunName(t *testing.T) {
	scheduled := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	if got, want := CronJobRunName("orders-backup", scheduled), "orders-backup-29934840"; got != want {
		t.Errorf("CronJobRunName = %q, want %q (<cronjob>-<unix minutes>)", got, want)
	}
}

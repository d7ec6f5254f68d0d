package kube

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// CronJob is a batch/v1 CronJob named by meta that runs job on schedule: never
// two runs at once, the last 3 successful and 3 failed Jobs kept for their
// logs, and suspend stopping new runs (while the parent hibernates or is being
// deleted).
func CronJob(meta metav1.ObjectMeta, schedule string, suspend bool, job batchv1.JobSpec) *batchv1.CronJob {
	return &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: meta,
		Spec: batchv1.CronJobSpec{
			Schedule:                   schedule,
			Suspend:                    ptr.To(suspend),
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](3),
			FailedJobsHistoryLimit:     ptr.To[int32](3),
			JobTemplate:                batchv1.JobTemplateSpec{Spec: job},
		},
	}
}

// JobSpec runs pod once to completion, its pods labelled podLabels: the pod is
// never restarted in place (restartPolicy Never) and a failed pod is retried
// twice in a new pod before the Job fails.
func JobSpec(podLabels map[string]string, pod corev1.PodSpec) batchv1.JobSpec {
	pod.RestartPolicy = corev1.RestartPolicyNever
	return batchv1.JobSpec{
		BackoffLimit: ptr.To[int32](2),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
			Spec:       pod,
		},
	}
}

// CronJobRunName is the name the CronJob controller gives the Job of the run
// of cronJob scheduled at t (getJobName in Kubernetes' pkg/controller/cronjob,
// read at v1.37.2: <cronjob>-<unix minutes>; the API server labels its pods
// batch.kubernetes.io/job-name with it).
func CronJobRunName(cronJob string, t time.Time) string {
	return fmt.Sprintf("%s-%d", cronJob, t.Unix()/60)
}

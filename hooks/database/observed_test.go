package database

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/kube"
)

// TestObserveJobBoundsTheReason: a failed Job's reason and message are
// repeated in status.onDemandBackup.message and the BackupSucceeded
// condition (maxLength 32768): at most kube.MaxSaid bytes of them, so a
// huge message in an observed Job cannot make a status the API server
// refuses. Before, a 1 MB message was repeated whole.
func TestObserveJobBoundsTheReason(t *testing.T) {
	failed := func(message string) *batchv1.Job {
		return &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{
			Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: message,
		}}}}
	}
	for _, tc := range []struct {
		reason string
		job    *batchv1.Job
		want   jobOutcome
	}{
		{"the usual failure, whole", failed("Job has reached the specified backoff limit"),
			jobOutcome{state: jobFailed, reason: "BackoffLimitExceeded: Job has reached the specified backoff limit"}},
		{"a 1 MB message, cut", failed(strings.Repeat("m", 1<<20)),
			jobOutcome{state: jobFailed, reason: ("BackoffLimitExceeded: " + strings.Repeat("m", kube.MaxSaid))[:kube.MaxSaid] + "..."}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, observeJob(tc.job), cmp.AllowUnexported(jobOutcome{})); diff != "" {
				t.Errorf("observeJob (-want +got):\n%s", diff)
			}
		})
	}
}

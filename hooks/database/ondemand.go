package database

import (
	"crypto/sha256"
	"encoding/hex"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbv1 "metahooks/api/v1"
)

// onDemandJobName is Job <name>-backup-<first 8 hex digits of the SHA-256 of
// the request>: at most 45+7+9 = 61 characters, and a new request value gives
// a new Job.
func (d *database) onDemandJobName() string {
	sum := sha256.Sum256([]byte(d.backupRequest))
	return d.cronJobName() + "-" + hex.EncodeToString(sum[:4])
}

// onDemandBlocked says why the requested backup cannot run now; "" when it
// can. Like the CronJob, it does not run while the Database hibernates (there
// is no server to dump). Finalize never emits it (see sync).
func onDemandBlocked(d *database) string {
	if d.hibernate {
		return "the Database hibernates: the backup runs once spec.hibernate is false"
	}
	return ""
}

// onDemandBackupJob is the Job of the backup request, nil without a request
// or while it cannot run. Its spec is the backup CronJob's job template
// (backupJobSpec), with the same host and retention. It has no TTL: it stays,
// with its outcome, until the request changes or is removed.
func onDemandBackupJob(d *database, host string) *batchv1.Job {
	if d.backupRequest == "" || onDemandBlocked(d) != "" {
		return nil
	}
	return backupJob(d, d.onDemandJobName(), backupJobSpec(d, host, "", d.retention))
}

// onDemandStatus reports the backup request from the observed Job; nil
// without a request.
func onDemandStatus(d *database, o *observed) *dbv1.OnDemandBackupStatus {
	if d.backupRequest == "" {
		return nil
	}
	st := &dbv1.OnDemandBackupStatus{Request: d.backupRequest, Job: d.onDemandJobName(), State: dbv1.OnDemandBackupPending}
	job := o.onDemandJob
	if job == nil {
		st.Message = onDemandBlocked(d)
		if st.Message == "" {
			st.Message = "Job " + st.Job + " is not created yet"
		}
		return st
	}
	switch outcome := observeJob(job); outcome.state {
	case jobSucceeded:
		st.State = dbv1.OnDemandBackupSucceeded
		st.CompletionTime = jobSucceededAt(job)
	case jobFailed:
		st.State = dbv1.OnDemandBackupFailed
		st.Message = outcome.reason + "; see kubectl -n " + d.namespace + " logs job/" + st.Job + ", and set a new request value to try again"
	default:
		st.State = dbv1.OnDemandBackupRunning
	}
	return st
}

// onDemandSucceededAt is when the observed on-demand Job completed; nil
// unless it did.
func onDemandSucceededAt(o *observed) *metav1.Time { return jobSucceededAt(o.onDemandJob) }

// onDemandFailedAt is when the observed on-demand Job failed; nil unless it
// did.
func onDemandFailedAt(o *observed) *metav1.Time {
	if o.onDemandJob == nil {
		return nil
	}
	for _, c := range o.onDemandJob.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			t := c.LastTransitionTime
			return &t
		}
	}
	return nil
}

package database

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

// How long to wait before asking again while finalization waits.
const (
	finalizeWaitSeconds    = 5
	finalBackupWaitSeconds = 15
	failedBackupWaitSecond = 300
)

// jobState is where a Job is: absent or running, succeeded, or failed.
type jobState int

const (
	jobRunning jobState = iota
	jobSucceeded
	jobFailed
)

type jobOutcome struct {
	state  jobState
	reason string // why it failed
}

func observeJob(job *batchv1.Job) jobOutcome {
	if job == nil {
		return jobOutcome{state: jobRunning}
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return jobOutcome{state: jobSucceeded}
		case batchv1.JobFailed:
			reason := c.Reason
			if c.Message != "" {
				reason += ": " + c.Message
			}
			return jobOutcome{state: jobFailed, reason: reason}
		}
	}
	return jobOutcome{state: jobRunning}
}

func jobConditionTrue(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// finalize lets the Database go only once its data is where the deletion
// policy, as it is now, wants it:
//
//   - the observed StatefulSet carries the PVC retention policy of
//     spec.deletionPolicy and its controller has acted on it (whenDeleted
//     Delete makes the StatefulSet own its PVCs, so garbage collection takes
//     them with it; Retain leaves them without an owner);
//   - under Snapshot, Job <name>-final-backup has succeeded. The server runs
//     (even when hibernating) until then. A failed Job keeps the Database, and
//     the status says why and how to go on.
//
// Until then every child is kept and backups are suspended; once done the
// answer has finalized set and no children, so Metacontroller deletes the
// StatefulSet (the volumes stay or go as its retention policy says), the
// Services, the Secret, the ConfigMap and the CronJob.
func finalize(d *database, o *observed, key []byte, now time.Time) (*composite.Response, error) {
	p := plan{replicas: 1, restoring: restoring(d, o.statefulSet), finalizing: true}
	if d.hibernate {
		p.replicas = 0
	}
	var job runtime.Object
	resync := float64(finalizeWaitSeconds)
	if d.deletionPolicy == dbv1.DeletionSnapshot {
		job = finalBackupJob(d)
		p.final = observeJob(o.finalBackupJob)
		switch p.final.state {
		case jobFailed:
			p.waitingFor = "the final backup failed: " + p.final.reason
			resync = failedBackupWaitSecond
		case jobRunning:
			p.waitingFor = "waiting for final backup Job " + d.finalBackupJobName()
			p.replicas = 1 // pg_dump needs the server
			resync = finalBackupWaitSeconds
		}
	}
	if p.waitingFor == "" {
		p.waitingFor = volumesFollowPolicy(d, o.statefulSet)
	}
	done := p.waitingFor == ""

	children := append(desiredChildren(d, o, key, p, true), job)
	if done {
		children = nil
	}
	response, err := composite.NewResponse(status(d, o, p, now), children...)
	if err != nil {
		return nil, fmt.Errorf("cannot finalize Database %s/%s: %w", d.namespace, d.name, err)
	}
	response.Finalized = done
	if !done {
		response.ResyncAfterSeconds = resync
	}
	return response, nil
}

// volumesFollowPolicy says what is still needed before the StatefulSet may be
// deleted with the volumes treated as spec.deletionPolicy says: "" when
// nothing is.
func volumesFollowPolicy(d *database, sts *appsv1.StatefulSet) string {
	if sts == nil {
		return ""
	}
	want := retentionPolicy(d.deletionPolicy).WhenDeleted
	got := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if policy := sts.Spec.PersistentVolumeClaimRetentionPolicy; policy != nil && policy.WhenDeleted != "" {
		got = policy.WhenDeleted
	}
	switch {
	case got != want:
		return fmt.Sprintf("setting the StatefulSet's PVC retention whenDeleted from %s to %s", got, want)
	case sts.Status.ObservedGeneration < sts.Generation:
		return "waiting for the StatefulSet controller to apply PVC retention whenDeleted " + string(want)
	}
	return ""
}

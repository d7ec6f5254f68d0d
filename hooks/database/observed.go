package database

import (
	"errors"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// observed holds the observed children the hook reads; nil when absent.
type observed struct {
	statefulSet    *appsv1.StatefulSet
	secret         *corev1.Secret
	superuser      *corev1.Secret
	replication    *corev1.Secret // Secret <name>-replication (instances >= 2)
	cronJob        *batchv1.CronJob
	finalBackupJob *batchv1.Job
	onDemandJob    *batchv1.Job // Job <name>-backup-<hash> of the current backup request
	claims         claims
	topology       *corev1.ConfigMap // ConfigMap <name>-topology (instances >= 2)
	// backupFailures are what the newest failed pod of each backup Job said,
	// by Job name (backup_failures.go).
	backupFailures map[string]kube.Failure
	// restoreFailure is what pod <n>-0's init container said when it
	// failed (restore_failure.go); nil when it did not, or is not observed.
	restoreFailure *kube.Failure
}

// claims are the related PVCs data-<n>-<i> and backups-<n>-<i> of every
// ordinal (see Customize).
type claims struct {
	// known: the request carries related PVCs, so the customize hook is
	// configured and byName is the whole truth. Without it (an older
	// CompositeController) nothing is known about the PVCs.
	known bool
	// byName holds the PVCs that exist, in the order of claimNames.
	byName []*corev1.PersistentVolumeClaim
}

var pvcKind = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")

func observeChildren(req *composite.Request, d *database) (*observed, error) {
	o := &observed{}
	var err error
	if o.statefulSet, err = composite.ObservedAs[appsv1.StatefulSet](req, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), d.namespace, d.name); err != nil {
		return nil, err
	}
	if err := kube.CheckKeptSelector(o.statefulSet); err != nil {
		return nil, err
	}
	if o.secret, err = observeSecret(req, d, d.secretName()); err != nil {
		return nil, err
	}
	if o.superuser, err = observeSecret(req, d, d.superuserSecretName()); err != nil {
		return nil, err
	}
	if o.replication, err = observeSecret(req, d, d.replicationSecretName()); err != nil {
		return nil, err
	}
	if o.cronJob, err = composite.ObservedAs[batchv1.CronJob](req, batchv1.SchemeGroupVersion.WithKind("CronJob"), d.namespace, d.cronJobName()); err != nil {
		return nil, err
	}
	if o.finalBackupJob, err = composite.ObservedAs[batchv1.Job](req, batchv1.SchemeGroupVersion.WithKind("Job"), d.namespace, d.finalBackupJobName()); err != nil {
		return nil, err
	}
	if d.backupRequest != "" {
		if o.onDemandJob, err = composite.ObservedAs[batchv1.Job](req, batchv1.SchemeGroupVersion.WithKind("Job"), d.namespace, d.onDemandJobName()); err != nil {
			return nil, err
		}
	}
	if o.claims, err = observeClaims(req, d); err != nil {
		return nil, err
	}
	if o.topology, err = composite.ObservedAs[corev1.ConfigMap](req, corev1.SchemeGroupVersion.WithKind("ConfigMap"), d.namespace, d.topologyName()); err != nil {
		return nil, err
	}
	if o.backupFailures, err = observeBackupFailures(req, d); err != nil {
		return nil, err
	}
	if o.restoreFailure, err = observeRestoreFailure(req, d); err != nil {
		return nil, err
	}
	return o, nil
}

// observeClaims reads the related PVCs, under v1 ("name") or v2
// ("namespace/name") keys.
func observeClaims(req *composite.Request, d *database) (claims, error) {
	c := claims{known: req.HasRelated(pvcKind)}
	for _, name := range d.claimNames() {
		var pvc corev1.PersistentVolumeClaim
		found, err := req.ObservedRelated(pvcKind, d.namespace, name, &pvc)
		if err != nil {
			return claims{}, err
		}
		if found {
			c.byName = append(c.byName, &pvc)
		}
	}
	return c, nil
}

// observeSecret decodes the observed Secret name. A decode error names the
// field but never repeats the decoder's message, which could quote data.
func observeSecret(req *composite.Request, d *database, name string) (*corev1.Secret, error) {
	secret, err := composite.ObservedAs[corev1.Secret](req, corev1.SchemeGroupVersion.WithKind("Secret"), d.namespace, name)
	if costErr := (*composite.CostError)(nil); errors.As(err, &costErr) {
		return nil, costErr // quotes no data: where the budget ran out
	}
	if err != nil {
		return nil, &composite.RequestError{
			Field:  `children["Secret.v1"]["` + name + `"]`,
			Reason: "cannot decode the observed Secret",
		}
	}
	return secret, nil
}

// serverReady reports an observed StatefulSet with a ready server pod.
func serverReady(sts *appsv1.StatefulSet) bool {
	return sts != nil && sts.Status.ReadyReplicas >= 1
}

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
			// Repeated in status messages: the observed Job's words are
			// bounded as a container's are.
			return jobOutcome{state: jobFailed, reason: truncate(reason, kube.MaxSaid)}
		}
	}
	return jobOutcome{state: jobRunning}
}

// jobSucceededAt is when job completed; nil unless it is observed complete.
func jobSucceededAt(job *batchv1.Job) *metav1.Time {
	if job == nil || job.Status.CompletionTime == nil || !jobConditionTrue(job, batchv1.JobComplete) {
		return nil
	}
	return job.Status.CompletionTime
}

func jobConditionTrue(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

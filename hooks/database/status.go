package database

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/kube"
)

// Condition types and reasons of Database's status.
const (
	ConditionStorageApplied = "StorageApplied"

	ReasonAvailable   = "Available"
	ReasonUnavailable = "Unavailable"
	ReasonHibernated  = "Hibernated"

	ReasonFinalBackupRunning   = "FinalBackupRunning"
	ReasonFinalBackupSucceeded = "FinalBackupSucceeded"
	ReasonFinalBackupFailed    = "FinalBackupFailed"

	ReasonOnDemandBackupFailed = "OnDemandBackupFailed"

	ReasonAsRequested         = "AsRequested"
	ReasonLargerThanRequested = "LargerThanRequested"
	ReasonExpansionRequired   = "ExpansionRequired"
	ReasonRestoreFailed       = "RestoreFailed"
)

// plan is what the hook decided for this call, which the status reports.
type plan struct {
	replicas  int32
	restoring bool
	// restoreFailure is what the restore said when it last failed; nil
	// when it did not (restore_failure.go).
	restoreFailure *kube.Failure
	finalizing     bool
	final          jobOutcome // the final backup Job, while finalizing under Snapshot
	waitingFor     string     // what finalization still waits for; "" when done or not finalizing
}

// status computes the Database status from the observed children, the plan
// and template, the pod template of this answer's StatefulSet. With the same observed state and previous conditions it returns the
// same status, whatever now is.
//
// With instances >= 2 (t not nil), Ready is about the primary, and the
// instances, the primaries and the Replicating and FailingOver conditions
// are added; a single server's status has none of them.
func status(d *database, o *observed, p plan, t *topology, template *corev1.PodTemplateSpec, now time.Time) dbv1.DatabaseStatus {
	st := dbv1.DatabaseStatus{
		ObservedGeneration:    d.generation,
		Endpoint:              fmt.Sprintf("%s:%d", d.host(), port),
		CredentialsSecretName: d.secretName(),
		LastBackupTime:        lastBackupTime(o),
		OnDemandBackup:        onDemandStatus(d, o),
	}
	var backupsTemplate *resource.Quantity // the observed backups volume template
	if sts := o.statefulSet; sts != nil {
		st.Size = dbv1.DatabaseSize(sts.Spec.Template.Annotations[sizeAnnotation])
		st.Storage = dataTemplateSize(sts.Spec.VolumeClaimTemplates)
		backupsTemplate = templateSize(sts.Spec.VolumeClaimTemplates, backupsVolume)
	}
	desired := p.replicas
	if t != nil && desired > 0 {
		desired = t.replicas
	}
	r := observeRollout(d, o.statefulSet, desired, template)
	ready := readyCondition(d, r, p)
	if t != nil {
		ready = primaryReadyCondition(d, r, p, t, ready)
	}
	conditions := []metav1.Condition{
		ready,
		progressingCondition(d, r, p),
		backupCondition(d, o, p),
		storageCondition(d, st.Storage, backupsTemplate),
	}
	if t != nil {
		conditions = append(conditions, replicatingCondition(d, p, t), failingOverCondition(d, t))
		instancesStatus(d, t, &st)
	}
	st.Conditions = kube.Conditions(d.conditions, now, conditions...)
	return st
}

func condition(d *database, conditionType string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: message, ObservedGeneration: d.generation}
}

func readyCondition(d *database, r rollout, p plan) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return condition(d, kube.ConditionReady, status, reason, message)
	}
	switch {
	case p.finalizing:
		return c(metav1.ConditionFalse, kube.ReasonTerminating, fmt.Sprintf("deleting with deletionPolicy %s: %s", d.deletionPolicy, orDone(p.waitingFor)))
	case !r.exists:
		return c(metav1.ConditionFalse, kube.ReasonStatefulSetMissing, "StatefulSet "+d.name+" does not exist yet")
	case p.replicas == 0:
		return c(metav1.ConditionFalse, ReasonHibernated, "hibernating: no server runs; the volumes, the Secret and the Services are kept")
	case r.ready >= 1:
		return c(metav1.ConditionTrue, ReasonAvailable, fmt.Sprintf("accepting connections at %s:%d", d.host(), port))
	case p.restoring && p.restoreFailure != nil:
		return c(metav1.ConditionFalse, ReasonRestoreFailed, fmt.Sprintf(
			"restoring backup %s failed: %s; the server does not start on partial data, and the init container tries again (kubectl -n %s logs %s -c init)",
			restoreSource(d), p.restoreFailure.Said, d.namespace, d.podName()))
	case p.restoring:
		return c(metav1.ConditionFalse, kube.ReasonRestoring, fmt.Sprintf(
			"restoring backup %s before the server starts (a large dump may take hours); if it does not end, see kubectl -n %s logs %s -c init: "+
				"a failed restore stops there rather than serve partial data",
			restoreSource(d), d.namespace, d.podName()))
	default:
		return c(metav1.ConditionFalse, ReasonUnavailable, "the server is not ready: "+orDone(r.progress))
	}
}

func progressingCondition(d *database, r rollout, p plan) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return condition(d, kube.ConditionProgressing, status, reason, message)
	}
	switch {
	case p.finalizing:
		return c(metav1.ConditionTrue, kube.ReasonTerminating, orDone(p.waitingFor))
	case p.restoring && p.restoreFailure != nil:
		return c(metav1.ConditionFalse, ReasonRestoreFailed, "restoring backup "+restoreSource(d)+" failed: "+p.restoreFailure.Said)
	case p.restoring:
		return c(metav1.ConditionTrue, kube.ReasonRestoring, "restoring backup "+restoreSource(d)+": "+orDone(r.progress))
	case !r.settled:
		return c(metav1.ConditionTrue, kube.ReasonRollingOut, r.progress)
	case p.replicas == 0:
		return c(metav1.ConditionFalse, ReasonHibernated, "scaled to 0")
	default:
		return c(metav1.ConditionFalse, kube.ReasonRolloutComplete, "the server runs the current revision")
	}
}

func orDone(s string) string {
	if s == "" {
		return "done"
	}
	return s
}

// backupCondition reports the final backup while finalizing under Snapshot,
// else the last run of the backup CronJob.
func backupCondition(d *database, o *observed, p plan) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return condition(d, kube.ConditionBackupSucceeded, status, reason, message)
	}
	if p.finalizing && d.deletionPolicy == dbv1.DeletionSnapshot {
		switch p.final.state {
		case jobSucceeded:
			return c(metav1.ConditionTrue, ReasonFinalBackupSucceeded, "final backup Job "+d.finalBackupJobName()+" succeeded")
		case jobFailed:
			return c(metav1.ConditionFalse, ReasonFinalBackupFailed, fmt.Sprintf(
				"final backup Job %s failed (%s)%s; the Database is kept: delete the Job to try again, or set spec.deletionPolicy to Retain or Delete",
				d.finalBackupJobName(), p.final.reason, backupSaid(o, d.finalBackupJobName())))
		default:
			if o.finalBackupJob == nil && !serverReady(o.statefulSet) {
				return c(metav1.ConditionUnknown, ReasonFinalBackupRunning, "final backup Job "+d.finalBackupJobName()+" starts once the server is ready")
			}
			return c(metav1.ConditionUnknown, ReasonFinalBackupRunning, "final backup Job "+d.finalBackupJobName()+" is running")
		}
	}
	cj := o.cronJob
	if failed := onDemandFailedAt(o); failed != nil && (cj == nil || cj.Status.LastSuccessfulTime == nil || failed.After(cj.Status.LastSuccessfulTime.Time)) {
		return c(metav1.ConditionFalse, ReasonOnDemandBackupFailed, "on-demand backup Job "+d.onDemandJobName()+" failed"+
			backupSaid(o, d.onDemandJobName())+"; set a new "+backupRequestAnnotation+" value to try again")
	}
	if d.backupSchedule == "" {
		if done := onDemandSucceededAt(o); done != nil {
			return c(metav1.ConditionTrue, kube.ReasonBackupSucceeded, "on-demand backup Job "+d.onDemandJobName()+" finished at "+done.UTC().Format(time.RFC3339))
		}
		return c(metav1.ConditionUnknown, kube.ReasonNoBackupSchedule, "spec.backup is not set")
	}
	if cj == nil || (cj.Status.LastScheduleTime == nil && cj.Status.LastSuccessfulTime == nil) {
		return c(metav1.ConditionUnknown, kube.ReasonNoBackupYet, "no backup has run yet on schedule "+d.backupSchedule)
	}
	last, scheduled := cj.Status.LastSuccessfulTime, cj.Status.LastScheduleTime
	onDemand := onDemandSucceededAt(o)
	switch {
	case onDemand != nil && (scheduled == nil || onDemand.After(scheduled.Time)):
		return c(metav1.ConditionTrue, kube.ReasonBackupSucceeded, "on-demand backup Job "+d.onDemandJobName()+" finished at "+onDemand.UTC().Format(time.RFC3339))
	case last != nil && (scheduled == nil || !scheduled.After(last.Time)):
		return c(metav1.ConditionTrue, kube.ReasonBackupSucceeded, "last backup finished at "+last.UTC().Format(time.RFC3339))
	case len(cj.Status.Active) > 0:
		return c(metav1.ConditionUnknown, kube.ReasonBackupRunning, "the backup scheduled at "+scheduled.UTC().Format(time.RFC3339)+" is running")
	default:
		return c(metav1.ConditionFalse, kube.ReasonBackupFailed, "the backup scheduled at "+scheduled.UTC().Format(time.RFC3339)+
			" did not succeed"+backupSaid(o, kube.CronJobRunName(d.cronJobName(), scheduled.Time))+"; see the Jobs of CronJob "+d.cronJobName())
	}
}

// storageCondition compares the requested data volume size with the observed
// volume template. Templates are immutable, so a larger request is not applied
// by the hook: it says how to expand the volumes instead, naming every PVC of
// every instance whose template is smaller than requested: the data volume's
// and, when its template is smaller too (it is made the same size), the
// backups volume's.
func storageCondition(d *database, template, backupsTemplate *resource.Quantity) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return condition(d, ConditionStorageApplied, status, reason, message)
	}
	requested := d.storage.String()
	switch {
	case template == nil || template.Cmp(d.storage) == 0:
		return c(metav1.ConditionTrue, ReasonAsRequested, "data volume template is "+requested)
	case template.Cmp(d.storage) > 0:
		return c(metav1.ConditionTrue, ReasonLargerThanRequested, fmt.Sprintf(
			"data volume template is %s, more than the %s requested; volumes are never shrunk", template.String(), requested))
	}
	backupsToo := backupsTemplate != nil && backupsTemplate.Cmp(d.storage) < 0
	var claims []string
	for ordinal := range int(d.ha.instances) {
		claims = append(claims, kube.ClaimName(dataVolume, d.name, ordinal))
		if backupsToo {
			claims = append(claims, kube.ClaimName(backupsVolume, d.name, ordinal))
		}
	}
	noun := "PVC"
	if len(claims) > 1 {
		noun = "PVCs"
	}
	return c(metav1.ConditionFalse, ReasonExpansionRequired, fmt.Sprintf(
		"%s requested but the data volume template is %s, and StatefulSet volume templates are immutable: "+
			"expand %s %s to %s (their StorageClass must allow volume expansion)", requested, template.String(), noun, strings.Join(claims, ", "), requested))
}

// dataTemplateSize is the storage request of the data volume template.
func dataTemplateSize(templates []corev1.PersistentVolumeClaim) *resource.Quantity {
	return templateSize(templates, dataVolume)
}

// templateSize is the storage request of the volume template named name.
func templateSize(templates []corev1.PersistentVolumeClaim, name string) *resource.Quantity {
	for _, t := range templates {
		if t.Name == name {
			if q, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
				return &q
			}
		}
	}
	return nil
}

// lastBackupTime is the latest of the CronJob's last successful run and the
// completions of the final backup Job and the on-demand backup Job.
func lastBackupTime(o *observed) *metav1.Time {
	var last *metav1.Time
	if o.cronJob != nil {
		last = o.cronJob.Status.LastSuccessfulTime
	}
	for _, j := range []*batchv1.Job{o.finalBackupJob, o.onDemandJob} {
		if done := jobSucceededAt(j); done != nil && (last == nil || done.After(last.Time)) {
			last = done
		}
	}
	return last
}

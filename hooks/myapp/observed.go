package myapp

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/composite"
)

// observed holds the observed children (and related pods) the hook reads;
// nil when absent, and what they fix for good.
type observed struct {
	statefulSet *appsv1.StatefulSet
	// backupsTemplate is the StatefulSet's backups volume template, kept as
	// observed or new (backupsVolumeClaim); nil when it has none.
	backupsTemplate *corev1.PersistentVolumeClaim
	// restored: the observed StatefulSet shows the restore of restoreFrom over.
	restored bool
	// backupCronJobs are the CronJobs of backupCronJobNames, in that order;
	// nil entries are not observed.
	backupCronJobs []*batchv1.CronJob
	// restoreFailures are what refusing restore init containers said, from
	// the related pods (observeRestoreFailures).
	restoreFailures []string
}

func observeChildren(req *composite.Request, a *app) (*observed, error) {
	sts, err := composite.ObservedAs[appsv1.StatefulSet](req, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), a.namespace, a.name)
	if err != nil {
		return nil, err
	}
	o := &observed{statefulSet: sts}
	var templates []corev1.PersistentVolumeClaim
	if sts != nil {
		templates = sts.Spec.VolumeClaimTemplates
	}
	o.backupsTemplate = backupsVolumeClaim(a, templates, sts != nil)
	o.restored = a.restoreFrom != "" && !restoring(a, sts)
	if err := checkRestorable(a, o); err != nil {
		return nil, err
	}
	if o.backupCronJobs, err = observeBackupCronJobs(req, a, o); err != nil {
		return nil, err
	}
	if o.restoreFailures, err = observeRestoreFailures(req, a, o); err != nil {
		return nil, err
	}
	return o, nil
}

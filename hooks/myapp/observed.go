package myapp

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
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
	if err := kube.CheckKeptSelector(sts); err != nil {
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

// observeBackupCronJobs decodes the observed backup CronJobs, in the order of
// backupCronJobNames; an entry is nil when its CronJob is not observed.
func observeBackupCronJobs(req *composite.Request, a *app, o *observed) ([]*batchv1.CronJob, error) {
	names := a.backupCronJobNames(o)
	jobs := make([]*batchv1.CronJob, len(names))
	for i, name := range names {
		cj, err := composite.ObservedAs[batchv1.CronJob](req, batchv1.SchemeGroupVersion.WithKind("CronJob"), a.namespace, name)
		if err != nil {
			return nil, err
		}
		jobs[i] = cj
	}
	return jobs, nil
}

// observeRestoreFailures reads, while restoring, the related server pods
// (see Customize) and returns what each failed restore init container said
// last ("<pod>: <line>"), in ordinal order. Without the customize hook there
// are no related pods and nothing is known.
func observeRestoreFailures(req *composite.Request, a *app, o *observed) ([]string, error) {
	if a.restoreFrom == "" || o.restored {
		return nil, nil
	}
	var failures []string
	for i := range a.replicas {
		var pod corev1.Pod
		found, err := req.ObservedRelated(corev1.SchemeGroupVersion.WithKind("Pod"), a.namespace, kube.PodName(a.name, int(i)), &pod)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		for _, st := range pod.Status.InitContainerStatuses {
			if st.Name != "restore" {
				continue
			}
			if failure, failed := kube.ContainerFailure(st, ""); failed {
				failures = append(failures, pod.Name+": "+failure.Said)
			}
		}
	}
	return failures, nil
}

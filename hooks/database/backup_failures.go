package database

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// Why a backup failed. backupScript ends every failure with one line
// "backup: FAILED: <reason>", and its container's termination message
// (FallbackToLogsOnError) is the tail of its log. The pods of the backup Jobs
// (the CronJob's runs, the on-demand Job, the final backup Job) are related
// objects (Customize asks for them by the backup component's labels), and
// the status repeats the reason of the newest failed pod of a failed Job:
// the text after the last "FAILED:" of its backup container's termination
// message, at most kube.MaxSaid bytes, or its exit code and reason when it
// wrote no such line. Nothing else of a pod reaches the status.

const (
	backupContainerName = "backup"
	backupFailedMarker  = "FAILED:"
)

// backupPodSelector selects the pods of every backup Job of the Database.
func (d *database) backupPodSelector() map[string]string {
	return kube.ComponentSelector(appName, d.name, kube.ComponentBackup)
}

// observeBackupFailures reads the related backup pods into what the newest
// failed pod of each Job said, by Job name. The keys are read in order and a
// pod replaces another of its Job only when it ended later, so the same
// request gives the same answer.
func observeBackupFailures(req *composite.Request, d *database) (map[string]kube.Failure, error) {
	selector := labels.SelectorFromSet(d.backupPodSelector())
	var failures map[string]kube.Failure
	for _, key := range req.RelatedKeys(podKind) {
		var pod corev1.Pod
		if _, err := req.ObservedRelated(podKind, d.namespace, key, &pod); err != nil {
			return nil, err
		}
		job := jobOfPod(&pod)
		if job == "" || (pod.Namespace != "" && pod.Namespace != d.namespace) || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		for _, st := range pod.Status.ContainerStatuses {
			if st.Name != backupContainerName {
				continue
			}
			f, failed := kube.ContainerFailure(st, backupFailedMarker)
			if !failed {
				continue
			}
			if prev, seen := failures[job]; !seen || f.FinishedAt.After(prev.FinishedAt.Time) {
				if failures == nil {
					failures = map[string]kube.Failure{}
				}
				failures[job] = f
			}
		}
	}
	return failures, nil
}

// jobOfPod is the name of the Job that made pod: its controller, else the
// label the Job controller puts on its pods; "" for another pod.
func jobOfPod(pod *corev1.Pod) string {
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if ref.Kind == "Job" {
			return ref.Name
		}
		return ""
	}
	if name := pod.Labels["batch.kubernetes.io/job-name"]; name != "" {
		return name
	}
	return pod.Labels["job-name"]
}

// backupSaid is ": <what the newest failed pod of Job job said>", or "" when
// no failed pod of it is observed.
func backupSaid(o *observed, job string) string {
	if f, ok := o.backupFailures[job]; ok {
		return ": " + f.Said
	}
	return ""
}

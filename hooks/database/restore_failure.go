package database

import (
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// Why a restore failed. The restore runs in the init container of pod
// <n>-0, which has no probe: a dump that does not load ends it with one line
// "init: FAILED: <reason>", and its termination message (FallbackToLogsOnError)
// is the tail of its log; the kubelet restarts it, and the pod never
// starts. While spec.restoreFrom is set, Customize asks for pod <n>-0 as a
// related object (with instances >= 2 it asks for every instance's pod
// anyway), and the status repeats what its init container said last time
// it failed: the text after the last "FAILED:", at most kube.MaxSaid bytes,
// or its exit code and reason (issue 31: a failed restore never reached
// the status, which said "restoring ...: done").

// restoreFailedMarker is what lib.sh's fail writes before the reason.
const restoreFailedMarker = "FAILED:"

// observeRestoreFailure reads the related pod <n>-0: what its init
// container said when it last failed, or nil.
func observeRestoreFailure(req *composite.Request, d *database) (*kube.Failure, error) {
	if d.restore == nil {
		return nil, nil
	}
	var pod corev1.Pod
	found, err := req.ObservedRelated(podKind, d.namespace, d.podName(), &pod)
	if err != nil || !found {
		return nil, err
	}
	for _, st := range pod.Status.InitContainerStatuses {
		if st.Name != initContainerName {
			continue
		}
		if f, failed := kube.ContainerFailure(st, restoreFailedMarker); failed {
			return &f, nil
		}
	}
	return nil, nil
}

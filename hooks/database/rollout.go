package database

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/kube"
)

// rollout summarises the observed StatefulSet against the desired replicas.
type rollout struct {
	exists   bool
	ready    int32
	settled  bool   // the pod template is current and the StatefulSet has settled on it
	progress string // what is still under way, when not settled
}

// observeRollout compares the observed StatefulSet with what the hook wants:
// desired replicas on template, the pod template this answer gives. A
// template change not yet applied (kube.TemplateChange: an image, the
// configuration or template hash, the restore machinery added or dropped)
// is progress from this very answer on.
func observeRollout(d *database, sts *appsv1.StatefulSet, desired int32, template *corev1.PodTemplateSpec) rollout {
	if sts == nil {
		return rollout{progress: "StatefulSet not created yet"}
	}
	r := rollout{exists: true, ready: sts.Status.ReadyReplicas}
	if change := kube.TemplateChange(sts, template); change != "" {
		r.progress = fmt.Sprintf("updating the server to size %s and image %s: %s", d.size, d.image, change)
	} else {
		r.progress = kube.RolloutProgress(sts, desired)
	}
	r.settled = r.progress == ""
	return r
}

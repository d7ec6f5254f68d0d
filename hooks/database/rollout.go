package database

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

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
// desired replicas, and a pod template with the configuration hash and image
// of the spec (a size or image change not yet applied is still progress).
func observeRollout(d *database, sts *appsv1.StatefulSet, desired int32) rollout {
	if sts == nil {
		return rollout{progress: "StatefulSet not created yet"}
	}
	r := rollout{exists: true, ready: sts.Status.ReadyReplicas}
	if !templateCurrent(d, sts) {
		r.progress = fmt.Sprintf("updating the server to size %s and image %s", d.size, d.image)
	} else {
		r.progress = kube.RolloutProgress(sts, desired)
	}
	r.settled = r.progress == ""
	return r
}

// templateCurrent reports whether the observed pod template already has the
// spec's configuration (size) and image.
func templateCurrent(d *database, sts *appsv1.StatefulSet) bool {
	tpl := sts.Spec.Template
	if tpl.Annotations[kube.ConfigHashAnnotation] != configHash(d) {
		return false
	}
	for _, c := range tpl.Spec.Containers {
		if c.Name == containerName {
			return c.Image == d.image
		}
	}
	return false
}

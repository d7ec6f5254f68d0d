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
// of the spec and the restore machinery when restoring (a size, image or
// restore change not yet applied is still progress). templateHash is the
// hash the desired template carries at instances >= 2 (templateHashKey), ""
// for a single server: any other change of such a template is progress too
// (the reporter's image, a new version's scripts), where a single server's
// shows only once its StatefulSet controller rolls.
func observeRollout(d *database, sts *appsv1.StatefulSet, desired int32, restoring bool, templateHash string) rollout {
	if sts == nil {
		return rollout{progress: "StatefulSet not created yet"}
	}
	r := rollout{exists: true, ready: sts.Status.ReadyReplicas}
	switch change := restoreChange(d, sts, restoring); {
	case !templateCurrent(d, sts):
		r.progress = fmt.Sprintf("updating the server to size %s and image %s", d.size, d.image)
	case change != "":
		r.progress = change
	case templateHash != "" && templateChanging(sts, templateHash):
		r.progress = "the instances' pod template changes: they restart on it one by one, the primary last"
	default:
		r.progress = kube.RolloutProgress(sts, desired)
	}
	r.settled = r.progress == ""
	return r
}

// restoreChange says how the restore the desired pod template carries
// differs from the observed template's, "" when they agree. Adding or
// dropping the restore machinery (the init container's restore variables
// and volume) rolls the server pod though size and image stay: the answer
// that ends a restore is a rollout about to start.
func restoreChange(d *database, sts *appsv1.StatefulSet, restoring bool) string {
	have, want := sts.Spec.Template.Annotations[restoringAnnotation], ""
	if restoring {
		want = restoreSource(d)
	}
	switch {
	case have == want:
		return ""
	case want == "":
		return "the restore of backup " + have + " is over: the server restarts without the restore step"
	case have == "":
		return "the server restarts to restore backup " + want
	}
	return "the server restarts to restore backup " + want + " instead of " + have
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

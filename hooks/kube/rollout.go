package kube

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
)

// RolloutProgress says what an observed StatefulSet still has under way
// towards desired replicas on its latest revision, or "" when it has settled:
// its controller has seen the latest spec, it has the desired replicas, and
// every pod runs the latest revision.
func RolloutProgress(sts *appsv1.StatefulSet, desired int32) string {
	st := sts.Status
	specReplicas := int32(1)
	if sts.Spec.Replicas != nil {
		specReplicas = *sts.Spec.Replicas
	}
	switch {
	case st.ObservedGeneration < sts.Generation:
		return "StatefulSet controller has not observed the latest spec"
	case specReplicas != desired:
		return fmt.Sprintf("scaling from %d to %d replicas", specReplicas, desired)
	case st.Replicas != desired:
		return fmt.Sprintf("%d of %d replicas exist", st.Replicas, desired)
	case st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision:
		return fmt.Sprintf("rolling out revision %s: %d of %d replicas updated", st.UpdateRevision, st.UpdatedReplicas, desired)
	case st.UpdatedReplicas < desired:
		return fmt.Sprintf("%d of %d replicas updated", st.UpdatedReplicas, desired)
	}
	return ""
}

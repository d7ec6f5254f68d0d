package kube

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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

// TemplateChange says how the desired pod template differs from the observed
// StatefulSet's in what a hook sets and the API server never defaults: the
// image of each container and init container (by name), containers added or
// removed, the value of each annotation the desired template carries, and an
// annotation of the hooks' own (AnnotationDomain) that the observed template
// carries and the desired one no longer does (a restore that is over);
// annotations others add (kubectl's restartedAt) are not compared. "" when
// they agree (or nothing is observed). A hook's answer that changes
// the template is a rollout about to start: reporting it as progress from
// that very answer does not depend on a later sync catching the StatefulSet
// controller mid-roll, which a fast roll can finish between two syncs.
func TemplateChange(observed *appsv1.StatefulSet, desired *corev1.PodTemplateSpec) string {
	if observed == nil {
		return ""
	}
	have := &observed.Spec.Template
	for _, list := range []struct {
		noun      string
		want, got []corev1.Container
	}{{"init container", desired.Spec.InitContainers, have.Spec.InitContainers}, {"container", desired.Spec.Containers, have.Spec.Containers}} {
		if len(list.want) != len(list.got) {
			return fmt.Sprintf("pod template changes: %d %ss instead of %d", len(list.want), list.noun, len(list.got))
		}
		images := make(map[string]string, len(list.got))
		for _, c := range list.got {
			images[c.Name] = c.Image
		}
		for _, c := range list.want {
			if image, ok := images[c.Name]; !ok {
				return fmt.Sprintf("pod template changes: %s %s added", list.noun, c.Name)
			} else if image != c.Image {
				return fmt.Sprintf("pod template changes: %s %s image %s instead of %s", list.noun, c.Name, c.Image, image)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(desired.Annotations)) {
		if have.Annotations[k] != desired.Annotations[k] {
			return fmt.Sprintf("pod template changes: annotation %s", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(have.Annotations)) {
		if _, kept := desired.Annotations[k]; !kept && strings.HasPrefix(k, AnnotationDomain) {
			return fmt.Sprintf("pod template changes: annotation %s removed", k)
		}
	}
	return ""
}

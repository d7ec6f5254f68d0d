package kube

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OnNodeOfPod is a pod affinity to the node of the StatefulSet pod podName:
// required, or preferred (weight 100) when a pod may run elsewhere too. A
// ReadWriteOnce volume can be shared by pods on one node, so a Job that reads
// or writes a StatefulSet pod's volume runs beside that pod.
func OnNodeOfPod(podName string, required bool) *corev1.Affinity {
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{appsv1.StatefulSetPodNameLabel: podName}},
		TopologyKey:   corev1.LabelHostname,
	}
	if required {
		return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term},
		}}
	}
	return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term}},
	}}
}

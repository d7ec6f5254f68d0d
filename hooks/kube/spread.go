package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SpreadAcrossNodesAndZones places the pods matching selector on different
// nodes when it can (a preferred pod anti-affinity on the hostname, weight
// 100) and spreads them across zones (maxSkew 1), never blocking scheduling
// (ScheduleAnyway): a cluster with one node or one zone still runs them all.
func SpreadAcrossNodesAndZones(selector map[string]string) (*corev1.Affinity, []corev1.TopologySpreadConstraint) {
	ls := &metav1.LabelSelector{MatchLabels: selector}
	affinity := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight:          100,
			PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: ls, TopologyKey: corev1.LabelHostname},
		}},
	}}
	spread := []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       corev1.LabelTopologyZone,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     ls,
	}}
	return affinity, spread
}

package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSpreadAcrossNodesAndZones(t *testing.T) {
	selector := map[string]string{"app.kubernetes.io/instance": "orders"}
	affinity, spread := SpreadAcrossNodesAndZones(selector)
	terms := affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil || len(terms) != 1 ||
		terms[0].PodAffinityTerm.TopologyKey != corev1.LabelHostname || terms[0].PodAffinityTerm.LabelSelector.MatchLabels["app.kubernetes.io/instance"] != "orders" {
		t.Errorf("want one preferred anti-affinity on the hostname over the selector, got %+v", affinity)
	}
	if len(spread) != 1 || spread[0].TopologyKey != corev1.LabelTopologyZone || spread[0].WhenUnsatisfiable != corev1.ScheduleAnyway || spread[0].MaxSkew != 1 {
		t.Errorf("want one zone spread that never blocks scheduling, got %+v", spread)
	}
}

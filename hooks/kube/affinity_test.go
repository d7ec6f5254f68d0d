package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOnNodeOfPod(t *testing.T) {
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"statefulset.kubernetes.io/pod-name": "orders-0"}},
		TopologyKey:   "kubernetes.io/hostname",
	}
	cases := map[string]struct {
		reason   string
		required bool
		want     *corev1.Affinity
	}{
		"Required": {
			reason:   "a backup Job must run where the volume is attached",
			required: true,
			want:     &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}},
		},
		"Preferred": {
			reason: "a restore may read the volume from another node once its pod is gone",
			want: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: 100, PodAffinityTerm: term},
			}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, OnNodeOfPod("orders-0", tc.required)); diff != "" {
				t.Errorf("%s\nOnNodeOfPod: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

package kube

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRolloutProgress(t *testing.T) {
	three := int32(3)
	settled := appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, CurrentRevision: "r2", UpdateRevision: "r2"}
	sts := func(status appsv1.StatefulSetStatus) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: &three}, Status: status}
	}
	with := func(change func(*appsv1.StatefulSetStatus)) appsv1.StatefulSetStatus {
		s := settled
		change(&s)
		return s
	}
	cases := map[string]struct {
		reason      string
		sts         *appsv1.StatefulSet
		desired     int32
		wantSettled bool
	}{
		"Settled":       {reason: "latest spec seen, all replicas on one revision", sts: sts(settled), desired: 3, wantSettled: true},
		"StaleStatus":   {reason: "the controller has not seen generation 2", sts: sts(with(func(s *appsv1.StatefulSetStatus) { s.ObservedGeneration = 1 })), desired: 3},
		"SpecBehind":    {reason: "the hook wants 4, the StatefulSet still asks for 3", sts: sts(settled), desired: 4},
		"PodsMissing":   {reason: "2 of 3 pods exist", sts: sts(with(func(s *appsv1.StatefulSetStatus) { s.Replicas = 2 })), desired: 3},
		"RollingOut":    {reason: "revisions differ", sts: sts(with(func(s *appsv1.StatefulSetStatus) { s.UpdateRevision = "r3" })), desired: 3},
		"UpdatesBehind": {reason: "updated replicas lag", sts: sts(with(func(s *appsv1.StatefulSetStatus) { s.UpdatedReplicas = 1 })), desired: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			progress := RolloutProgress(tc.sts, tc.desired)
			if (progress == "") != tc.wantSettled {
				t.Errorf("%s\nRolloutProgress = %q, want settled %v", tc.reason, progress, tc.wantSettled)
			}
		})
	}
}

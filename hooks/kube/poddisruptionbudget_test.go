package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOneAtATime(t *testing.T) {
	pdb := OneAtATime(metav1.ObjectMeta{Name: "orders", Namespace: "shop"}, map[string]string{"a": "b"})
	if pdb.Name != "orders" || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil ||
		pdb.Spec.Selector.MatchLabels["a"] != "b" || pdb.APIVersion != "policy/v1" || pdb.Kind != "PodDisruptionBudget" {
		t.Errorf("want policy/v1 PodDisruptionBudget orders, maxUnavailable 1 over the selector, got %+v", pdb)
	}
}

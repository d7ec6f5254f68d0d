package myapp

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// podDisruptionBudget is PodDisruptionBudget <name>, allowing one voluntary
// disruption at a time; nil unless spec.highAvailability is true.
func podDisruptionBudget(a *app, selector map[string]string) *policyv1.PodDisruptionBudget {
	if !a.highAvailability {
		return nil
	}
	maxUnavailable := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      a.name,
			Namespace: a.namespace,
			Labels:    a.objectLabels(),
		},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &maxUnavailable,
			Selector:       &metav1.LabelSelector{MatchLabels: selector},
		},
	}
}

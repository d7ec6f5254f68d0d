package myapp

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/kube"
)

// podDisruptionBudget is PodDisruptionBudget <name>, allowing one voluntary
// disruption at a time; nil unless spec.highAvailability is true.
func podDisruptionBudget(a *app, selector map[string]string) *policyv1.PodDisruptionBudget {
	if !a.highAvailability {
		return nil
	}
	return kube.OneAtATime(metav1.ObjectMeta{Name: a.name, Namespace: a.namespace, Labels: a.objectLabels()}, selector)
}

package database

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/kube"
)

// podDisruptionBudget is PodDisruptionBudget <name> (instances >= 2): at most
// one instance may be evicted at a time, so a drain never takes the primary
// and a standby at once (a drained primary fails over to a standby that
// stays).
func podDisruptionBudget(d *database, selector map[string]string, t *topology) *policyv1.PodDisruptionBudget {
	if t == nil {
		return nil
	}
	return kube.OneAtATime(metav1.ObjectMeta{Name: d.name, Namespace: d.namespace, Labels: d.objectLabels()}, selector)
}

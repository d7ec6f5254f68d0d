package kube

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
)

// KeptSelector is the selector a StatefulSet must go on with: the observed
// StatefulSet's matchLabels when there is one (a StatefulSet selector is
// immutable, so it is kept even if the labelling scheme ever changes), else
// fresh. The result is the caller's to change. An observed selector with
// matchExpressions is not one the hooks write, so fresh is used then.
func KeptSelector(observed *appsv1.StatefulSet, fresh map[string]string) map[string]string {
	if observed == nil || observed.Spec.Selector == nil || len(observed.Spec.Selector.MatchExpressions) > 0 || observed.Spec.Selector.MatchLabels == nil {
		return fresh
	}
	return maps.Clone(observed.Spec.Selector.MatchLabels)
}

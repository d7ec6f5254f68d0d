package kube

import (
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"metahooks/hooks/composite"
)

// KeptSelector is the selector a StatefulSet must go on with: the observed
// StatefulSet's matchLabels when there is one (a StatefulSet selector is
// immutable, so it is kept even if the labelling scheme ever changes), else
// fresh. The result is the caller's to change. An observed selector with
// matchExpressions is not one the hooks write, so fresh is used then.
// Callers check it first (CheckKeptSelector).
func KeptSelector(observed *appsv1.StatefulSet, fresh map[string]string) map[string]string {
	if observed == nil || observed.Spec.Selector == nil || len(observed.Spec.Selector.MatchExpressions) > 0 || observed.Spec.Selector.MatchLabels == nil {
		return fresh
	}
	return maps.Clone(observed.Spec.Selector.MatchLabels)
}

// MaxKeptSelectorLabels bounds the observed selector a hook keeps. The hooks
// write three labels; the answer copies the kept selector into the
// StatefulSet, its pods, their spread constraints, the Services, the PDB and
// the status, so 100,000 labels in one forged request took 307 MB (issue 30).
const MaxKeptSelectorLabels = 16

// CheckKeptSelector refuses an observed StatefulSet (the child of the given
// name) whose selector no API server holds or no hook wrote: more than
// MaxKeptSelectorLabels labels, or a key or value that is no label's.
func CheckKeptSelector(observed *appsv1.StatefulSet) error {
	if observed == nil || observed.Spec.Selector == nil {
		return nil
	}
	field := fmt.Sprintf("children[%q][%q].spec.selector.matchLabels", "StatefulSet.apps/v1", observed.Name)
	labels := observed.Spec.Selector.MatchLabels
	if len(labels) > MaxKeptSelectorLabels {
		return &composite.RequestError{Field: field, Reason: fmt.Sprintf("%d labels; a selector the hooks write has at most %d", len(labels), MaxKeptSelectorLabels)}
	}
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return &composite.RequestError{Field: field, Reason: "a key that is no label key: " + errs[0]}
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return &composite.RequestError{Field: field, Reason: "a value that is no label value: " + errs[0]}
		}
	}
	return nil
}

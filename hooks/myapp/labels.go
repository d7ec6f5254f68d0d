package myapp

import "metahooks/hooks/kube"

// objectLabels are the labels on every child of the app: one map, built on
// the first call, that every child's metadata shares, so no builder may
// change it.
func (a *app) objectLabels() map[string]string {
	if a.labels == nil {
		a.labels = kube.Labels(appName, a.name)
	}
	return a.labels
}

// podLabels are the labels of the pods of one component (the server pods or
// the backup pods), so selectors of one never match the other, with every
// label of selector (nil for none): the server pods carry the kept selector.
func (a *app) podLabels(component string, selector map[string]string) map[string]string {
	return kube.PodLabels(appName, a.name, component, selector)
}

// selector selects the server pods: the observed StatefulSet's selector when
// there is one (a StatefulSet selector is immutable), else name, instance and
// component.
func (a *app) selector(o *observed) map[string]string {
	return kube.KeptSelector(o.statefulSet, kube.ComponentSelector(appName, a.name, kube.ComponentServer))
}

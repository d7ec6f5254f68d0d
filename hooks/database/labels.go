package database

import "metahooks/hooks/kube"

// objectLabels are the labels on every child of the Database: one map,
// built on the first call, that every child's metadata shares, so no builder
// may change it.
func (d *database) objectLabels() map[string]string {
	if d.labels == nil {
		d.labels = kube.Labels(appName, d.name)
	}
	return d.labels
}

// podLabels are the labels of the pods of one component (the server pod or
// the backup pods), so the selector of one never matches the other, with
// every label of selector (nil for none).
func (d *database) podLabels(component string, selector map[string]string) map[string]string {
	return kube.PodLabels(appName, d.name, component, selector)
}

// selector selects the server pod: the observed StatefulSet's selector (a
// StatefulSet selector is immutable) when there is one, else name, instance
// and component.
func (d *database) selector(o *observed) map[string]string {
	return kube.KeptSelector(o.statefulSet, kube.ComponentSelector(appName, d.name, kube.ComponentServer))
}

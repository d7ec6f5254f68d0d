package kube

import (
	"maps"
)

// Label keys and values every child carries.
const (
	// ManagedBy is the app.kubernetes.io/managed-by value on every child.
	ManagedBy = "metahooks"
	// ComponentLabel tells the pods of one parent apart by role (the server
	// pods, the backup pods), so the selector of one never matches the other.
	ComponentLabel = "app.kubernetes.io/component"
	// ComponentServer and ComponentBackup are the ComponentLabel values of
	// the pods that serve and of the pods that take backups.
	ComponentServer = "server"
	ComponentBackup = "backup"
)

// Labels returns the recommended app.kubernetes.io labels for a child of the
// parent instance: name (what runs), instance (the parent's name) and managed-by.
// SelectorLabels is the stable subset used in selectors, which never changes for
// the life of the parent.
func Labels(appName, instance string) map[string]string {
	labels := SelectorLabels(appName, instance)
	labels["app.kubernetes.io/managed-by"] = ManagedBy
	return labels
}

// SelectorLabels returns the labels that select the parent's pods: name and instance.
func SelectorLabels(appName, instance string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     appName,
		"app.kubernetes.io/instance": instance,
	}
}

// ComponentSelector selects the pods of one component of the parent instance:
// name, instance and component.
func ComponentSelector(appName, instance, component string) map[string]string {
	l := SelectorLabels(appName, instance)
	l[ComponentLabel] = component
	return l
}

// PodLabels are the labels of the pods of one component of the parent
// instance: Labels and the component, plus every label of selector (nil for
// none), so that the pods of a StatefulSet keep matching its kept selector.
func PodLabels(appName, instance, component string, selector map[string]string) map[string]string {
	l := Labels(appName, instance)
	l[ComponentLabel] = component
	maps.Copy(l, selector)
	return l
}

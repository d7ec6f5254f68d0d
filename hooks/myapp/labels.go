package myapp

import (
	"maps"

	"k8s.io/apimachinery/pkg/labels"

	"metahooks/hooks/composite"
)

// objectLabels are the labels on every child of the app.
func (a *app) objectLabels() map[string]string {
	return composite.Labels(appName, a.name)
}

// podLabels are the labels of the pods of one component (the server pods or
// the backup pods), so selectors of one never match the other.
func (a *app) podLabels(component string) map[string]string {
	l := a.objectLabels()
	l["app.kubernetes.io/component"] = component
	if component == componentServer {
		maps.Copy(l, a.observedSelector) // the pods must keep matching the kept selector
	}
	return l
}

// selectorLabels select the server pods: the observed StatefulSet's selector
// when there is one (a StatefulSet selector is immutable, so it is kept even if
// the labelling scheme ever changes), else name, instance and component.
func (a *app) selectorLabels() map[string]string {
	if a.observedSelector != nil {
		return maps.Clone(a.observedSelector)
	}
	l := composite.SelectorLabels(appName, a.name)
	l["app.kubernetes.io/component"] = componentServer
	return l
}

// selectorString is selectorLabels as a label selector string, for the scale
// subresource's status.selector.
func (a *app) selectorString() string {
	return labels.SelectorFromSet(a.selectorLabels()).String()
}

func (a *app) configMapName() string { return a.name + "-config" }
func (a *app) cronJobName() string   { return a.name + "-backup" }

// firstPodName is the name of the StatefulSet's pod 0; its data volume is
// data-<name>-0.
func (a *app) firstPodName() string { return a.name + "-0" }

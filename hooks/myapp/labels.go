package myapp

import (
	"k8s.io/apimachinery/pkg/labels"

	"metahooks/hooks/kube"
)

// objectLabels are the labels on every child of the app.
func (a *app) objectLabels() map[string]string {
	return kube.Labels(appName, a.name)
}

// podLabels are the labels of the pods of one component (the server pods or
// the backup pods), so selectors of one never match the other. The server pods
// carry the kept selector too.
func (a *app) podLabels(component string) map[string]string {
	var selector map[string]string
	if component == componentServer {
		selector = a.selector
	}
	return kube.PodLabels(appName, a.name, component, selector)
}

// selectorLabels select the server pods: the observed StatefulSet's selector
// when there is one (kube.KeptSelector), else name, instance and component.
func (a *app) selectorLabels() map[string]string {
	if a.selector != nil {
		return a.selector
	}
	return kube.ComponentSelector(appName, a.name, componentServer)
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
func (a *app) firstPodName() string { return kube.PodName(a.name, 0) }

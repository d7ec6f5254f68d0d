package myapp

import "metahooks/hooks/kube"

// Names of MyApp's children and of what is inside them; labels are in
// labels.go.
const (
	appName         = "myapp"
	containerName   = "app"
	portName        = "app"
	dataVolume      = "data"
	configVolume    = "config"
	configMountPath = "/etc/myapp"
)

func (a *app) configMapName() string { return a.name + "-config" }
func (a *app) cronJobName() string   { return a.name + "-backup" }

// firstPodName is the name of the StatefulSet's pod 0; its data volume is
// data-<name>-0.
func (a *app) firstPodName() string { return kube.PodName(a.name, 0) }

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

// Restore bookkeeping on the StatefulSet.
const (
	// restoringAnnotation marks a pod template that carries the restore init
	// container; its value is spec.restoreFrom.
	restoringAnnotation = kube.RestoringAnnotation
	// restoredAnnotation marks a StatefulSet whose restore is over (every
	// replica restored and ready). From then on the init container is left
	// out, so replicas added later start on empty volumes, as they would
	// without restoreFrom.
	restoredAnnotation = kube.RestoredAnnotation
)

// Paths and names of the default backup and the restore.
const (
	backupsVolume     = "backups" // volumeClaimTemplate: PVC backups-<name>-<i>
	backupsMountPath  = "/backups"
	archiveDataPath   = "/data" // the data volume in the archive and restore containers
	restoredMarker    = ".metahooks-restored"
	restoringMarker   = ".metahooks-restore-incomplete"
	backupStampLayout = "20060102T150405Z" // a backup's name: the UTC time its run was scheduled for
)

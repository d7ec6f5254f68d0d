package database

import "metahooks/hooks/kube"

// Names, ports and paths of Database's children.
const (
	appName = "database"

	componentServer  = "server"
	componentBackup  = "backup"
	containerName    = "postgres"
	portName         = "postgres"
	port             = 5432
	dataVolume       = "data"    // volumeClaimTemplate: PVC data-<name>-0
	backupsVolume    = "backups" // volumeClaimTemplate: PVC backups-<name>-0
	configVolume     = "config"
	shmVolume        = "dshm"
	dataMountPath    = "/var/lib/postgresql/data"
	pgdataPath       = dataMountPath + "/pgdata" // a subdirectory: the mount root may hold lost+found
	backupsMountPath = "/backups"
	configMountPath  = "/etc/postgresql"
	configFileName   = "postgresql.conf"
	configHashKey    = "example.com/config-hash"
	postgresUID      = 999 // the postgres user of the official image
	username         = "app"
	databaseName     = "app"
)

// objectLabels are the labels on every child of the Database.
func (d *database) objectLabels() map[string]string {
	return kube.Labels(appName, d.name)
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
	return kube.KeptSelector(o.statefulSet, kube.ComponentSelector(appName, d.name, componentServer))
}

func (d *database) headlessServiceName() string { return d.name + "-headless" }
func (d *database) secretName() string          { return d.name + "-credentials" }
func (d *database) configMapName() string       { return d.name + "-config" }
func (d *database) cronJobName() string         { return d.name + "-backup" }
func (d *database) finalBackupJobName() string  { return d.name + "-final-backup" }
func (d *database) podName() string             { return kube.PodName(d.name, 0) }

// host is the DNS name of the client Service.
func (d *database) host() string { return d.name + "." + d.namespace + ".svc" }

// backupsClaimName is the PVC the StatefulSet controller makes from the
// backups volumeClaimTemplate for pod 0 of the Database named name.
func backupsClaimName(name string) string { return kube.ClaimName(backupsVolume, name, 0) }

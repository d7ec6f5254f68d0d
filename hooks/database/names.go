package database

import (
	"maps"

	"metahooks/hooks/composite"
)

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
	return composite.Labels(appName, d.name)
}

// podLabels are the labels of the pods of one component (the server pod or
// the backup pods), so the selector of one never matches the other.
func (d *database) podLabels(component string) map[string]string {
	l := d.objectLabels()
	l["app.kubernetes.io/component"] = component
	return l
}

// selectorLabels select the server pod: name, instance and component.
func (d *database) selectorLabels() map[string]string {
	l := composite.SelectorLabels(appName, d.name)
	l["app.kubernetes.io/component"] = componentServer
	return l
}

// selectorFrom returns the selector to use: the observed StatefulSet's (a
// StatefulSet selector is immutable) when there is one, else selectorLabels.
func (d *database) selectorFrom(observed map[string]string) map[string]string {
	if observed != nil {
		return maps.Clone(observed)
	}
	return d.selectorLabels()
}

func (d *database) headlessServiceName() string { return d.name + "-headless" }
func (d *database) secretName() string          { return d.name + "-credentials" }
func (d *database) configMapName() string       { return d.name + "-config" }
func (d *database) cronJobName() string         { return d.name + "-backup" }
func (d *database) finalBackupJobName() string  { return d.name + "-final-backup" }
func (d *database) podName() string             { return d.name + "-0" }

// host is the DNS name of the client Service.
func (d *database) host() string { return d.name + "." + d.namespace + ".svc" }

// backupsClaimName is the PVC the StatefulSet controller makes from the
// backups volumeClaimTemplate for pod 0 of the Database named name.
func backupsClaimName(name string) string { return claimName(backupsVolume, name) }

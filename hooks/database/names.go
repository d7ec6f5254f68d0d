package database

import "metahooks/hooks/kube"

// Names, ports and paths of Database's children; labels are in labels.go.
const (
	appName = "database"

	containerName     = "postgres"
	portName          = "postgres"
	port              = 5432
	dataVolume        = "data"    // volumeClaimTemplate: PVC data-<name>-0
	backupsVolume     = "backups" // volumeClaimTemplate: PVC backups-<name>-0
	configVolume      = "config"
	shmVolume         = "dshm"
	dataMountPath     = "/var/lib/postgresql/data"
	pgdataPath        = dataMountPath + "/pgdata" // a subdirectory: the mount root may hold lost+found
	backupsMountPath  = "/backups"
	configMountPath   = "/etc/postgresql"
	configFileName    = "postgresql.conf"
	topologyVolume    = "topology" // instances >= 2: ConfigMap <name>-topology
	topologyMountPath = "/etc/topology"
	hbaFileName       = "pg_hba.conf"
	runVolume         = "run" // emptyDir: the server's socket, shared by its containers
	runMountPath      = "/run/metahooks"
	initContainerName = "init"
	superuserName     = "postgres"
	postgresUID       = 999 // the postgres user of the official image
	username          = "app"
	databaseName      = "app"
)

// Annotations the hook writes and reads back.
const (
	// templateHashKey on the pod template (instances >= 2 only) is the hash
	// of the template itself: an observed one without this answer's is about
	// to roll, and the primary is updated last.
	templateHashKey = "example.com/template-hash"
	// sizeAnnotation on the pod template records the size the pod runs with.
	sizeAnnotation = "example.com/size"
	// restoringAnnotation marks a pod template that carries the restore
	// machinery; its value names the backup.
	restoringAnnotation = kube.RestoringAnnotation
	// restoredAnnotation marks a StatefulSet whose restore is over (loaded, or
	// skipped because the volume already held a database). Its value names
	// the backup, and from then on the machinery is left out of the template,
	// so the pod never depends on the source volume again.
	restoredAnnotation = kube.RestoredAnnotation
	// backupRequestAnnotation on the Database, set by the user, asks for one
	// backup run: Job <name>-backup-<hash of the value>. A new value asks for
	// a new run; removing it removes the Job.
	backupRequestAnnotation = "example.com/backup-request"
)

func (d *database) headlessServiceName() string { return d.name + "-headless" }
func (d *database) secretName() string          { return d.name + "-credentials" }
func (d *database) superuserSecretName() string { return d.name + "-superuser" }
func (d *database) configMapName() string       { return d.name + "-config" }
func (d *database) cronJobName() string         { return d.name + "-backup" }
func (d *database) finalBackupJobName() string  { return d.name + "-final-backup" }
func (d *database) podName() string             { return kube.PodName(d.name, 0) }
func (d *database) topologyName() string        { return d.name + "-topology" }
func (d *database) readOnlyServiceName() string { return d.name + "-ro" }
func (d *database) anyServiceName() string      { return d.name + "-r" }

// host is the DNS name of the client Service.
func (d *database) host() string { return d.name + "." + d.namespace + ".svc" }

// backupsClaimName is the PVC the StatefulSet controller makes from the
// backups volumeClaimTemplate for pod 0 of the Database named name.
func backupsClaimName(name string) string { return kube.ClaimName(backupsVolume, name, 0) }

// claimNames are the PVCs the StatefulSet controller makes from the data and
// backups volumeClaimTemplates for every ordinal spec.instances allows
// (pod 0's first): a Database that ran more instances than it runs now keeps
// their volumes (whenScaled Retain), and deletionPolicy is about them too.
func (d *database) claimNames() []string { return d.claimNamesOf(maxInstances) }

// claimNamesOf are the PVCs of the pods of ordinals 0 to count-1.
func (d *database) claimNamesOf(count int) []string {
	names := make([]string, 0, 2*count)
	for ordinal := range count {
		names = append(names, kube.ClaimName(dataVolume, d.name, ordinal), kube.ClaimName(backupsVolume, d.name, ordinal))
	}
	return names
}

// The replication role of instances >= 2: the standbys clone, stream and
// rewind as it, with the password of Secret <name>-replication.
const replicationUser = "streaming_replica"

func (d *database) replicationSecretName() string { return d.name + "-replication" }

// instanceDomain is the DNS domain of the instances' pods: <pod>.<domain> is
// one instance, through the headless Service that governs the StatefulSet.
func (d *database) instanceDomain() string {
	return d.headlessServiceName() + "." + d.namespace + ".svc"
}

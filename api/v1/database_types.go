package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DatabaseSize names a sizing preset: CPU, memory, storage and the PostgreSQL
// settings that go with them. The table is in docs/database.md and in the
// documentation of package hooks/database.
//
// +kubebuilder:validation:Enum=small;medium;large
type DatabaseSize string

// The sizing presets.
const (
	SizeSmall  DatabaseSize = "small"
	SizeMedium DatabaseSize = "medium"
	SizeLarge  DatabaseSize = "large"
)

// DeletionPolicy says what happens to the data when a Database is deleted.
//
// +kubebuilder:validation:Enum=Retain;Delete;Snapshot
type DeletionPolicy string

// The deletion policies.
const (
	// DeletionRetain keeps the data volume and the backups volume.
	DeletionRetain DeletionPolicy = "Retain"
	// DeletionDelete deletes the data volume and the backups volume.
	DeletionDelete DeletionPolicy = "Delete"
	// DeletionSnapshot takes a final backup, and only once it has succeeded
	// lets the Database go; both volumes are kept, like Retain.
	DeletionSnapshot DeletionPolicy = "Snapshot"
)

// Defaults the hook applies when a field is unset. The CRD declares the same
// values as schema defaults, so stored objects show them too.
const (
	DefaultDeletionPolicy        = DeletionRetain
	DefaultBackupRetention int32 = 7
	LatestBackup                 = "latest"
)

// Database runs one PostgreSQL server with its credentials, configuration,
// scheduled backups and an optional restore from another Database's backup.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=db,categories=metahooks
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="why it is or is not ready: the Ready condition's reason"
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.status.currentPrimary`
// +kubebuilder:printcolumn:name="Instances",type=integer,JSONPath=`.status.readyInstances`,description="ready instances (with spec.instances of 2 or more)"
// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,priority=1
// +kubebuilder:printcolumn:name="Last Backup",type=date,JSONPath=`.status.lastBackupTime`,description="when the last successful backup finished"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 45",message="`metadata.name` must be at most 45 characters: the CronJob <name>-backup is limited to 52"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lower case letters, digits and '-', starting with a letter): it names a Service"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.primary) || self.spec.primary.startsWith(self.metadata.name + '-')",message="`spec.primary` must name an instance of this Database: <name>-<ordinal>"
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DatabaseSpec   `json:"spec"`
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseSpec is the desired state of a Database.
//
// +kubebuilder:validation:XValidation:rule="!has(self.storage) || ((string(self.storage).size() <= 64 && string(self.storage).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) && !quantity(string(self.storage)).isLessThan(quantity(self.size == 'small' ? '5Gi' : self.size == 'medium' ? '20Gi' : '100Gi')))",message="`spec.storage` must not be smaller than the storage of the size preset (small 5Gi, medium 20Gi, large 100Gi)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.storage) || has(self.storage)",message="`spec.storage` may not be removed once set"
// +kubebuilder:validation:XValidation:rule="(!has(self.storage) || (string(self.storage).size() <= 64 && string(self.storage).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$'))) && ((has(oldSelf.storage) && !(string(oldSelf.storage).size() <= 64 && string(oldSelf.storage).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$'))) || (has(self.storage) ? quantity(string(self.storage)) : quantity(self.size == 'small' ? '5Gi' : self.size == 'medium' ? '20Gi' : '100Gi')).compareTo(has(oldSelf.storage) ? quantity(string(oldSelf.storage)) : quantity(oldSelf.size == 'small' ? '5Gi' : oldSelf.size == 'medium' ? '20Gi' : '100Gi')) >= 0)",message="the effective storage (spec.storage, else the size preset's) may not decrease; set spec.storage to keep the volume size when choosing a smaller size"
// +kubebuilder:validation:XValidation:rule="has(self.restoreFrom) == has(oldSelf.restoreFrom)",message="`spec.restoreFrom` is immutable: it only applies when the Database is created"
// +kubebuilder:validation:XValidation:rule="has(self.storageClassName) == has(oldSelf.storageClassName)",message="`spec.storageClassName` is immutable"
// +kubebuilder:validation:XValidation:rule="!has(self.primary) || int(self.primary.substring(self.primary.size() - 1)) < (has(self.instances) ? self.instances : 1)",message="`spec.primary` must name an instance below spec.instances"
type DatabaseSpec struct {
	// Engine is the database engine. Exactly one member is set; PostgreSQL is
	// the only engine today, and the default.
	// +kubebuilder:default={postgresql:{}}
	// +optional
	Engine *DatabaseEngine `json:"engine,omitempty"`

	// Size is the sizing preset: small, medium or large.
	// +required
	Size DatabaseSize `json:"size"`

	// Image is the server's container image, an official-postgres-compatible
	// image such as postgres:17. Changing it rolls the pod (a minor upgrade);
	// a major version upgrade needs a new Database restored from a backup.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\S+$`
	// +required
	Image string `json:"image"`

	// Storage is the size of the data volume. It defaults to the preset's and
	// may never be smaller than it, nor decrease. A StatefulSet's volume
	// templates are immutable, so growing it after creation is reported in the
	// StorageApplied condition and done by expanding the PVC.
	// +kubebuilder:validation:XValidation:rule="(string(self).size() <= 64 && string(self).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) && (!(string(oldSelf).size() <= 64 && string(oldSelf).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) || !quantity(string(self)).isLessThan(quantity(string(oldSelf))))",message="`spec.storage` may not be decreased"
	// +kubebuilder:validation:XValidation:rule="(string(self).size() <= 64 && string(self).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) && quantity(string(self)).compareTo(quantity('8Pi')) <= 0",message="`spec.storage` is out of range: at most 8Pi"
	// +optional
	Storage *resource.Quantity `json:"storage,omitempty"`

	// StorageClassName of the data and backups volumes; the cluster default
	// when unset. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="`spec.storageClassName` is immutable"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// Backup schedules logical backups (pg_dump) to the backups volume.
	// +optional
	Backup *DatabaseBackup `json:"backup,omitempty"`

	// RestoreFrom loads a backup before the server first starts, into an
	// empty data volume only. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="`spec.restoreFrom` is immutable"
	// +optional
	RestoreFrom *DatabaseRestore `json:"restoreFrom,omitempty"`

	// DeletionPolicy says what happens to the data when the Database is
	// deleted: Retain (keep the volumes), Delete (delete them) or Snapshot
	// (take a final backup first, then keep the volumes).
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Hibernate stops the server (no pods) and suspends backups; the volumes,
	// the Secret and the Services stay. Setting it back to false starts the
	// server on the same data.
	// +kubebuilder:default=false
	// +optional
	Hibernate *bool `json:"hibernate,omitempty"`

	// Instances is the number of PostgreSQL servers: one primary and
	// instances-1 streaming standbys, each cloned from the primary. 1 (the
	// default) is a single server, exactly as without this field. See
	// docs/database.md, High availability.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +optional
	Instances *int32 `json:"instances,omitempty"`

	// Replication configures streaming replication (instances of 2 or more).
	// +optional
	Replication *DatabaseReplication `json:"replication,omitempty"`

	// FailoverDelaySeconds is how long the primary may be not Ready before a
	// standby is promoted in its place (30 when unset).
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=3600
	// +optional
	FailoverDelaySeconds *int32 `json:"failoverDelaySeconds,omitempty"`

	// Primary names the instance (<name>-<ordinal>) that should be the
	// primary. While it differs from the current primary and that instance is
	// a ready, streaming standby, the hook moves the primary there with a
	// planned switchover: the old primary shuts down cleanly first. It stays a
	// preference: after a failover elsewhere the primary moves back to it once
	// it has caught up again. Unset, the primary moves only on failover and
	// during rolling updates.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?-[0-8]$`
	// +kubebuilder:validation:MaxLength=47
	// +optional
	Primary string `json:"primary,omitempty"`
}

// DatabaseReplication configures streaming replication between instances.
type DatabaseReplication struct {
	// Synchronous makes a commit wait until one standby has flushed it, so a
	// failover never loses an acknowledged transaction; true when unset.
	// While no standby is connected, commits wait (they are neither lost nor
	// acknowledged). False (asynchronous) acknowledges commits the standbys
	// may not have yet: a failover may lose the latest of them.
	// +optional
	Synchronous *bool `json:"synchronous,omitempty"`
}

// DatabaseEngine selects the engine, one member per engine. The kind of engine
// is immutable: a Database never changes from one engine to another.
//
// +kubebuilder:validation:XValidation:rule="has(self.postgresql)",message="exactly one engine must be set: `postgresql`"
// +kubebuilder:validation:XValidation:rule="has(self.postgresql) == has(oldSelf.postgresql)",message="the engine is immutable"
type DatabaseEngine struct {
	// PostgreSQL runs the official postgres image (or a compatible one).
	// +optional
	PostgreSQL *PostgreSQLEngine `json:"postgresql,omitempty"`
}

// PostgreSQLEngine holds PostgreSQL-specific settings; none yet.
type PostgreSQLEngine struct{}

// DatabaseBackup schedules backups.
type DatabaseBackup struct {
	// Schedule is a standard 5-field cron line ("30 2 * * *"), in the time
	// zone of the kube-controller-manager; no TZ= or CRON_TZ= prefix.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^\s*[^\s=]+(\s+[^\s=]+){4}\s*$`
	// +required
	Schedule string `json:"schedule"`

	// Retention is the number of dumps kept on the backups volume; older ones
	// are deleted after each successful backup.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=7
	// +optional
	Retention *int32 `json:"retention,omitempty"`
}

// DatabaseRestore names a backup to start a new Database from.
type DatabaseRestore struct {
	// Database is the name of the Database, in the same namespace, whose
	// backups volume holds the dump. It may be deleted (with deletionPolicy
	// Retain or Snapshot, which keep its volumes) or still running.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Database string `json:"database"`

	// Backup is the dump file name on that volume ("20261130T020000Z.dump"),
	// or "latest" for the newest one.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^(latest|[0-9A-Za-z][0-9A-Za-z._-]*\.dump)$`
	// +kubebuilder:default=latest
	// +optional
	Backup string `json:"backup,omitempty"`
}

// DatabaseStatus is the observed state of a Database, computed from its
// observed children only.
type DatabaseStatus struct {
	// ObservedGeneration is the generation this status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Size is the sizing preset in effect.
	// +optional
	Size DatabaseSize `json:"size,omitempty"`

	// Storage is the size of the data volume template in effect.
	// +optional
	Storage *resource.Quantity `json:"storage,omitempty"`

	// Endpoint is the host:port clients connect to.
	// +kubebuilder:validation:MaxLength=259
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// CredentialsSecretName is the Secret holding username, password,
	// database, host, port and uri.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	CredentialsSecretName string `json:"credentialsSecretName,omitempty"`

	// LastBackupTime is when the last successful backup finished, from the
	// backup CronJob or the final backup Job.
	// +optional
	LastBackupTime *metav1.Time `json:"lastBackupTime,omitempty"`

	// OnDemandBackup is the backup asked for with the annotation
	// example.com/backup-request, while the annotation is set.
	// +optional
	OnDemandBackup *OnDemandBackupStatus `json:"onDemandBackup,omitempty"`

	// CurrentPrimary is the instance that is the primary: the one the
	// topology names, once its pod is ready and (when it reports) says it is
	// the primary. Empty while that is not known. Only with instances >= 2.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	CurrentPrimary string `json:"currentPrimary,omitempty"`

	// TargetPrimary is the instance the hook wants as primary: the topology's
	// primary, or the target of a switchover under way.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	TargetPrimary string `json:"targetPrimary,omitempty"`

	// ReadyInstances counts the instances whose pod is ready.
	// +optional
	ReadyInstances *int32 `json:"readyInstances,omitempty"`

	// Instances are the instances, by ordinal, as observed.
	// +kubebuilder:validation:MaxItems=9
	// +listType=map
	// +listMapKey=name
	// +optional
	Instances []InstanceStatus `json:"instances,omitempty"`

	// LastPrimaryChange is the last failover or switchover the hook decided.
	// +optional
	LastPrimaryChange *PrimaryChange `json:"lastPrimaryChange,omitempty"`

	// Conditions: Ready (the server accepts connections on the current
	// revision), Progressing (a rollout, restore, hibernation or deletion is
	// under way), BackupSucceeded (the last backup) and StorageApplied (the
	// data volume template has the requested size); with instances >= 2 also
	// Replicating (every standby streams from the primary) and FailingOver
	// (the primary is unavailable and a standby is, or cannot be, promoted).
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OnDemandBackupState is where an on-demand backup Job is.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type OnDemandBackupState string

// On-demand backup states.
const (
	// OnDemandBackupPending: the Job is not observed yet, or cannot run yet
	// (the message says why).
	OnDemandBackupPending OnDemandBackupState = "Pending"
	// OnDemandBackupRunning: the Job exists and has not finished.
	OnDemandBackupRunning OnDemandBackupState = "Running"
	// OnDemandBackupSucceeded: the Job completed.
	OnDemandBackupSucceeded OnDemandBackupState = "Succeeded"
	// OnDemandBackupFailed: the Job failed; set a new request value to try again.
	OnDemandBackupFailed OnDemandBackupState = "Failed"
)

// OnDemandBackupStatus is the run asked for by the annotation
// example.com/backup-request.
type OnDemandBackupStatus struct {
	// Request is the annotation's value.
	// +kubebuilder:validation:MaxLength=256
	Request string `json:"request"`

	// Job is the Job that runs the backup: <name>-backup-<first 8 hex digits
	// of the SHA-256 of Request>.
	// +kubebuilder:validation:MaxLength=253
	Job string `json:"job"`

	// State is Pending, Running, Succeeded or Failed.
	State OnDemandBackupState `json:"state"`

	// CompletionTime is when the Job succeeded.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Message says why a Pending backup does not run, or why it failed.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Message string `json:"message,omitempty"`
}

// InstanceStatus is one instance as observed.
type InstanceStatus struct {
	// Name is the pod's name, <name>-<ordinal>.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Role is what the topology makes it: primary or standby.
	// +kubebuilder:validation:MaxLength=32
	Role string `json:"role"`
	// Ready is the pod's Ready condition.
	Ready bool `json:"ready"`
	// State is what the instance last reported about itself (see
	// docs/database.md), or "unreported".
	// +kubebuilder:validation:MaxLength=128
	// +optional
	State string `json:"state,omitempty"`
	// LagBytes is how far the standby's received WAL is behind the
	// primary's, in bytes, when both have reported on the same timeline.
	// +optional
	LagBytes *int64 `json:"lagBytes,omitempty"`
}

// PrimaryChange is a failover or switchover decided by the hook.
type PrimaryChange struct {
	// From is the primary before the change.
	// +kubebuilder:validation:MaxLength=63
	From string `json:"from"`
	// To is the primary after the change.
	// +kubebuilder:validation:MaxLength=63
	To string `json:"to"`
	// Reason is Failover, Switchover or RollingUpdate.
	// +kubebuilder:validation:MaxLength=32
	Reason string `json:"reason"`
	// Time is when the hook decided it.
	Time metav1.Time `json:"time"`
}

// DatabaseList is a list of Database.
//
// +kubebuilder:object:root=true
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults the hook applies when a field is unset. The CRD declares the same
// values as schema defaults, so stored objects show them too.
const (
	DefaultReplicaCount int32 = 1
	DefaultPort         int32 = 8080
	DefaultStorageSize        = "1Gi"
	DefaultMountPath          = "/data"

	// DefaultBackupRetention is how many archives of each replica the default
	// backup keeps on that replica's backups volume.
	DefaultBackupRetention int32 = 7
	// DefaultBackupImage runs the default backup and the restore: it needs
	// only /bin/sh, tar, gzip, find, sort and date, which busybox has.
	DefaultBackupImage = "busybox:1.37"
	// LatestBackup in spec.restoreFrom restores each replica's newest archive.
	LatestBackup = "latest"
)

// BackupNamePattern is the shape of spec.restoreFrom: "latest" or a backup
// name, the UTC time the backup was scheduled for (20261201T020000Z).
const BackupNamePattern = `^(latest|[0-9]{8}T[0-9]{6}Z)$`

// CronPattern is the shape of a standard 5-field cron line ("0 2 * * *"). The
// hook parses the line fully as well; the pattern keeps obvious mistakes, such
// as a 6-field line with seconds, out of the API server.
const CronPattern = `^\s*\S+(\s+\S+){4}\s*$`

// MyApp runs a stateful application as a StatefulSet with a headless Service and
// a ConfigMap, and optionally a PodDisruptionBudget and backup CronJobs.
//
// Its name is at most 52 characters: StatefulSet pod names and the
// controller-revision-hash label need 11 more. With a backupSchedule the
// CronJobs (at most 52 characters) need more: the default backup's CronJob
// <name>-backup-<ordinal> allows 44 minus the digits of the highest ordinal,
// spec.backup.command's CronJob <name>-backup allows 45.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ma,categories=metahooks
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicaCount,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="why it is or is not ready: the Ready condition's reason"
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicaCount`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Last Backup",type=date,JSONPath=`.status.lastBackupTime`
// +kubebuilder:printcolumn:name="Backup",type=string,JSONPath=`.status.lastBackupName`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 52",message="metadata.name must be at most 52 characters: the StatefulSet's pod names need the rest"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.backupSchedule) || (has(self.spec.backup) && has(self.spec.backup.command) ? size(self.metadata.name) <= 45 : size(self.metadata.name) + size(string(self.spec.replicaCount - 1)) <= 44)",message="metadata.name is too long for spec.backupSchedule: the CronJobs <name>-backup-<ordinal> (or <name>-backup with spec.backup.command) may have at most 52 characters"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lower case letters, digits and '-', starting with a letter): it names a Service"
type MyApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MyAppSpec   `json:"spec"`
	Status MyAppStatus `json:"status,omitempty"`
}

// MyAppSpec is the desired state of a MyApp.
//
// +kubebuilder:validation:XValidation:rule="has(self.restoreFrom) == has(oldSelf.restoreFrom)",message="spec.restoreFrom is immutable: it only seeds the data volumes of a new MyApp",fieldPath=".restoreFrom",reason=FieldValueForbidden
type MyAppSpec struct {
	// ReplicaCount is the number of pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	ReplicaCount *int32 `json:"replicaCount,omitempty"`

	// Image is the container image of the application, e.g. "nginx:1.27"; it
	// may not contain whitespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\S+$`
	// +required
	Image string `json:"image"`

	// Config holds key/values rendered into the ConfigMap <name>-config. The pods
	// get them as environment variables and as files under /etc/myapp; a change
	// rolls the pods. At most 1024 entries; keys and values share the
	// ConfigMap's 1 MiB.
	// +kubebuilder:validation:MaxProperties=1024
	// +optional
	Config map[string]string `json:"config,omitempty"`

	// Port is the port the application listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	Port *int32 `json:"port,omitempty"`

	// Resources are the application container's requests and limits.
	// (cpu and memory: a rule over every key would exceed the CEL cost budget;
	// the hook checks every resource.) At most 32 limits and 32 requests;
	// claims are refused: the pods have no resource claims to name.
	// +kubebuilder:validation:XValidation:rule="(!has(self.limits) || size(self.limits) <= 32) && (!has(self.requests) || size(self.requests) <= 32)",message="spec.resources may have at most 32 limits and 32 requests"
	// +kubebuilder:validation:XValidation:rule="!has(self.claims)",message="spec.resources.claims is not supported: the pods have no resource claims to name"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || ['cpu', 'memory'].all(k, !(k in self.requests) || !(k in self.limits) || ((string(self.requests[k]).size() <= 64 && string(self.requests[k]).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) && (string(self.limits[k]).size() <= 64 && string(self.limits[k]).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) && quantity(string(self.requests[k])).compareTo(quantity(string(self.limits[k]))) <= 0))",message="spec.resources.requests must be less than or equal to spec.resources.limits"
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// HighAvailability adds a PodDisruptionBudget (maxUnavailable 1), preferred
	// pod anti-affinity across nodes and a topology spread across zones.
	// +optional
	HighAvailability *bool `json:"highAvailability,omitempty"`

	// BackupSchedule is a 5-field cron line ("0 2 * * *"). When set, every
	// replica's data volume is archived on that schedule (the default backup,
	// see MyAppBackup), or spec.backup.command runs instead when it is set.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^\s*\S+(\s+\S+){4}\s*$`
	// +optional
	BackupSchedule string `json:"backupSchedule,omitempty"`

	// Backup tunes the backups; none of it is needed.
	// +optional
	Backup *MyAppBackup `json:"backup,omitempty"`

	// RestoreFrom seeds the data volume of every replica of a new MyApp from
	// the default backup before its pods start: "latest" (each replica's
	// newest archive) or a backup name (status.lastBackupName, e.g.
	// "20261201T020000Z"). Replica <i> restores from its backups volume
	// backups-<name>-<i>, which outlives the MyApp: delete a MyApp and its
	// data volumes, create it again with restoreFrom, and it starts from its
	// backup. A missing or unreadable backup stops the pod before the
	// application starts (its init container "restore" says why); it never
	// starts on an empty volume instead. A data volume that already holds
	// data is never overwritten. Immutable.
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^(latest|[0-9]{8}T[0-9]{6}Z)$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.restoreFrom is immutable",reason=FieldValueForbidden
	// +optional
	RestoreFrom string `json:"restoreFrom,omitempty"`

	// Storage is the data volume of each pod. It is kept when the MyApp is
	// deleted. It is immutable: a StatefulSet's volumeClaimTemplates cannot
	// change, so the size can be neither decreased nor increased in place. The
	// schema defaults it to {} so that its defaults are stored and an unset
	// storage cannot later be set to something else.
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.storage is immutable: a StatefulSet's volumeClaimTemplates cannot change, so neither the size (it may not shrink or grow in place), storageClassName nor mountPath may change; create a new MyApp instead",reason=FieldValueForbidden
	// +optional
	Storage *MyAppStorage `json:"storage,omitempty"`
}

// MyAppBackup tunes the backups of spec.backupSchedule.
//
// The default backup works for any image: on each scheduled run the CronJob
// <name>-backup-<i> archives the data volume of replica <i> (tar, gzip) with
// a Job on that replica's node, the data volume mounted read-only, into the
// replica's backups volume backups-<name>-<i> (a second volume template of
// the StatefulSet, kept like the data volume when the MyApp is deleted) as
// <backup name>.tar.gz, and keeps the newest Retention archives. The backup
// name is the UTC time the run was scheduled for, the same on every replica.
// It copies files of a running application: an application that needs a
// consistent dump sets Command.
//
// Command replaces the default backup: the CronJob <name>-backup runs it in
// the application's own image (or Image), on the node of pod <name>-0, with
// that pod's data volume mounted read-only at the same path, and the
// environment variables MYAPP_NAME, MYAPP_HOST (pod 0's DNS name),
// MYAPP_PORT and MYAPP_DATA_DIR. Where that backup goes is the command's
// business; Retention and spec.restoreFrom do not apply to it.
type MyAppBackup struct {
	// Command replaces the default backup with this command and its arguments.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=32768
	// +optional
	Command []string `json:"command,omitempty"`

	// Retention is how many archives of each replica the default backup
	// keeps; older ones are deleted after each successful archive.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=7
	// +optional
	Retention *int32 `json:"retention,omitempty"`

	// Image runs the default backup and the restore (it needs /bin/sh, tar
	// and gzip), or Command when set; the default is busybox:1.37 for the
	// default backup and the application's image for Command.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\S+$`
	// +optional
	Image string `json:"image,omitempty"`

	// VolumeSize is the size of each replica's backups volume; the default is
	// spec.storage.size. It only applies when the StatefulSet is created:
	// volume templates cannot change afterwards.
	// +kubebuilder:validation:XValidation:rule="(string(self).size() <= 64 && string(self).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) && isQuantity(string(self)) && quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.backup.volumeSize must be greater than 0"
	// +kubebuilder:validation:XValidation:rule="!(string(self).size() <= 64 && string(self).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) || !isQuantity(string(self)) || quantity(string(self)).compareTo(quantity('8Pi')) <= 0",message="spec.backup.volumeSize is out of range: at most 8Pi"
	// +optional
	VolumeSize *resource.Quantity `json:"volumeSize,omitempty"`
}

// MyAppStorage describes the per-pod data volume.
type MyAppStorage struct {
	// Size of each pod's volume; must be greater than 0.
	// +kubebuilder:default="1Gi"
	// +kubebuilder:validation:XValidation:rule="(string(self).size() <= 64 && string(self).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) && isQuantity(string(self)) && quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.storage.size must be greater than 0"
	// +kubebuilder:validation:XValidation:rule="!(string(self).size() <= 64 && string(self).matches('^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$')) || !isQuantity(string(self)) || quantity(string(self)).compareTo(quantity('8Pi')) <= 0",message="spec.storage.size is out of range: at most 8Pi"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the volume; the cluster default when unset.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// MountPath is where the volume is mounted in the container: an absolute
	// path other than /etc/myapp, where the ConfigMap is mounted.
	// +kubebuilder:default="/data"
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`^/`
	// +kubebuilder:validation:XValidation:rule="self != '/etc/myapp'",message="spec.storage.mountPath may not be /etc/myapp: the ConfigMap is mounted there"
	// +optional
	MountPath string `json:"mountPath,omitempty"`
}

// MyAppStatus is the observed state of a MyApp, computed from its observed
// children only.
type MyAppStatus struct {
	// ObservedGeneration is the generation this status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of pods the StatefulSet has (the scale subresource's
	// status replicas).
	// +optional
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// AvailableReplicas is the number of pods ready for minReadySeconds; 0 while
	// the StatefulSet does not exist.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// Selector is the label selector of the pods, for the scale subresource.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Selector string `json:"selector,omitempty"`

	// LastBackupTime is when the last successful backup finished: with the
	// default backup, when the newest backup had been archived on every
	// replica (or, while the newest one is incomplete, the oldest of the
	// replicas' last successful archives).
	// +optional
	LastBackupTime *metav1.Time `json:"lastBackupTime,omitempty"`

	// LastBackupName names the last backup that succeeded on every replica,
	// for spec.restoreFrom (with spec.backup.command: the Job that ran it).
	// Empty while the newest backup is incomplete.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	LastBackupName string `json:"lastBackupName,omitempty"`

	// Conditions: Ready (all replicas available on the current revision),
	// Progressing (a rollout or scale is under way), BackupSucceeded (the
	// newest scheduled backup) and, with spec.restoreFrom, Restored.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MyAppList is a list of MyApp.
//
// +kubebuilder:object:root=true
type MyAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MyApp `json:"items"`
}

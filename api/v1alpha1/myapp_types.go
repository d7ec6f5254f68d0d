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
)

// CronPattern is the shape of a standard 5-field cron line ("0 2 * * *"). The
// hook parses the line fully as well; the pattern keeps obvious mistakes, such
// as a 6-field line with seconds, out of the API server.
const CronPattern = `^\s*\S+(\s+\S+){4}\s*$`

// MyApp runs a stateful application as a StatefulSet with a headless Service and
// a ConfigMap, and optionally a PodDisruptionBudget and a backup CronJob.
//
// Its name is at most 52 characters (45 with a backupSchedule): StatefulSet
// pod names and the controller-revision-hash label need 11 more, and the
// CronJob adds "-backup".
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ma,categories=metahooks
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicaCount,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicaCount`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 52",message="metadata.name must be at most 52 characters: the StatefulSet's pod names need the rest"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.backupSchedule) || size(self.metadata.name) <= 45",message="metadata.name must be at most 45 characters when spec.backupSchedule is set: the CronJob is named <name>-backup"
type MyApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MyAppSpec   `json:"spec"`
	Status MyAppStatus `json:"status,omitempty"`
}

// MyAppSpec is the desired state of a MyApp.
//
// +kubebuilder:validation:XValidation:rule="!has(self.backupSchedule) || (has(self.backup) && size(self.backup.command) > 0)",message="spec.backup.command is required when spec.backupSchedule is set",fieldPath=".backup",reason=FieldValueRequired
type MyAppSpec struct {
	// ReplicaCount is the number of pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	ReplicaCount *int32 `json:"replicaCount,omitempty"`

	// Image is the container image of the application, e.g. "nginx:1.27"; it
	// may not contain whitespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^\S+$`
	// +required
	Image string `json:"image"`

	// Config holds key/values rendered into the ConfigMap <name>-config. The pods
	// get them as environment variables and as files under /etc/myapp; a change
	// rolls the pods.
	// +optional
	Config map[string]string `json:"config,omitempty"`

	// Port is the port the application listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	Port *int32 `json:"port,omitempty"`

	// Resources are the application container's requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// HighAvailability adds a PodDisruptionBudget (maxUnavailable 1), preferred
	// pod anti-affinity across nodes and a topology spread across zones.
	// +optional
	HighAvailability *bool `json:"highAvailability,omitempty"`

	// BackupSchedule is a 5-field cron line ("0 2 * * *"). When set, the CronJob
	// <name>-backup runs spec.backup.command on that schedule.
	// +kubebuilder:validation:Pattern=`^\s*\S+(\s+\S+){4}\s*$`
	// +optional
	BackupSchedule string `json:"backupSchedule,omitempty"`

	// Backup says what a backup of this application is.
	// +optional
	Backup *MyAppBackup `json:"backup,omitempty"`

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

// MyAppBackup describes the backup job. A backup of a generic application is
// spec.backup.command run in the application's own image, on the node of pod
// <name>-0, with that pod's data volume mounted read-only at the same path, and
// the environment variables MYAPP_NAME, MYAPP_HOST (pod 0's DNS name), MYAPP_PORT
// and MYAPP_DATA_DIR. Where the backup goes (object storage, another volume) is
// the command's business.
type MyAppBackup struct {
	// Command is the backup command and its arguments.
	// +kubebuilder:validation:MinItems=1
	// +required
	Command []string `json:"command"`
}

// MyAppStorage describes the per-pod data volume.
type MyAppStorage struct {
	// Size of each pod's volume; must be greater than 0.
	// +kubebuilder:default="1Gi"
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.storage.size must be greater than 0"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the volume; the cluster default when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// MountPath is where the volume is mounted in the container: an absolute
	// path other than /etc/myapp, where the ConfigMap is mounted.
	// +kubebuilder:default="/data"
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
	// +optional
	Selector string `json:"selector,omitempty"`

	// Conditions: Ready (all replicas available on the current revision) and
	// Progressing (a rollout or scale is under way).
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

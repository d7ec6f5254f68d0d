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
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ma,categories=all
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicaCount,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicaCount`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MyApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MyAppSpec   `json:"spec"`
	Status MyAppStatus `json:"status,omitempty"`
}

// MyAppSpec is the desired state of a MyApp.
type MyAppSpec struct {
	// ReplicaCount is the number of pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	ReplicaCount *int32 `json:"replicaCount,omitempty"`

	// Image is the container image of the application.
	// +kubebuilder:validation:MinLength=1
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

	// Storage is the data volume of each pod. It is kept when the MyApp is deleted.
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
	// Size of each pod's volume.
	// +kubebuilder:default="1Gi"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the volume; the cluster default when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// MountPath is where the volume is mounted in the container.
	// +kubebuilder:default="/data"
	// +kubebuilder:validation:Pattern=`^/`
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
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of ready pods.
	ReadyReplicas int32 `json:"readyReplicas"`

	// AvailableReplicas is the number of pods ready for minReadySeconds; 0 while
	// the StatefulSet does not exist.
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

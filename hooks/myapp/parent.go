package myapp

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"metahooks/api/v1alpha1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// GroupVersionKind is the parent this hook serves.
var GroupVersionKind = schema.GroupVersionKind{Group: "example.com", Version: "v1alpha1", Kind: "MyApp"}

// app is a MyApp parent decoded, defaulted and validated: every field a builder
// needs, already resolved.
type app struct {
	name, namespace  string
	uid              string
	generation       int64
	replicas         int32
	image            string
	config           map[string]string
	port             int32
	resources        corev1.ResourceRequirements
	highAvailability bool
	backupSchedule   string
	backupCommand    []string // the override; nil for the default backup
	backupImage      string   // spec.backup.image; "" for the default
	backupRetention  int32
	backupVolumeSize resource.Quantity
	restoreFrom      string // "", "latest" or a backup name
	storageSize      resource.Quantity
	storageClass     *string
	mountPath        string
	conditions       []metav1.Condition // the parent's current status.conditions
	labels           map[string]string  // objectLabels, built on first use
}

// Prefetch is what the scan of every request decodes for this hook: the
// parent and the observed StatefulSet, each read once (composite.Prefetch),
// and of the StatefulSet only what the hook reads (TestPrefetchChangesNoAnswer
// holds every answer to the one without it): its name, generation and
// annotations (restore), replicas and selector (kept as observed), pod
// template annotations and containers (TemplateChange, restore), volume
// claim templates (the backups volume) and status.
var Prefetch = composite.NewPrefetch[v1alpha1.MyApp](map[schema.GroupVersionKind]any{
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"): composite.ObservedReads{Into: appsv1.StatefulSet{}, Paths: []string{
		"metadata.name", "metadata.namespace", "metadata.generation", "metadata.annotations",
		"spec.replicas", "spec.selector", "spec.template.metadata.annotations", "spec.template.spec",
		"spec.volumeClaimTemplates", "status",
	}},
})

// parseRequestParent decodes the MyApp parent, applies the schema defaults and checks
// what the CRD checks, so that a parent that slipped past admission gets a 422
// naming the field rather than wrong children.
// The scan of the request decoded it already when the request was decoded
// with Prefetch.
func parseRequestParent(req *composite.Request) (*app, error) {
	var parent v1alpha1.MyApp
	if err := req.DecodeParent(&parent, GroupVersionKind); err != nil {
		return nil, err
	}
	spec := parent.Spec
	a := &app{
		name:            parent.Name,
		namespace:       parent.Namespace,
		uid:             string(parent.UID),
		generation:      parent.Generation,
		replicas:        ptr.Deref(spec.ReplicaCount, v1alpha1.DefaultReplicaCount),
		image:           strings.TrimSpace(spec.Image),
		config:          spec.Config,
		port:            ptr.Deref(spec.Port, v1alpha1.DefaultPort),
		backupSchedule:  strings.TrimSpace(spec.BackupSchedule),
		restoreFrom:     spec.RestoreFrom,
		backupRetention: v1alpha1.DefaultBackupRetention,
		storageSize:     resource.MustParse(v1alpha1.DefaultStorageSize),
		mountPath:       v1alpha1.DefaultMountPath,
		conditions:      parent.Status.Conditions,
	}
	if spec.Resources != nil {
		a.resources = *spec.Resources
	}
	if spec.HighAvailability != nil {
		a.highAvailability = *spec.HighAvailability
	}
	if spec.Backup != nil {
		a.backupCommand = spec.Backup.Command
		a.backupImage = spec.Backup.Image
		a.backupRetention = ptr.Deref(spec.Backup.Retention, v1alpha1.DefaultBackupRetention)
	}
	if spec.Storage != nil {
		if spec.Storage.Size != nil {
			a.storageSize = *spec.Storage.Size
		}
		a.storageClass = spec.Storage.StorageClassName
		if spec.Storage.MountPath != "" {
			a.mountPath = spec.Storage.MountPath
		}
	}
	a.backupVolumeSize = a.storageSize
	if spec.Backup != nil && spec.Backup.VolumeSize != nil {
		a.backupVolumeSize = *spec.Backup.VolumeSize
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	if err := a.validateBackup(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *app) validate() error {
	if err := a.validateLimits(); err != nil {
		return err
	}
	switch {
	case a.namespace == "":
		return composite.Invalid("metadata.namespace", "required: MyApp is namespaced")
	case a.image == "":
		return composite.Invalid("spec.image", "required, must be a non-empty image reference")
	case a.replicas < 0:
		return composite.Invalid("spec.replicaCount", "must be >= 0, got %d", a.replicas)
	case a.port < 1 || a.port > 65535:
		return composite.Invalid("spec.port", "must be between 1 and 65535, got %d", a.port)
	case a.storageSize.Sign() <= 0:
		return composite.Invalid("spec.storage.size", "must be greater than 0, got %s", a.storageSize.String())
	case !strings.HasPrefix(a.mountPath, "/") || a.mountPath == configMountPath:
		return composite.Invalid("spec.storage.mountPath", "must be an absolute path other than %s, got %s", configMountPath, composite.Quote(a.mountPath))
	}
	if err := a.validateForChildren(); err != nil {
		return err
	}
	return nil
}

// validateLimits checks every string, list and map of the spec against the
// CRD's maxLength, maxItems and maxProperties (api/v1alpha1/limits.go), and
// the rules at spec.resources, before anything else reads them: a value
// that slipped past admission costs a comparison, not a copy into children
// or an error quoting it whole.
func (a *app) validateLimits() error {
	for _, f := range []struct {
		field, value string
		max          int
	}{
		{"spec.image", a.image, v1alpha1.MaxImageLength},
		{"spec.backupSchedule", a.backupSchedule, kube.MaxCronLength},
		{"spec.restoreFrom", a.restoreFrom, v1alpha1.MaxRestoreFromLength},
		{"spec.backup.image", a.backupImage, v1alpha1.MaxImageLength},
		{"spec.storage.mountPath", a.mountPath, v1alpha1.MaxMountPathLength},
	} {
		if err := kube.ValidateLength(f.value, f.max); err != nil {
			return composite.Invalid(f.field, "%v", err)
		}
	}
	if a.storageClass != nil {
		if err := kube.ValidateLength(*a.storageClass, v1alpha1.MaxStorageClassNameLength); err != nil {
			return composite.Invalid("spec.storage.storageClassName", "%v", err)
		}
	}
	if err := kube.ValidateCount(len(a.backupCommand), v1alpha1.MaxBackupCommandItems, "items"); err != nil {
		return composite.Invalid("spec.backup.command", "%v", err)
	}
	for i, item := range a.backupCommand {
		if err := kube.ValidateLength(item, v1alpha1.MaxBackupCommandItemLength); err != nil {
			return composite.Invalid(fmt.Sprintf("spec.backup.command[%d]", i), "%v", err)
		}
	}
	if err := kube.ValidateCount(len(a.config), v1alpha1.MaxConfigEntries, "entries"); err != nil {
		return composite.Invalid("spec.config", "%v", err)
	}
	if err := kube.ValidateCount(len(a.resources.Limits), v1alpha1.MaxResourceEntries, "entries"); err != nil {
		return composite.Invalid("spec.resources.limits", "%v", err)
	}
	if err := kube.ValidateCount(len(a.resources.Requests), v1alpha1.MaxResourceEntries, "entries"); err != nil {
		return composite.Invalid("spec.resources.requests", "%v", err)
	}
	if len(a.resources.Claims) > 0 {
		// The API server refuses a container claim that names none of the
		// pod's resource claims, and the pods have none.
		return composite.Invalid("spec.resources.claims", "not supported: the pods have no resource claims to name")
	}
	return nil
}

// validateForChildren refuses what the API server would refuse in a child:
// names, quantities, resources, the storage class and the ConfigMap's size.
func (a *app) validateForChildren() error {
	// The backup CronJobs' names are checked with the backups (backup.go).
	err := kube.ValidateParentName(a.name,
		kube.ChildName{Name: a.name, Max: kube.MaxStatefulSetName, What: "StatefulSet"},
		kube.ChildName{Name: a.configMapName(), Max: validation.DNS1123SubdomainMaxLength, What: "ConfigMap"},
	)
	if err != nil {
		return composite.Invalid("metadata.name", "%v", err)
	}
	if err := kube.ValidateQuantity(a.storageSize); err != nil {
		return composite.Invalid("spec.storage.size", "%v", err)
	}
	if err := kube.ValidateQuantity(a.backupVolumeSize); err != nil {
		return composite.Invalid("spec.backup.volumeSize", "%v", err)
	}
	if a.storageClass != nil && *a.storageClass != "" {
		if err := kube.ValidateStorageClassName(*a.storageClass); err != nil {
			return composite.Invalid("spec.storage.storageClassName", "%v", err)
		}
	}
	if path, err := kube.ValidateResources(a.resources); err != nil {
		return composite.Invalid("spec.resources."+path, "%v", err)
	}
	if key, err := kube.ValidateConfigMapData(a.config); err != nil {
		if key != "" {
			return composite.Invalid("spec.config["+composite.Quote(key)+"]", "%v", err)
		}
		return composite.Invalid("spec.config", "%v", err)
	}
	return nil
}

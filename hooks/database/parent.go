package database

import (
	"regexp"
	"strings"
	"unicode"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// GroupVersionKind is the parent this hook serves.
var GroupVersionKind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Database"}

// maxNameLength keeps every child name within its limit: CronJob <name>-backup
// may have at most 52 characters.
const maxNameLength = 52 - len("-backup")

// backupNamePattern is the CRD's pattern for spec.restoreFrom.backup: "latest"
// or a dump file name, never a path.
var backupNamePattern = regexp.MustCompile(`^(latest|[0-9A-Za-z][0-9A-Za-z._-]*\.dump)$`)

// database is a Database parent decoded, defaulted and validated: every field a
// builder needs, already resolved.
type database struct {
	name, namespace string
	uid             string
	generation      int64
	size            dbv1.DatabaseSize
	preset          preset
	image           string
	storage         resource.Quantity // requested data volume size: spec.storage or the preset's
	storageClass    *string
	backupSchedule  string
	retention       int32
	restore         *dbv1.DatabaseRestore
	deletionPolicy  dbv1.DeletionPolicy
	hibernate       bool
	backupRequest   string             // the backupRequestAnnotation's value; "" when not set
	conditions      []metav1.Condition // the parent's current status.conditions
	ha              haSpec             // instances, replication, failover, switchover
	labels          map[string]string  // objectLabels, built on first use
}

// Prefetch is what the scan of every request decodes for this hook: the
// parent and the observed StatefulSet, each read once (composite.Prefetch).
var Prefetch = composite.NewPrefetch[dbv1.Database](map[schema.GroupVersionKind]any{
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"): appsv1.StatefulSet{},
})

// parseRequestParent decodes the Database parent, applies the schema defaults and
// checks what the CRD checks, so that a parent that slipped past admission gets
// a 422 naming the field rather than wrong children.
// The scan of the request decoded it already when the request was decoded
// with Prefetch.
func parseRequestParent(req *composite.Request) (*database, error) {
	var parent dbv1.Database
	if err := req.DecodeParent(&parent, GroupVersionKind); err != nil {
		return nil, err
	}
	spec := parent.Spec
	d := &database{
		name:           parent.Name,
		namespace:      parent.Namespace,
		uid:            string(parent.UID),
		generation:     parent.Generation,
		size:           spec.Size,
		image:          strings.TrimSpace(spec.Image),
		storageClass:   spec.StorageClassName,
		retention:      dbv1.DefaultBackupRetention,
		restore:        spec.RestoreFrom,
		deletionPolicy: spec.DeletionPolicy,
		hibernate:      spec.Hibernate != nil && *spec.Hibernate,
		conditions:     parent.Status.Conditions,
	}
	request, requested := parent.Annotations[backupRequestAnnotation]
	if err := kube.ValidateLength(request, dbv1.MaxBackupRequestLength); err != nil {
		// Copied into status.onDemandBackup.request, whose maxLength it is.
		return nil, composite.Invalid("metadata.annotations["+backupRequestAnnotation+"]", "%v", err)
	}
	if requested && strings.TrimSpace(request) == "" {
		return nil, composite.Invalid("metadata.annotations["+backupRequestAnnotation+"]", "must not be empty: set a new value, such as the time, to ask for a backup, or remove the annotation")
	}
	d.backupRequest = request
	if d.deletionPolicy == "" {
		d.deletionPolicy = dbv1.DefaultDeletionPolicy
	}
	if spec.Backup != nil {
		d.backupSchedule = strings.TrimSpace(spec.Backup.Schedule)
		if spec.Backup.Retention != nil {
			d.retention = *spec.Backup.Retention
		}
	}
	if d.restore != nil && d.restore.Backup == "" {
		restore := *d.restore
		restore.Backup = dbv1.LatestBackup
		d.restore = &restore
	}
	if err := d.validate(spec); err != nil {
		return nil, err
	}
	ha, err := parseHA(d, spec)
	if err != nil {
		return nil, err
	}
	d.ha = ha
	return d, nil
}

func (d *database) validate(spec dbv1.DatabaseSpec) error {
	if err := d.validateMeta(); err != nil {
		return err
	}
	if spec.Engine != nil && spec.Engine.PostgreSQL == nil {
		return composite.Invalid("spec.engine", "exactly one engine must be set: postgresql")
	}
	p, ok := presets[d.size]
	if !ok {
		return composite.Invalid("spec.size", "must be one of small, medium, large, got %s", composite.Quote(string(d.size)))
	}
	d.preset = p
	if d.image == "" {
		return composite.Invalid("spec.image", "required, must be a non-empty image reference such as postgres:17")
	}
	if err := kube.ValidateLength(d.image, dbv1.MaxImageLength); err != nil {
		return composite.Invalid("spec.image", "%v", err)
	}
	if strings.ContainsFunc(d.image, unicode.IsSpace) {
		return composite.Invalid("spec.image", "must be an image reference without white space, got %s", composite.Quote(d.image))
	}
	if err := d.resolveStorage(spec); err != nil {
		return err
	}
	if spec.Backup != nil {
		if err := kube.ValidateLength(d.backupSchedule, kube.MaxCronLength); err != nil {
			return composite.Invalid("spec.backup.schedule", "%v", err)
		}
		if strings.Contains(d.backupSchedule, "=") {
			// The API server refuses a CronJob schedule with a time zone
			// in it; say so rather than "malformed".
			return composite.Invalid("spec.backup.schedule", "must not set a time zone (TZ= or CRON_TZ=): schedules run in the kube-controller-manager's time zone, got %s", composite.Quote(d.backupSchedule))
		}
		if err := kube.ValidateCron(d.backupSchedule); err != nil {
			return composite.Invalid("spec.backup.schedule", "%v", err)
		}
		if d.retention < 1 || d.retention > 1000 {
			return composite.Invalid("spec.backup.retention", "must be between 1 and 1000, got %d", d.retention)
		}
	}
	if err := d.validateRestore(); err != nil {
		return err
	}
	switch d.deletionPolicy {
	case dbv1.DeletionRetain, dbv1.DeletionDelete, dbv1.DeletionSnapshot:
		return nil
	default:
		return composite.Invalid("spec.deletionPolicy", "must be one of Retain, Delete, Snapshot, got %s", composite.Quote(string(d.deletionPolicy)))
	}
}

func (d *database) validateMeta() error {
	// The CronJob is checked even without backups: a Database may get them
	// later, and a final backup Job runs on deletion.
	err := kube.ValidateParentName(d.name,
		kube.ChildName{Name: d.name, Max: kube.MaxStatefulSetName, What: "StatefulSet"},
		kube.ChildName{Name: d.headlessServiceName(), Max: validation.DNS1035LabelMaxLength, What: "Service"},
		kube.ChildName{Name: d.cronJobName(), Max: kube.MaxCronJobName, What: "CronJob"},
		kube.ChildName{Name: d.finalBackupJobName(), Max: validation.DNS1035LabelMaxLength, What: "Job"},
		kube.ChildName{Name: d.secretName(), Max: validation.DNS1123SubdomainMaxLength, What: "Secret"},
	)
	if err != nil {
		return composite.Invalid("metadata.name", "%v", err)
	}
	if d.namespace == "" {
		return composite.Invalid("metadata.namespace", "required: Database is namespaced")
	}
	return nil
}

// resolveStorage sets the requested data volume size: spec.storage, never
// smaller than the preset's, or the preset's.
func (d *database) resolveStorage(spec dbv1.DatabaseSpec) error {
	if d.storageClass != nil && *d.storageClass != "" {
		if err := kube.ValidateStorageClassName(*d.storageClass); err != nil {
			return composite.Invalid("spec.storageClassName", "%v", err)
		}
	}
	d.storage = d.preset.storageQuantity()
	if spec.Storage == nil {
		return nil
	}
	if err := kube.ValidateQuantity(*spec.Storage); err != nil {
		return composite.Invalid("spec.storage", "%v", err)
	}
	if spec.Storage.Cmp(d.storage) < 0 {
		return composite.Invalid("spec.storage", "must not be smaller than the %s preset's %s, got %s", d.size, d.preset.storage, spec.Storage.String())
	}
	d.storage = *spec.Storage
	return nil
}

func (d *database) validateRestore() error {
	if d.restore == nil {
		return nil
	}
	if errs := validation.IsDNS1123Label(d.restore.Database); len(errs) > 0 || len(d.restore.Database) > maxNameLength {
		return composite.Invalid("spec.restoreFrom.database", "must name a Database (a DNS label of at most %d characters), got %s", maxNameLength, composite.Quote(d.restore.Database))
	}
	if err := kube.ValidateLength(d.restore.Backup, dbv1.MaxRestoreBackupLength); err != nil {
		return composite.Invalid("spec.restoreFrom.backup", "%v", err)
	}
	if !backupNamePattern.MatchString(d.restore.Backup) {
		return composite.Invalid("spec.restoreFrom.backup", "must be \"latest\" or a dump file name ending in .dump, got %s", composite.Quote(d.restore.Backup))
	}
	return nil
}

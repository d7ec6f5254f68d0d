package database

import (
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// Fixed inputs of every test: the time, the service key, the parent's identity.
var (
	testNow = time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	testKey = []byte("metahooks-test-key-0123456789abcdef")
)

// testAgentImage is the image of the reporter containers (instances >= 2).
const testAgentImage = "registry.example/metahooks:test"

const (
	testNamespace = "shop"
	testName      = "orders"
	testUID       = "0b6b1c55-3d0e-4f53-9a4f-2a8f1c7e9d10"
)

// childTypes are the type keys of database-controller's childResources;
// Metacontroller always sends one entry per rule, even when empty.
var childTypes = []string{"ConfigMap.v1", "CronJob.batch/v1", "Job.batch/v1", "Secret.v1", "Service.v1", "StatefulSet.apps/v1"}

// haChildTypes are the rules of database-controller whose kinds only a
// Database with instances >= 2 has.
var haChildTypes = []string{"Event.events.k8s.io/v1", "PodDisruptionBudget.policy/v1", "Role.rbac.authorization.k8s.io/v1", "RoleBinding.rbac.authorization.k8s.io/v1", "ServiceAccount.v1"}

// controllerJSON is the database-controller CompositeController, in the shape
// Metacontroller sends (see shared/fixtures/metacontroller/sync-01-no-children.json).
const controllerJSON = `{
  "apiVersion": "metacontroller.k8s.io/v1alpha1",
  "kind": "CompositeController",
  "metadata": {"name": "database-controller", "generation": 1, "resourceVersion": "270", "uid": "3c1f1d8e-5a4c-4f0e-8d51-0c6a2b9e7f11", "creationTimestamp": "2026-11-30T04:08:45Z"},
  "spec": {
    "childResources": [
      {"apiVersion": "apps/v1", "resource": "statefulsets", "updateStrategy": {"method": "InPlace", "statusChecks": {}}},
      {"apiVersion": "v1", "resource": "services", "updateStrategy": {"method": "InPlace", "statusChecks": {}}},
      {"apiVersion": "v1", "resource": "secrets", "updateStrategy": {"method": "InPlace", "statusChecks": {}}},
      {"apiVersion": "v1", "resource": "configmaps", "updateStrategy": {"method": "InPlace", "statusChecks": {}}},
      {"apiVersion": "batch/v1", "resource": "cronjobs", "updateStrategy": {"method": "InPlace", "statusChecks": {}}},
      {"apiVersion": "batch/v1", "resource": "jobs", "updateStrategy": {"method": "OnDelete", "statusChecks": {}}}
    ],
    "generateSelector": true,
    "hooks": {
      "customize": {"version": "v1", "webhook": {"service": {"name": "metahooks", "namespace": "metahooks", "port": 80}, "path": "/hooks/database/customize", "timeout": "10s"}},
      "finalize": {"version": "v1", "webhook": {"service": {"name": "metahooks", "namespace": "metahooks", "port": 80}, "path": "/hooks/database/finalize", "timeout": "10s"}},
      "sync": {"version": "v1", "webhook": {"service": {"name": "metahooks", "namespace": "metahooks", "port": 80}, "path": "/hooks/database/sync", "timeout": "10s"}}
    },
    "parentResource": {"apiVersion": "example.com/v1", "resource": "databases"},
    "resyncPeriodSeconds": 300
  },
  "status": {}
}`

// newDatabase is a small postgres:17 Database shop/orders, as the API server
// stores it after defaulting, changed by opts.
func newDatabase(opts ...func(*dbv1.Database)) *dbv1.Database {
	db := &dbv1.Database{
		TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Database"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              testName,
			Namespace:         testNamespace,
			UID:               types.UID(testUID),
			Generation:        1,
			ResourceVersion:   "300",
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 30, 4, 10, 0, 0, time.UTC)),
			Finalizers:        []string{"metacontroller.io/compositecontroller-database-controller"},
		},
		Spec: dbv1.DatabaseSpec{
			Engine:         &dbv1.DatabaseEngine{PostgreSQL: &dbv1.PostgreSQLEngine{}},
			Size:           dbv1.SizeSmall,
			Image:          "postgres:17",
			DeletionPolicy: dbv1.DeletionRetain,
			Hibernate:      ptr.To(false),
		},
	}
	for _, opt := range opts {
		opt(db)
	}
	return db
}

func withSize(size dbv1.DatabaseSize) func(*dbv1.Database) {
	return func(db *dbv1.Database) { db.Spec.Size = size }
}

func withGeneration(generation int64) func(*dbv1.Database) {
	return func(db *dbv1.Database) { db.Generation = generation }
}

func withBackup(schedule string, retention int32) func(*dbv1.Database) {
	return func(db *dbv1.Database) {
		db.Spec.Backup = &dbv1.DatabaseBackup{Schedule: schedule, Retention: ptr.To(retention)}
	}
}

func withBackupRequest(value string) func(*dbv1.Database) {
	return func(db *dbv1.Database) {
		if db.Annotations == nil {
			db.Annotations = map[string]string{}
		}
		db.Annotations[backupRequestAnnotation] = value
	}
}

func withPolicy(policy dbv1.DeletionPolicy) func(*dbv1.Database) {
	return func(db *dbv1.Database) { db.Spec.DeletionPolicy = policy }
}

func withHibernate() func(*dbv1.Database) {
	return func(db *dbv1.Database) { db.Spec.Hibernate = ptr.To(true) }
}

func withStorage(size string) func(*dbv1.Database) {
	return func(db *dbv1.Database) { db.Spec.Storage = ptr.To(resource.MustParse(size)) }
}

func withRestore(database, backup string) func(*dbv1.Database) {
	return func(db *dbv1.Database) {
		db.Name = "orders-copy"
		db.UID = "7d2e4f90-1b3c-4a5d-8e6f-9a0b1c2d3e4f"
		db.Spec.RestoreFrom = &dbv1.DatabaseRestore{Database: database, Backup: backup}
	}
}

func withDeletion() func(*dbv1.Database) {
	return func(db *dbv1.Database) {
		db.DeletionTimestamp = ptr.To(metav1.NewTime(time.Date(2026, 11, 30, 4, 59, 0, 0, time.UTC)))
	}
}

func withConditions(conditions []metav1.Condition) func(*dbv1.Database) {
	return func(db *dbv1.Database) { db.Status.Conditions = conditions }
}

// relatedTypes are the type keys of the rules Customize returns; Metacontroller
// sends each, even when empty.
var relatedTypes = []string{"PersistentVolumeClaim.v1", "Pod.v1"}

// newRequest builds the request Metacontroller would send for parent with the
// given observed children; PVCs among them go to related, as the customize
// hook asks.
func newRequest(t *testing.T, parent *dbv1.Database, finalizing bool, children ...runtime.Object) *composite.Request {
	t.Helper()
	req := &composite.Request{
		Controller: json.RawMessage(controllerJSON),
		Parent:     mustJSON(t, parent),
		Children:   composite.ChildMap{},
		Related:    composite.ChildMap{},
		Finalizing: finalizing,
	}
	for _, key := range childTypes {
		req.Children[key] = map[string]json.RawMessage{}
	}
	for _, key := range relatedTypes {
		req.Related[key] = map[string]json.RawMessage{}
	}
	if parent.Spec.Instances != nil && *parent.Spec.Instances > 1 {
		// The PDB and instance-identity rules of database-controller, and
		// the pods Customize asks for with instances >= 2.
		for _, key := range haChildTypes {
			req.Children[key] = map[string]json.RawMessage{}
		}
		req.Related["Pod.v1"] = map[string]json.RawMessage{}
	}
	for _, child := range children {
		gvk := child.GetObjectKind().GroupVersionKind()
		name := child.(metav1.Object).GetName()
		objects := req.Children
		if gvk.Kind == "PersistentVolumeClaim" || gvk.Kind == "Pod" {
			objects = req.Related
		}
		objects[composite.TypeKey(gvk)][name] = mustJSON(t, child)
	}
	return req
}

// withoutCustomize drops related entirely: a CompositeController without the
// customize hook (an older deploy).
func withoutCustomize(req *composite.Request) *composite.Request {
	req.Related = composite.ChildMap{}
	return req
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("cannot marshal %T: %v", v, err)
	}
	return raw
}

// desired runs the hook on a request without children and returns its child
// kind/name, decoded: the object Metacontroller would have created.
func desired[T any](t *testing.T, parent *dbv1.Database, kind, name string) *T {
	t.Helper()
	obj := responseChild[T](t, mustSync(t, newRequest(t, parent, false)), kind, name)
	if obj == nil {
		t.Fatalf("no desired %s %s", kind, name)
	}
	return obj
}

func mustSync(t *testing.T, req *composite.Request) *composite.Response {
	t.Helper()
	return syncWithKey(t, testKey, req)
}

// created gives a desired child the metadata the API server and
// Metacontroller add on create.
func created(obj metav1.Object, parent *dbv1.Database, generation int64) {
	obj.SetUID(types.UID("c0ffee00-0000-4000-8000-" + fmtHex(obj.GetName())))
	obj.SetResourceVersion("310")
	obj.SetGeneration(generation)
	obj.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 11, 30, 4, 10, 1, 0, time.UTC)))
	labels := obj.GetLabels()
	labels["controller-uid"] = string(parent.UID)
	obj.SetLabels(labels)
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: "example.com/v1", Kind: "Database", Name: parent.Name, UID: parent.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
}

func fmtHex(s string) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 12)
	for i := range out {
		out[i] = digits[(int(s[i%len(s)])+i)%16]
	}
	return string(out)
}

// runningStatefulSet is the StatefulSet the hook asks for parent, created at
// generation and settled: one pod ready on the current revision.
func runningStatefulSet(t *testing.T, parent *dbv1.Database, generation int64) *appsv1.StatefulSet {
	t.Helper()
	sts := desired[appsv1.StatefulSet](t, parent, "StatefulSet", parent.Name)
	created(sts, parent, generation)
	replicas := *sts.Spec.Replicas
	revision := parent.Name + "-6d9f7c8b5d"
	sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: generation,
		Replicas:           replicas,
		ReadyReplicas:      replicas,
		AvailableReplicas:  replicas,
		CurrentReplicas:    replicas,
		UpdatedReplicas:    replicas,
		CurrentRevision:    revision,
		UpdateRevision:     revision,
	}
	return sts
}

func observedSecret(t *testing.T, parent *dbv1.Database, data map[string][]byte) *corev1.Secret {
	t.Helper()
	secret := desired[corev1.Secret](t, parent, "Secret", parent.Name+"-credentials")
	created(secret, parent, 0)
	if data != nil {
		secret.Data = data
	}
	return secret
}

func observedCronJob(t *testing.T, parent *dbv1.Database, scheduled, succeeded *time.Time) *batchv1.CronJob {
	t.Helper()
	cj := desired[batchv1.CronJob](t, parent, "CronJob", parent.Name+"-backup")
	created(cj, parent, 1)
	if scheduled != nil {
		cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(*scheduled))
	}
	if succeeded != nil {
		cj.Status.LastSuccessfulTime = ptr.To(metav1.NewTime(*succeeded))
	}
	return cj
}

// finalJob is Job <name>-final-backup as observed, with the given terminal
// condition ("" while it runs).
func finalJob(parent *dbv1.Database, condition batchv1.JobConditionType, reason, message string) *batchv1.Job {
	d := &database{name: parent.Name, namespace: parent.Namespace, image: parent.Spec.Image, preset: presets[parent.Spec.Size]}
	return observedJob(finalBackupJob(d), parent, condition, reason, message)
}

// observedJob is job as created for parent, with the given terminal
// condition ("" while it runs).
func observedJob(job *batchv1.Job, parent *dbv1.Database, condition batchv1.JobConditionType, reason, message string) *batchv1.Job {
	created(job, parent, 1)
	started := metav1.NewTime(time.Date(2026, 11, 30, 4, 59, 5, 0, time.UTC))
	job.Status.StartTime = &started
	switch condition {
	case "":
		job.Status.Active = 1
	case batchv1.JobComplete:
		done := metav1.NewTime(time.Date(2026, 11, 30, 4, 59, 40, 0, time.UTC))
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &done
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: done},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: done},
		}
	case batchv1.JobFailed:
		failed := metav1.NewTime(time.Date(2026, 11, 30, 4, 59, 50, 0, time.UTC))
		job.Status.Failed = 3
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: failed},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: failed},
		}
	}
	return job
}

// withRetention sets the observed StatefulSet's PVC retention whenDeleted.
func withRetention(sts *appsv1.StatefulSet, whenDeleted appsv1.PersistentVolumeClaimRetentionPolicyType) *appsv1.StatefulSet {
	sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = whenDeleted
	return sts
}

// observedClaims are PVCs data-<n>-0 and backups-<n>-0 as the StatefulSet
// controller made them from sts's volume templates: owned by sts when owned
// (whenDeleted Delete applied through a ready pod), else without owner.
func observedClaims(sts *appsv1.StatefulSet, owned bool) []runtime.Object {
	var out []runtime.Object
	for _, template := range sts.Spec.VolumeClaimTemplates {
		pvc := &corev1.PersistentVolumeClaim{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: metav1.ObjectMeta{
				Name:              kube.ClaimName(template.Name, sts.Name, 0),
				Namespace:         sts.Namespace,
				UID:               types.UID("facade00-0000-4000-8000-" + fmtHex(template.Name+sts.Name)),
				ResourceVersion:   "320",
				CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 30, 4, 10, 2, 0, time.UTC)),
				Labels:            sts.Spec.Selector.MatchLabels,
				Finalizers:        []string{"kubernetes.io/pvc-protection"},
			},
			Spec: template.Spec,
			Status: corev1.PersistentVolumeClaimStatus{
				Phase:       corev1.ClaimBound,
				AccessModes: template.Spec.AccessModes,
				Capacity:    template.Spec.Resources.Requests,
			},
		}
		pvc.Spec.VolumeName = "pvc-" + string(pvc.UID)
		if owned {
			pvc.OwnerReferences = []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID,
			}}
		}
		out = append(out, pvc)
	}
	return out
}

// parsed is req's parent and observed children, decoded as sync decodes them.
func parsed(t *testing.T, req *composite.Request) (*database, *observed) {
	t.Helper()
	d, err := parseParent(req.Parent)
	if err != nil {
		t.Fatal(err)
	}
	o, err := observeChildren(req, d)
	if err != nil {
		t.Fatal(err)
	}
	return d, o
}

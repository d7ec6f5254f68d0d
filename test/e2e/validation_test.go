package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

func TestCRDsEstablished(t *testing.T) {
	for _, name := range []string{"myapps.example.com", "databases.example.com"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(testContext(t), client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatalf("CRD %s: %v", name, err)
		}
		conditions := map[apiextensionsv1.CustomResourceDefinitionConditionType]apiextensionsv1.ConditionStatus{}
		for _, c := range crd.Status.Conditions {
			conditions[c.Type] = c.Status
		}
		if conditions[apiextensionsv1.Established] != apiextensionsv1.ConditionTrue || conditions[apiextensionsv1.NamesAccepted] != apiextensionsv1.ConditionTrue {
			t.Errorf("CRD %s conditions %v, want Established and NamesAccepted", name, conditions)
		}
		if status, ok := conditions[apiextensionsv1.NonStructuralSchema]; ok {
			t.Errorf("CRD %s has NonStructuralSchema=%s: the API server would not prune or validate it", name, status)
		}
		if version := crd.Spec.Versions[0]; version.Subresources == nil || version.Subresources.Status == nil {
			t.Errorf("CRD %s has no status subresource: Metacontroller ignores such parents", name)
		}
	}
}

// TestAdmission creates parents (as a dry run) and expects the API server to
// accept the valid ones and reject the invalid ones with a message naming the
// field.
func TestAdmission(t *testing.T) {
	ns := createNamespace(t, "admission")
	cases := map[string]struct {
		reason   string
		manifest string
		wantErr  string // "" means accepted
	}{
		"MyAppValid":               {reason: "the example", manifest: readExample(t, "myapp.yaml")},
		"MyAppReplicasNegative":    {reason: "replicaCount -1", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {replicaCount: -1, image: x}\n", wantErr: "spec.replicaCount"},
		"MyAppReplicasString":      {reason: `replicaCount "three"`, manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {replicaCount: three, image: x}\n", wantErr: "spec.replicaCount"},
		"MyAppImageEmpty":          {reason: "an empty image", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: ''}\n", wantErr: "spec.image"},
		"MyAppSeed":                {reason: "examples/myapp-backup.yaml: backupSchedule alone", manifest: readExample(t, "myapp-backup.yaml")},
		"MyAppRestore":             {reason: "examples/myapp-restore.yaml", manifest: readExample(t, "myapp-restore.yaml")},
		"MyAppRestoreFromPath":     {reason: "restoreFrom is latest or a backup name, never a path", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: x, restoreFrom: ../x}\n", wantErr: "spec.restoreFrom"},
		"MyAppRetentionZero":       {reason: "the default backup keeps at least one archive", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: x, backupSchedule: '0 2 * * *', backup: {retention: 0}}\n", wantErr: "spec.backup.retention"},
		"MyAppBackupVolumeHuge":    {reason: "a backups volume past 8Pi", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: x, backupSchedule: '0 2 * * *', backup: {volumeSize: 9Pi}}\n", wantErr: "spec.backup.volumeSize is out of range"},
		"MyAppBackupNameLong":      {reason: "CronJob <name>-backup-0 would have 53 characters", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: " + strings.Repeat("a", 44) + "}\nspec: {image: x, backupSchedule: '0 2 * * *'}\n", wantErr: "metadata.name is too long for spec.backupSchedule"},
		"MyAppOverrideNameFits":    {reason: "with backup.command the CronJob is <name>-backup: 45 fit", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: " + strings.Repeat("a", 45) + "}\nspec: {image: x, backupSchedule: '0 2 * * *', backup: {command: [b]}}\n"},
		"MyAppCronSixFields":       {reason: "a cron line with seconds", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: x, backupSchedule: '0 0 2 * * *', backup: {command: [b]}}\n", wantErr: "spec.backupSchedule"},
		"DatabaseValid":            {reason: "the example", manifest: readExample(t, "database.yaml")},
		"DatabaseRestoreValid":     {reason: "the restore example", manifest: readExample(t, "database-restore.yaml")},
		"DatabaseSizeHuge":         {reason: `size "huge"`, manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: d}\nspec: {size: huge, image: postgres:17}\n", wantErr: "spec.size"},
		"DatabaseImageEmpty":       {reason: "an empty image", manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: d}\nspec: {size: small, image: ''}\n", wantErr: "spec.image"},
		"DatabaseBelowPreset":      {reason: "storage below the preset", manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: d}\nspec: {size: large, image: postgres:17, storage: 1Gi}\n", wantErr: "storage"},
		"DatabaseImageBlank":       {reason: "an image of spaces passes minLength, not the pattern", manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: d}\nspec: {size: small, image: '   '}\n", wantErr: "spec.image"},
		"DatabaseScheduleTZ":       {reason: "a time zone prefix makes five fields, but a CronJob refuses it", manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: d}\nspec: {size: small, image: postgres:17, backup: {schedule: 'TZ=UTC 0 3 * *'}}\n", wantErr: "spec.backup.schedule"},
		"MyAppNameDot":             {reason: "my.app is a valid object name but no Service name", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: my.app}\nspec: {image: x}\n", wantErr: "DNS-1035"},
		"MyAppNameDigitFirst":      {reason: "1app starts with a digit", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: 1app}\nspec: {image: x}\n", wantErr: "DNS-1035"},
		"MyAppRequestsOverLimits":  {reason: "requests above limits", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: x, resources: {requests: {cpu: '2'}, limits: {cpu: 1}}}\n", wantErr: "spec.resources.requests must be less than or equal"},
		"MyAppRequestsUnderLimits": {reason: "requests within limits, one as a number", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: x, resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: 1}}}\n"},
		"MyAppStorageClass":        {reason: "Fast! is no StorageClass name", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: x, storage: {storageClassName: 'Fast!'}}\n", wantErr: "spec.storage.storageClassName"},
		"MyAppStorageHuge":         {reason: "a size past int64 is clamped when parsed", manifest: "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: a}\nspec: {image: x, storage: {size: 99999999999999999999999Ei}}\n", wantErr: "out of range"},
		"DatabaseNameDigitFirst":   {reason: "1db starts with a digit", manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: 1db}\nspec: {size: small, image: postgres:17}\n", wantErr: "DNS-1035"},
		"DatabaseStorageClass":     {reason: "Fast! is no StorageClass name", manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: d}\nspec: {size: small, image: postgres:17, storageClassName: 'Fast!'}\n", wantErr: "spec.storageClassName"},
		"DatabaseStorageHuge":      {reason: "a size past int64 is clamped when parsed", manifest: "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: d}\nspec: {size: small, image: postgres:17, storage: 99999999999999999999999Ei}\n", wantErr: "out of range"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.manifest), &obj.Object); err != nil {
				t.Fatal(err)
			}
			obj.SetNamespace(ns)
			expectAdmission(t, tc.reason, k8s.Create(testContext(t), obj, client.DryRunAll), tc.wantErr)
		})
	}
}

// TestImmutableAndMonotonic: updates the CRD rules forbid.
func TestImmutableAndMonotonic(t *testing.T) {
	ns := createNamespace(t, "transitions")
	db := createParent(t, databaseController, ns, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: grow}\nspec: {size: small, image: postgres:17, storage: 20Gi}\n")
	medium := createParent(t, databaseController, ns, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: preset}\nspec: {size: medium, image: postgres:17}\n")
	app := createParent(t, myAppController, ns, "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: fixed}\nspec: {image: x, storage: {size: 2Gi}}\n")
	cases := map[string]struct {
		reason  string
		c       controller
		name    string
		set     map[string]any // dotted path -> new value
		wantErr string
	}{
		"DatabaseStorageShrink": {reason: "storage may never shrink", c: databaseController, name: db.GetName(), set: map[string]any{"spec.storage": "10Gi"}, wantErr: "storage"},
		"DatabaseStorageGrow":   {reason: "storage may grow", c: databaseController, name: db.GetName(), set: map[string]any{"spec.storage": "30Gi"}},
		"DatabaseRestoreLater":  {reason: "restoreFrom only at creation", c: databaseController, name: db.GetName(), set: map[string]any{"spec.restoreFrom": map[string]any{"database": "other"}}, wantErr: "restoreFrom"},
		"MediumToSmallNoStorage": {
			reason: "medium to small without spec.storage shrinks the effective volume from 20Gi to 5Gi",
			c:      databaseController, name: medium.GetName(), set: map[string]any{"spec.size": "small"}, wantErr: "effective storage",
		},
		"MediumToSmall": {
			reason: "medium to small keeping the volume with spec.storage 20Gi",
			c:      databaseController, name: medium.GetName(), set: map[string]any{"spec.size": "small", "spec.storage": "20Gi"},
		},
		"MediumToLarge":      {reason: "a larger preset grows the effective storage", c: databaseController, name: medium.GetName(), set: map[string]any{"spec.size": "large"}},
		"MyAppStorageChange": {reason: "MyApp storage is immutable (volume templates are)", c: myAppController, name: app.GetName(), set: map[string]any{"spec.storage.size": "3Gi"}, wantErr: "storage"},
		"MyAppScale":         {reason: "replicaCount changes freely", c: myAppController, name: app.GetName(), set: map[string]any{"spec.replicaCount": int64(4)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := tc.c.get(t, ns, tc.name)
			for path, value := range tc.set {
				if err := unstructured.SetNestedField(obj.Object, value, strings.Split(path, ".")...); err != nil {
					t.Fatal(err)
				}
			}
			expectAdmission(t, tc.reason, k8s.Update(testContext(t), obj, client.DryRunAll), tc.wantErr)
		})
	}
}

// expectAdmission checks the API server's verdict: accepted when wantErr is
// empty, else rejected with a message that names wantErr.
func expectAdmission(t *testing.T, reason string, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("%s: rejected: %v", reason, err)
	case wantErr != "" && err == nil:
		t.Errorf("%s: accepted, want a rejection naming %s", reason, wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("%s: rejected with %q, want it to name %s", reason, err, wantErr)
	}
}

// TestStatusColumn: `kubectl get db` and `kubectl get ma` show, in a Status
// column, the Ready condition's reason: what is wrong, without -o yaml
// (issue 31). Read as kubectl reads it, a Table from the real API server.
func TestStatusColumn(t *testing.T) {
	ns := createNamespace(t, "status-column")
	cases := []struct {
		name, reason, manifest, resource, conditionReason string
	}{
		{"Database", "a Database whose backups fail", "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: shop}\nspec: {size: small, image: postgres:17}\n", "databases", "BackupFailing"},
		{"MyApp", "a MyApp being restored", "apiVersion: example.com/v1alpha1\nkind: MyApp\nmetadata: {name: demo}\nspec: {image: x}\n", "myapps", "Restoring"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.manifest), &obj.Object); err != nil {
				t.Fatal(err)
			}
			obj.SetNamespace(ns)
			if err := k8s.Create(testContext(t), obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			if err := unstructured.SetNestedSlice(obj.Object, []any{map[string]any{
				"type": "Ready", "status": "False", "reason": tc.conditionReason, "message": "m",
				"lastTransitionTime": "2026-12-04T00:00:00Z",
			}}, "status", "conditions"); err != nil {
				t.Fatal(err)
			}
			if err := k8s.Status().Update(testContext(t), obj); err != nil {
				t.Fatalf("status update: %v", err)
			}
			config := rest.CopyConfig(apiConfig)
			config.GroupVersion = &schema.GroupVersion{Group: "example.com", Version: obj.GroupVersionKind().Version}
			config.APIPath = "/apis"
			config.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
			restClient, err := rest.RESTClientFor(config)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := restClient.Get().Namespace(ns).Resource(tc.resource).Name(obj.GetName()).
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(testContext(t))
			if err != nil {
				t.Fatalf("GET as Table: %v", err)
			}
			var table metav1.Table
			if err := json.Unmarshal(raw, &table); err != nil {
				t.Fatalf("%v: %.300s", err, raw)
			}
			column := -1
			for i, c := range table.ColumnDefinitions {
				if c.Name == "Status" && c.Priority == 0 {
					column = i
				}
			}
			if column < 0 || len(table.Rows) != 1 || len(table.Rows[0].Cells) <= column {
				t.Fatalf("%s: no Status column of priority 0 in %.500s", tc.reason, raw)
			}
			if got := table.Rows[0].Cells[column]; got != tc.conditionReason {
				t.Errorf("%s: Status column shows %v, want %s", tc.reason, got, tc.conditionReason)
			}
		})
	}
}

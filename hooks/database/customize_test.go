package database

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

func customizeRequest(t *testing.T, parent any) *composite.CustomizeRequest {
	t.Helper()
	return &composite.CustomizeRequest{Controller: json.RawMessage(controllerJSON), Parent: mustJSON(t, parent)}
}

func TestCustomize(t *testing.T) {
	resp, err := Customize(customizeRequest(t, newDatabase()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"relatedResources":[{"apiVersion":"v1","resource":"persistentvolumeclaims","namespace":"shop","names":["data-orders-0","backups-orders-0",` +
		`"data-orders-1","backups-orders-1","data-orders-2","backups-orders-2","data-orders-3","backups-orders-3","data-orders-4","backups-orders-4",` +
		`"data-orders-5","backups-orders-5","data-orders-6","backups-orders-6","data-orders-7","backups-orders-7","data-orders-8","backups-orders-8"]},` +
		`{"apiVersion":"v1","resource":"pods","labelSelector":{"matchLabels":{"app.kubernetes.io/component":"backup","app.kubernetes.io/instance":"orders","app.kubernetes.io/name":"database"}},"namespace":"shop"}]}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Customize: -want +got:\n%s", diff)
	}
	// The names must be the PVCs the StatefulSet controller makes from the
	// volume templates for every ordinal: <template>-<statefulset>-<i>. Even
	// a single server asks for all nine: one that ran three instances keeps
	// the volumes of the other two, and its deletion policy is about them.
	sts := desired[struct {
		Spec struct {
			VolumeClaimTemplates []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"volumeClaimTemplates"`
		} `json:"spec"`
	}](t, newDatabase(), "StatefulSet", testName)
	var fromTemplates []string
	for ordinal := range maxInstances {
		for _, vct := range sts.Spec.VolumeClaimTemplates {
			fromTemplates = append(fromTemplates, fmt.Sprintf("%s-%s-%d", vct.Metadata.Name, testName, ordinal))
		}
	}
	if diff := cmp.Diff(fromTemplates, resp.RelatedResources[0].Names); diff != "" {
		t.Errorf("related PVC names vs the StatefulSet's volume templates: -templates +customize:\n%s", diff)
	}
}

// TestCustomizeDependsOnNameOnly: Metacontroller caches the answer per parent
// and generation, so nothing else may change it: not the spec (but
// spec.instances, see TestCustomizeInstances), not the status, not even a
// spec the sync hook rejects.
func TestCustomizeDependsOnNameOnly(t *testing.T) {
	want, err := Customize(customizeRequest(t, newDatabase()))
	if err != nil {
		t.Fatal(err)
	}
	variants := map[string]*dbv1.Database{
		"OtherSpec":   newDatabase(withSize(dbv1.SizeLarge), withPolicy(dbv1.DeletionDelete), withHibernate(), withBackup("0 1 * * *", 2), withGeneration(7)),
		"Deleting":    newDatabase(withDeletion()),
		"InvalidSpec": newDatabase(withSize("huge")),
		"WithStatus":  newDatabase(withConditions([]metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}})),
		"Instances1":  newDatabase(withInstances(1), withPrimary("orders-0")),
	}
	for name, db := range variants {
		t.Run(name, func(t *testing.T) {
			got, err := Customize(customizeRequest(t, db))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Customize changed with more than the name: -want +got:\n%s", diff)
			}
		})
	}
}

func TestCustomizeErrors(t *testing.T) {
	cases := map[string]struct {
		reason      string
		parent      any
		wantInvalid bool // else a *composite.RequestError
	}{
		"OtherKind":   {reason: "a MyApp sent to the Database route", parent: map[string]any{"apiVersion": "example.com/v1alpha1", "kind": "MyApp", "metadata": map[string]any{"name": "a", "namespace": "b"}}},
		"BadMetadata": {reason: "metadata of the wrong type", parent: map[string]any{"apiVersion": "example.com/v1", "kind": "Database", "metadata": "orders"}},
		"NoNamespace": {reason: "Database is namespaced", parent: newDatabase(func(db *dbv1.Database) { db.Namespace = "" }), wantInvalid: true},
		"BadName":     {reason: "the name must be a DNS label", parent: newDatabase(func(db *dbv1.Database) { db.Name = "Orders_DB" }), wantInvalid: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Customize(customizeRequest(t, tc.parent))
			var requestErr *composite.RequestError
			switch {
			case tc.wantInvalid && !composite.IsInvalid(err):
				t.Errorf("%s\nwant *composite.InvalidError (422), got %T %v", tc.reason, err, err)
			case !tc.wantInvalid && !errors.As(err, &requestErr):
				t.Errorf("%s\nwant *composite.RequestError (400), got %T %v", tc.reason, err, err)
			}
		})
	}
}

// TestCustomizeInstances: with instances >= 2 the pods of every ordinal are
// related objects too (their readiness and reports decide failovers); the
// rule for the PVCs stays first and unchanged.
func TestCustomizeInstances(t *testing.T) {
	single, err := Customize(customizeRequest(t, newDatabase()))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int32{2, 3, 9} {
		resp, err := Customize(customizeRequest(t, newDatabase(withInstances(n))))
		if err != nil {
			t.Fatal(err)
		}
		want := append(single.RelatedResources, composite.RelatedResourceRule{
			APIVersion: "v1", Resource: "pods", Namespace: testNamespace,
			Names: []string{"orders-0", "orders-1", "orders-2", "orders-3", "orders-4", "orders-5", "orders-6", "orders-7", "orders-8"},
		})
		if diff := cmp.Diff(want, resp.RelatedResources); diff != "" {
			t.Errorf("instances %d: -want +got:\n%s", n, diff)
		}
	}
}

// TestCustomizeRestore: with spec.restoreFrom and one instance, Customize
// also asks for pod <n>-0, whose init container restores, so the status can
// say why a restore failed; with instances >= 2 the instances' pods are
// asked for already, and without restoreFrom no pod but the backup Jobs'.
func TestCustomizeRestore(t *testing.T) {
	cases := []struct {
		name, reason string
		db           *dbv1.Database
		extra        []composite.RelatedResourceRule // beyond the same Database's without restoreFrom
	}{
		{"Restore", "pod 0 too", newDatabase(withRestore(testName, "latest")),
			[]composite.RelatedResourceRule{{APIVersion: "v1", Resource: "pods", Namespace: testNamespace, Names: []string{testName + "-copy-0"}}}},
		{"RestoreHA", "the instances' pods, pod 0 among them, once", newDatabase(withRestore(testName, "latest"), withInstances(3)), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plain := tc.db.DeepCopy()
			plain.Spec.RestoreFrom = nil
			base, err := Customize(customizeRequest(t, plain))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := Customize(customizeRequest(t, tc.db))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(append(base.RelatedResources, tc.extra...), resp.RelatedResources); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

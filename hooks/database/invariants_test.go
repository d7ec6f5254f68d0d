package database

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dbv1 "metahooks/api/v1"
)

// TestDataSafety checks, for every golden scenario, what must hold of any
// answer: no PVC is ever a child; a StatefulSet never deletes volumes when
// scaled and deletes them on deletion only under Delete; an observed
// StatefulSet's volume templates come back unchanged; and a finalize answer
// that drops the StatefulSet is a finalized one, given only once the observed
// StatefulSet's retention policy is the policy's.
func TestDataSafety(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			req := sc.build(t)
			resp := mustSync(t, req)
			d, o := parsed(t, req)
			if pvc := responseChild[corev1.PersistentVolumeClaim](t, resp, "PersistentVolumeClaim", backupsClaimName(d.name)); pvc != nil {
				t.Errorf("%s\na PVC child would be garbage collected with the Database whatever the policy", sc.reason)
			}
			sts := responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", d.name)
			if sts == nil {
				if !resp.Finalized {
					t.Fatalf("%s\nonly a finalized answer may drop the StatefulSet", sc.reason)
				}
				if w := volumesFollowPolicy(d, o); w.waitingFor != "" {
					t.Errorf("%s\nfinalized before the observed StatefulSet's retention policy was %s's", sc.reason, d.deletionPolicy)
				}
				return
			}
			wantDeleted := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
			if d.deletionPolicy == dbv1.DeletionDelete {
				wantDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
			}
			want := &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: wantDeleted, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
			if diff := cmp.Diff(want, sts.Spec.PersistentVolumeClaimRetentionPolicy); diff != "" {
				t.Errorf("%s\nPVC retention policy: -want +got:\n%s", sc.reason, diff)
			}
			if o.statefulSet != nil {
				if diff := cmp.Diff(o.statefulSet.Spec.VolumeClaimTemplates, sts.Spec.VolumeClaimTemplates); diff != "" {
					t.Errorf("%s\nvolume templates are immutable and must come back as observed: -observed +answer:\n%s", sc.reason, diff)
				}
			}
			if resp.Finalized {
				t.Errorf("%s\na finalized answer must not keep children", sc.reason)
			}
		})
	}
}

func TestStorageGrowthNeverReachesTheStatefulSet(t *testing.T) {
	old := newDatabase()
	db := newDatabase(withStorage("50Gi"), withGeneration(2))
	resp := mustSync(t, newRequest(t, db, false, observedChildren(t, old, 1)...))
	sts := responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", testName)
	for _, vct := range sts.Spec.VolumeClaimTemplates {
		if got := vct.Spec.Resources.Requests.Storage().String(); got != "5Gi" {
			t.Errorf("volume template %s: want the observed 5Gi, got %s", vct.Name, got)
		}
	}
	st := decodeStatus(t, resp)
	want := &struct{ Status, Reason string }{"False", ReasonExpansionRequired}
	for _, c := range st.Conditions {
		if c.Type == ConditionStorageApplied {
			if diff := cmp.Diff(want, &struct{ Status, Reason string }{string(c.Status), c.Reason}); diff != "" {
				t.Errorf("StorageApplied: -want +got:\n%s", diff)
			}
		}
	}
}

func TestSyncNeverKeepsAFinalBackupJobOrSetsFinalized(t *testing.T) {
	db := newDatabase(withPolicy(dbv1.DeletionSnapshot))
	job := finalJob(db, batchv1.JobComplete, "", "")
	resp := mustSync(t, newRequest(t, db, false, observedChildren(t, db, 1, job)...))
	if resp.Finalized || resp.ResyncAfterSeconds != 0 {
		t.Errorf("a sync answer must not set finalized or wait: %+v", resp)
	}
	if responseChild[batchv1.Job](t, resp, "Job", db.Name+"-final-backup") != nil {
		t.Error("the final backup Job belongs to finalization only")
	}
}

func TestFinalizeWaitsForSnapshotBeforeAnythingElse(t *testing.T) {
	cases := map[string]struct {
		reason        string
		job           *batchv1.Job
		wantFinalized bool
		wantResync    float64
		wantReplicas  int32
	}{
		"NoJobYet":  {reason: "the Job is created; the server runs", job: nil, wantResync: finalBackupWaitSeconds, wantReplicas: 1},
		"Running":   {reason: "the Job runs", job: finalJob(newDatabase(), "", "", ""), wantResync: finalBackupWaitSeconds, wantReplicas: 1},
		"Failed":    {reason: "kept, waiting for the user", job: finalJob(newDatabase(), batchv1.JobFailed, "DeadlineExceeded", ""), wantResync: failedBackupWaitSeconds, wantReplicas: 0},
		"Succeeded": {reason: "done", job: finalJob(newDatabase(), batchv1.JobComplete, "", ""), wantFinalized: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			db := newDatabase(withPolicy(dbv1.DeletionSnapshot), withHibernate(), withDeletion())
			var extra []runtime.Object
			if tc.job != nil {
				extra = append(extra, tc.job)
			}
			resp := mustSync(t, newRequest(t, db, true, observedChildren(t, newDatabase(withPolicy(dbv1.DeletionSnapshot), withHibernate()), 1, extra...)...))
			if resp.Finalized != tc.wantFinalized || resp.ResyncAfterSeconds != tc.wantResync {
				t.Errorf("%s\nfinalized %v resync %v, want %v %v", tc.reason, resp.Finalized, resp.ResyncAfterSeconds, tc.wantFinalized, tc.wantResync)
			}
			if sts := responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", testName); sts != nil && *sts.Spec.Replicas != tc.wantReplicas {
				t.Errorf("%s\nreplicas %d, want %d", tc.reason, *sts.Spec.Replicas, tc.wantReplicas)
			}
		})
	}
}

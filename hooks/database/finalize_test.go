package database

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

// TestFinalizeFollowsPVCOwners: the StatefulSet's retention policy and
// observedGeneration prove nothing about the PVCs (its controller changes
// their owners only through a ready pod); finalize looks at the related PVCs
// themselves.
func TestFinalizeFollowsPVCOwners(t *testing.T) {
	type claimState int
	const (
		unowned claimState = iota
		owned
		ownedByOtherUID  // an owner reference to an earlier StatefulSet of the same name
		onlyBackupsOwned // data released, backups not yet
		noClaims         // related PVCs asked for, none exists
		terminating      // unowned, already being deleted
		standbyOwned     // pod 0's unowned, those of ordinal 2 (a standby that was, or is) owned
		standbyUnowned   // pod 0's owned, those of ordinal 2 not
	)
	cases := map[string]struct {
		reason       string
		policy       dbv1.DeletionPolicy
		hibernated   bool
		claims       claimState
		noCustomize  bool // no related PVCs at all: an older CompositeController
		v2Keys       bool
		noSTS        bool
		wantFinal    bool
		wantReplicas int32
		wantMessage  string
	}{
		"RetainOwnedHibernated": {
			reason: "the reviewer's scenario: owned under Delete, hibernated, deleted under Retain; GC would take the PVCs",
			policy: dbv1.DeletionRetain, hibernated: true, claims: owned, wantReplicas: 1,
			wantMessage: `kubectl -n shop patch pvc data-orders-0 --type=json -p '[{"op":"remove","path":"/metadata/ownerReferences"}]'`,
		},
		"RetainOwnedRunning": {
			reason: "the pod is ready: its controller will release them", policy: dbv1.DeletionRetain, claims: owned, wantReplicas: 1,
			wantMessage: "waiting for the StatefulSet controller to release them",
		},
		"RetainOneOwned":      {reason: "every PVC counts", policy: dbv1.DeletionRetain, claims: onlyBackupsOwned, wantReplicas: 1, wantMessage: "PVC backups-orders-0 is still owned"},
		"RetainUnowned":       {reason: "nothing to lose", policy: dbv1.DeletionRetain, hibernated: true, claims: unowned, wantFinal: true},
		"RetainOtherOwnerUID": {reason: "only the observed StatefulSet's deletion matters", policy: dbv1.DeletionRetain, claims: ownedByOtherUID, wantFinal: true},
		"RetainNoClaims":      {reason: "no PVC exists", policy: dbv1.DeletionRetain, claims: noClaims, wantFinal: true},
		"RetainV2Keys":        {reason: "hook version v2 keys related objects namespace/name", policy: dbv1.DeletionRetain, claims: owned, v2Keys: true, wantReplicas: 1, wantMessage: "still owned"},
		"RetainNoCustomize": {
			reason: "nothing is known about the PVCs: never finalized, whatever the StatefulSet says",
			policy: dbv1.DeletionRetain, hibernated: true, noCustomize: true, wantReplicas: 0, wantMessage: "no customize hook",
		},
		"RetainNoStatefulSet":     {reason: "nothing garbage collection could take the PVCs with", policy: dbv1.DeletionRetain, claims: owned, noSTS: true, wantFinal: true},
		"DeleteOwned":             {reason: "GC takes them with the StatefulSet", policy: dbv1.DeletionDelete, hibernated: true, claims: owned, wantFinal: true},
		"DeleteUnownedHibernated": {reason: "Delete chosen while hibernated: start the pod", policy: dbv1.DeletionDelete, hibernated: true, claims: unowned, wantReplicas: 1, wantMessage: "not owned by StatefulSet orders yet"},
		"DeleteNoClaims":          {reason: "nothing to delete", policy: dbv1.DeletionDelete, claims: noClaims, wantFinal: true},
		"DeleteTerminating":       {reason: "already being deleted", policy: dbv1.DeletionDelete, claims: terminating, wantFinal: true},
		"DeleteNoCustomize":       {reason: "at worst PVCs are left behind: the StatefulSet's policy is enough", policy: dbv1.DeletionDelete, noCustomize: true, wantFinal: true},
		"RetainStandbyOwned": {
			reason: "every ordinal's volumes count: after a failover ordinal 2 may hold the newest data, and GC would delete it",
			policy: dbv1.DeletionRetain, hibernated: true, claims: standbyOwned, wantReplicas: 1, wantMessage: "PVCs data-orders-2 and backups-orders-2 are still owned",
		},
		"DeleteStandbyUnowned": {
			reason: "Delete means every ordinal's volumes", policy: dbv1.DeletionDelete, hibernated: true, claims: standbyUnowned, wantReplicas: 1,
			wantMessage: "PVCs data-orders-2 and backups-orders-2 are not owned by StatefulSet orders yet",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := []func(*dbv1.Database){withPolicy(tc.policy)}
			if tc.hibernated {
				opts = append(opts, withHibernate())
			}
			old := newDatabase(opts...)
			db := newDatabase(append(opts, withDeletion())...)
			children := observedChildren(t, old, 1)
			sts := children[0].(*appsv1.StatefulSet)
			var claims []runtime.Object
			switch tc.claims {
			case owned, unowned, terminating:
				claims = observedClaims(sts, tc.claims == owned)
			case ownedByOtherUID:
				other := sts.DeepCopy()
				other.UID = "0ff1ce00-0000-4000-8000-000000000000"
				claims = observedClaims(other, true)
			case onlyBackupsOwned:
				claims = []runtime.Object{observedClaims(sts, false)[0], observedClaims(sts, true)[1]}
			case standbyOwned, standbyUnowned:
				claims = observedClaims(sts, tc.claims == standbyUnowned)
				for _, c := range observedClaims(sts, tc.claims == standbyOwned) {
					pvc := c.(*corev1.PersistentVolumeClaim)
					pvc.Name = strings.TrimSuffix(pvc.Name, "-0") + "-2"
					pvc.UID += "2"
					claims = append(claims, pvc)
				}
			}
			if tc.claims == terminating {
				for _, c := range claims {
					c.(*corev1.PersistentVolumeClaim).DeletionTimestamp = ptr.To(metav1.NewTime(time.Date(2026, 11, 30, 4, 59, 30, 0, time.UTC)))
				}
			}
			if tc.noSTS {
				children = children[1:]
			}
			req := newRequest(t, db, true, append(children, claims...)...)
			if tc.noCustomize {
				req = withoutCustomize(req)
			}
			if tc.v2Keys {
				req.Related = toV2Keys(req.Related)
			}
			resp := mustSync(t, req)
			if resp.Finalized != tc.wantFinal {
				t.Fatalf("%s\nfinalized %v, want %v; status %s", tc.reason, resp.Finalized, tc.wantFinal, resp.Status)
			}
			if tc.wantFinal {
				return
			}
			if resp.ResyncAfterSeconds <= 0 {
				t.Errorf("%s\nno resyncAfterSeconds while waiting", tc.reason)
			}
			if got := responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", testName); got == nil || *got.Spec.Replicas != tc.wantReplicas {
				t.Errorf("%s\nStatefulSet %v, want replicas %d", tc.reason, got, tc.wantReplicas)
			}
			if st := decodeStatus(t, resp); !strings.Contains(st.Conditions[0].Message, tc.wantMessage) {
				t.Errorf("%s\nReady message %q, want it to contain %q", tc.reason, st.Conditions[0].Message, tc.wantMessage)
			}
		})
	}
}

func toV2Keys(m composite.ChildMap) composite.ChildMap {
	out := composite.ChildMap{}
	for typeKey, objects := range m {
		out[typeKey] = map[string]json.RawMessage{}
		for name, raw := range objects {
			out[typeKey][testNamespace+"/"+name] = raw
		}
	}
	return out
}

// TestFinalBackupWaitsForTheServer: the final backup Job is created only once
// the server is ready (or when it already exists), so pg_dump never races
// the start of a hibernated server.
func TestFinalBackupWaitsForTheServer(t *testing.T) {
	cases := map[string]struct {
		reason     string
		hibernated bool
		job        *batchv1.Job
		wantJob    bool
	}{
		"HibernatedNoJob":      {reason: "the server is starting: no Job yet", hibernated: true, wantJob: false},
		"RunningNoJob":         {reason: "the server is ready: the Job is created", wantJob: true},
		"HibernatedJobRunning": {reason: "an existing Job is kept, whatever the server", hibernated: true, job: finalJob(newDatabase(), "", "", ""), wantJob: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := []func(*dbv1.Database){withPolicy(dbv1.DeletionSnapshot)}
			if tc.hibernated {
				opts = append(opts, withHibernate())
			}
			var extra []runtime.Object
			if tc.job != nil {
				extra = append(extra, tc.job)
			}
			children := withClaims(observedChildren(t, newDatabase(opts...), 1, extra...), false)
			resp := mustSync(t, newRequest(t, newDatabase(append(opts, withDeletion())...), true, children...))
			if resp.Finalized {
				t.Fatalf("%s\nfinalized before the final backup", tc.reason)
			}
			if got := responseChild[batchv1.Job](t, resp, "Job", testName+"-final-backup") != nil; got != tc.wantJob {
				t.Errorf("%s\nfinal backup Job in the answer: %v, want %v", tc.reason, got, tc.wantJob)
			}
			if sts := responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", testName); *sts.Spec.Replicas != 1 {
				t.Errorf("%s\nthe server must run for the final backup, replicas %d", tc.reason, *sts.Spec.Replicas)
			}
		})
	}
}

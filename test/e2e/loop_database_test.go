package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDatabaseFullLoop: Databases on a cluster with the StatefulSet, Job,
// CronJob and garbage-collector controllers, pods run by kwok; the test only
// plays Metacontroller. Each deletion policy keeps or removes what it says.
func TestDatabaseFullLoop(t *testing.T) {
	cases := map[string]struct {
		reason string
		c      controller
		policy string
		run    func(t *testing.T, cl *cluster, c controller, ns, name string)
	}{
		"SnapshotV1ThreeWayMerge": {
			reason: "a scheduled backup run by the CronJob controller, then a final backup Job before the Database goes",
			c:      databaseController,
			policy: "Snapshot",
			run:    snapshotLoop,
		},
		"RetainV2ServerSideApply": {
			reason: "Retain: the PVCs outlive the Database",
			c:      withMode(databaseController, "v2", true),
			policy: "Retain",
			run:    claimsLoop(true),
		},
		"DeleteV2ServerSideApply": {
			reason: "Delete: the PVCs go with the StatefulSet",
			c:      withMode(databaseController, "v2", true),
			policy: "Delete",
			run:    claimsLoop(false),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl := useCluster(t)
			ns := createNamespace(t, "loop-db-"+strings.ToLower(name))
			schedule := ""
			if tc.policy == "Snapshot" {
				schedule = "\n  backup: {schedule: '* * * * *', retention: 2}" // fires within a minute
			}
			createParent(t, tc.c, ns, fmt.Sprintf("apiVersion: example.com/v1\nkind: Database\nmetadata: {name: pg}\nspec:\n  size: small\n  image: postgres:17\n  deletionPolicy: %s%s\n", tc.policy, schedule))
			took := tc.c.loop(t, ns, "pg", "Database Ready", 2*time.Minute, func(s loopState) bool {
				return conditionStatus(s.answer.Status, "Ready") == "True"
			})
			pods := listPods(t, ns, "statefulset.kubernetes.io/pod-name=pg-0")
			if len(pods) != 1 || !podReady(&pods[0]) {
				t.Fatalf("%s\nDatabase Ready but pod pg-0 is not (pods: %d)", tc.reason, len(pods))
			}
			figure(t, cl, tc.c, "Database (%s) create -> pod Ready, Ready=True in %s", tc.policy, seconds(took))
			tc.run(t, cl, tc.c, ns, "pg")
		})
	}
}

// snapshotLoop: the CronJob controller starts a backup Job at the scheduled
// minute, kwok completes its pod, BackupSucceeded follows; then the deletion
// runs the final backup Job to completion before the Database is finalized.
func snapshotLoop(t *testing.T, cl *cluster, c controller, ns, name string) {
	var scheduled time.Time
	took := c.loop(t, ns, name, "BackupSucceeded after a scheduled backup", 3*time.Minute, func(s loopState) bool {
		if scheduled.IsZero() {
			cj := &batchv1.CronJob{}
			if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: cronJobOf(t, ns)}, cj); err == nil && cj.Status.LastScheduleTime != nil {
				scheduled = cj.Status.LastScheduleTime.Time
			}
		}
		return conditionStatus(s.answer.Status, "BackupSucceeded") == "True"
	})
	jobs := &batchv1.JobList{}
	if err := k8s.List(testContext(t), jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	succeeded := 0
	for _, job := range jobs.Items {
		if owner := ownerKind(job.OwnerReferences); owner == "CronJob" && job.Status.Succeeded > 0 {
			succeeded++
		}
	}
	if succeeded == 0 {
		t.Fatalf("BackupSucceeded True but no Job of the CronJob succeeded (%d Jobs)", len(jobs.Items))
	}
	figure(t, cl, c, "scheduled backup: CronJob fired at %s, its Job's pod completed, BackupSucceeded=True %s after the scheduled time (%s of loop)",
		scheduled.UTC().Format("15:04:05"), seconds(time.Since(scheduled)), seconds(took))

	if err := k8s.Delete(testContext(t), c.get(t, ns, name)); err != nil {
		t.Fatal(err)
	}
	finalJob := name + "-final-backup"
	took = c.loop(t, ns, name, "final backup, then finalized", 3*time.Minute, func(s loopState) bool {
		if s.answer.Finalized {
			job := &batchv1.Job{}
			if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: finalJob}, job); err != nil || job.Status.Succeeded != 1 {
				t.Fatalf("finalized, but Job %s: %v, succeeded %d; want its pod completed first", finalJob, err, job.Status.Succeeded)
			}
		}
		return s.gone
	})
	figure(t, cl, c, "delete (Snapshot) -> final backup Job's pod completed -> finalized in %s", seconds(took))
}

// claimsLoop: delete the Database; once garbage collection has removed its
// StatefulSet, the PVCs are kept (Retain) or gone (Delete).
func claimsLoop(keep bool) func(t *testing.T, cl *cluster, c controller, ns, name string) {
	return func(t *testing.T, cl *cluster, c controller, ns, name string) {
		if n := len(listClaims(t, ns)); n != 2 {
			t.Fatalf("%d PVCs for a running Database, want data and backups", n)
		}
		if keep { // no backup schedule: nothing should change any more
			c.assertNoHotLoop(t, ns, name, 20*time.Second, "statefulset.kubernetes.io/pod-name="+name+"-0")
			figure(t, cl, c, "Database settled: no write for 20 s")
		}
		if err := k8s.Delete(testContext(t), c.get(t, ns, name)); err != nil {
			t.Fatal(err)
		}
		var finalized time.Time
		took := c.loop(t, ns, name, "finalized", 3*time.Minute, func(s loopState) bool {
			if s.answer.Finalized {
				finalized = time.Now()
			}
			return s.gone
		})
		waitFor(t, "StatefulSet garbage collected", 2*time.Minute, func() bool {
			return k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, &appsv1.StatefulSet{}) != nil
		})
		gc := time.Since(finalized)
		if keep {
			time.Sleep(2 * time.Second) // time for the controllers to do what they should not
			claims := listClaims(t, ns)
			if len(claims) != 2 {
				t.Fatalf("%d PVCs after the Database went under Retain, want both kept", len(claims))
			}
			for _, claim := range claims {
				if claim.DeletionTimestamp != nil || len(claim.OwnerReferences) != 0 {
					t.Errorf("PVC %s under Retain: deleting %v, owners %v; want kept and unowned", claim.Name, claim.DeletionTimestamp != nil, claim.OwnerReferences)
				}
			}
			figure(t, cl, c, "delete (Retain) -> finalized in %s, StatefulSet garbage collected within %s of the finalizer's removal, both PVCs kept", seconds(took), seconds(gc))
			return
		}
		gone := waitFor(t, "PVCs deleted", 2*time.Minute, func() bool { return len(listClaims(t, ns)) == 0 })
		figure(t, cl, c, "delete (Delete) -> finalized in %s, StatefulSet garbage collected within %s of the finalizer's removal, both PVCs gone %s after that", seconds(took), seconds(gc), seconds(gone))
	}
}

// cronJobOf is the name of the one CronJob in the namespace.
func cronJobOf(t *testing.T, ns string) string {
	t.Helper()
	list := &batchv1.CronJobList{}
	if err := k8s.List(testContext(t), list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
		t.Fatalf("want one CronJob in %s: %v, %d", ns, err, len(list.Items))
	}
	return list.Items[0].Name
}

func ownerKind(refs []metav1.OwnerReference) string {
	for _, ref := range refs {
		if ref.Controller != nil && *ref.Controller {
			return ref.Kind
		}
	}
	return ""
}

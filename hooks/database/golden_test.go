package database

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

var update = flag.Bool("update", false, "rewrite testdata/<scenario>/request.json and response.json, and the size tables of doc.go and docs/database.md")

// observedChildren are the children the hook asks for parent, as created and
// running (StatefulSet created at stsGeneration and settled), with extra
// observed children appended and replacing those of the same kind and name.
func observedChildren(t *testing.T, parent *dbv1.Database, stsGeneration int64, extra ...runtime.Object) []runtime.Object {
	t.Helper()
	sts := runningStatefulSet(t, parent, stsGeneration)
	headless := desired[corev1.Service](t, parent, "Service", parent.Name+"-headless")
	client := desired[corev1.Service](t, parent, "Service", parent.Name)
	cm := desired[corev1.ConfigMap](t, parent, "ConfigMap", parent.Name+"-config")
	created(headless, parent, 0)
	created(client, parent, 0)
	created(cm, parent, 0)
	client.Spec.ClusterIP = "10.96.41.7"
	client.Spec.ClusterIPs = []string{"10.96.41.7"}
	children := []runtime.Object{sts, headless, client, cm, observedSecret(t, parent, nil)}
	out := children[:0:0]
	for _, child := range children {
		if !replaced(child, extra) {
			out = append(out, child)
		}
	}
	return append(out, extra...)
}

// withClaims adds the related PVCs of the observed StatefulSet among children,
// owned by it or not.
func withClaims(children []runtime.Object, owned bool) []runtime.Object {
	for _, child := range children {
		if sts, ok := child.(*appsv1.StatefulSet); ok {
			return append(children, observedClaims(sts, owned)...)
		}
	}
	return children
}

func replaced(child runtime.Object, extra []runtime.Object) bool {
	name := child.(interface{ GetName() string }).GetName()
	for _, e := range extra {
		if e.GetObjectKind().GroupVersionKind() == child.GetObjectKind().GroupVersionKind() && e.(interface{ GetName() string }).GetName() == name {
			return true
		}
	}
	return false
}

// scenario is a golden case: it builds the request the hook is given.
type scenario struct {
	name   string
	reason string
	build  func(t *testing.T) *composite.Request
}

// scenarios are the golden cases of a single server.
var scenarios = []scenario{
	{
		name:   "first-sync",
		reason: "nothing observed: every child is created, credentials are derived from the key, status says the StatefulSet is missing",
		build: func(t *testing.T) *composite.Request {
			return newRequest(t, newDatabase(), false)
		},
	},
	{
		name:   "credentials-observed",
		reason: "an observed Secret's data is returned byte for byte, even when it differs from what the key derives",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase()
			secret := observedSecret(t, db, map[string][]byte{
				"username": []byte("app"),
				"password": []byte("made-by-an-earlier-version"),
				"database": []byte("app"),
				"uri":      []byte("postgresql://app:made-by-an-earlier-version@orders.shop.svc:5432/app"),
			})
			return newRequest(t, db, false, observedChildren(t, db, 1, secret)...)
		},
	},
	{
		name:   "size-change",
		reason: "small to medium: new resources and config hash roll the pod; the volume templates stay as observed and StorageApplied says how to expand",
		build: func(t *testing.T) *composite.Request {
			old := newDatabase()
			db := newDatabase(withSize(dbv1.SizeMedium), withGeneration(2))
			return newRequest(t, db, false, observedChildren(t, old, 1)...)
		},
	},
	{
		name:   "backup-scheduled",
		reason: "a schedule adds the CronJob; its last successful run gives BackupSucceeded and lastBackupTime",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withBackup("30 2 * * *", 5))
			scheduled := testNow.Add(-150 * 60e9)
			succeeded := scheduled.Add(72e9)
			cj := observedCronJob(t, db, &scheduled, &succeeded)
			return newRequest(t, db, false, observedChildren(t, db, 1, cj)...)
		},
	},
	{
		name:   "backup-scheduled-failed",
		reason: "the last scheduled run failed: BackupSucceeded False says why, in the words of that run's newest failed pod (the older run's pod and the earlier attempt say nothing)",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withBackup("30 2 * * *", 5))
			scheduled := testNow.Add(-150 * 60e9)
			earlier := scheduled.Add(-24 * time.Hour)
			cj := observedCronJob(t, db, &scheduled, ptr.To(earlier.Add(72e9)))
			run, oldRun := cronJobRun(cj, scheduled), cronJobRun(cj, earlier)
			return newRequest(t, db, false, observedChildren(t, db, 1, cj,
				backupPodOf(run, "b9q4w", scheduled.Add(11*time.Minute), 1, unreachable),
				backupPodOf(run, "a2m8z", scheduled.Add(5*time.Minute), 1, diskFull),
				backupPodOf(oldRun, "c3n7v", earlier.Add(5*time.Minute), 1, diskFull))...)
		},
	},
	{
		name:   "backup-on-demand",
		reason: "the backup-request annotation adds Job <name>-backup-<hash> with the CronJob's job template; it succeeded after the last scheduled run, so it is lastBackupTime",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withBackup("30 2 * * *", 5), withBackupRequest("1764470000"))
			scheduled := testNow.Add(-150 * 60e9)
			cj := observedCronJob(t, db, &scheduled, &scheduled)
			return newRequest(t, db, false, observedChildren(t, db, 1, cj, observedOnDemandJob(t, db, batchv1.JobComplete))...)
		},
	},
	{
		name:   "restore",
		reason: "restoreFrom on a new Database: the init container, initdb volume, guard and source volume are in the pod template",
		build: func(t *testing.T) *composite.Request {
			return newRequest(t, newDatabase(withRestore(testName, "latest")), false)
		},
	},
	{
		name:   "restore-failed",
		reason: "the restore's init container failed (the dump is not there): Ready and Progressing say RestoreFailed, in its words, not \"restoring ...: done\" (issue 31)",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withRestore(testName, "20261129T023000Z.dump"))
			children := observedChildren(t, db, 1)
			for _, child := range children {
				if sts, ok := child.(*appsv1.StatefulSet); ok {
					sts.Status.ReadyReplicas, sts.Status.AvailableReplicas = 0, 0 // pod 0 never starts
				}
			}
			return newRequest(t, db, false, append(children, restorePod(db, 1,
				"restore: reading the backups volume\ninit: FAILED: backup 20261129T023000Z.dump not found on the backups volume of Database orders; no empty database is started in its place"))...)
		},
	},
	{
		name:   "restore-complete",
		reason: "the pod became ready on the restoring template: the machinery is dropped and the StatefulSet annotated",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withRestore(testName, "20261129T023000Z.dump"))
			return newRequest(t, db, false, observedChildren(t, db, 1)...)
		},
	},
	{
		name:   "hibernate",
		reason: "hibernate: replicas 0, the CronJob suspended, volumes (whenScaled Retain), Secret and Services kept",
		build: func(t *testing.T) *composite.Request {
			old := newDatabase(withBackup("0 3 * * *", 7))
			db := newDatabase(withBackup("0 3 * * *", 7), withHibernate(), withGeneration(2))
			return newRequest(t, db, false, observedChildren(t, old, 1, observedCronJob(t, old, nil, nil))...)
		},
	},
	{
		name:   "finalize-retain-waiting",
		reason: "Retain set just before deletion while the StatefulSet still says whenDeleted Delete and owns its PVCs: not finalized until it says Retain and has released them",
		build: func(t *testing.T) *composite.Request {
			old := newDatabase(withPolicy(dbv1.DeletionDelete))
			db := newDatabase(withGeneration(2), withDeletion())
			return newRequest(t, db, true, withClaims(observedChildren(t, old, 1), true)...)
		},
	},
	{
		name:   "finalize-retain-done",
		reason: "Retain, the StatefulSet says whenDeleted Retain and the PVCs have no owner: finalized, no children; the PVCs stay",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withDeletion())
			return newRequest(t, db, true, withClaims(observedChildren(t, db, 1), false)...)
		},
	},
	{
		name: "finalize-retain-owned-hibernated",
		reason: "ran under Delete (the PVCs got owned), hibernated, then deleted under Retain: the StatefulSet says Retain and has seen it, " +
			"but with no pod its controller never released the PVCs; not finalized, the server is started so it can, status says how to release them by hand",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withHibernate(), withGeneration(3), withDeletion())
			return newRequest(t, db, true, withClaims(observedChildren(t, newDatabase(withHibernate()), 3), true)...)
		},
	},
	{
		name:   "finalize-retain-no-customize",
		reason: "Retain but the request has no related PVCs (no customize hook): nothing proves the PVCs are unowned, so never finalized",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withDeletion())
			return withoutCustomize(newRequest(t, db, true, observedChildren(t, db, 1)...))
		},
	},
	{
		name:   "finalize-delete-waiting",
		reason: "Delete set just before deletion: the StatefulSet gets whenDeleted Delete first, finalized only after its controller saw it",
		build: func(t *testing.T) *composite.Request {
			old := newDatabase()
			db := newDatabase(withPolicy(dbv1.DeletionDelete), withGeneration(2), withDeletion())
			return newRequest(t, db, true, withClaims(observedChildren(t, old, 1), false)...)
		},
	},
	{
		name:   "finalize-delete-done",
		reason: "Delete and the StatefulSet owns its PVCs: finalized, no children; garbage collection removes the volumes with it",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withPolicy(dbv1.DeletionDelete), withDeletion())
			return newRequest(t, db, true, withClaims(observedChildren(t, db, 1), true)...)
		},
	},
	{
		name:   "finalize-delete-unowned-hibernated",
		reason: "Delete chosen while hibernated: the StatefulSet says Delete but never took ownership of the PVCs; not finalized, the server is started so its controller can",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withPolicy(dbv1.DeletionDelete), withHibernate(), withGeneration(3), withDeletion())
			old := newDatabase(withPolicy(dbv1.DeletionDelete), withHibernate())
			return newRequest(t, db, true, withClaims(observedChildren(t, old, 3), false)...)
		},
	},
	{
		name:   "finalize-snapshot-server-starting",
		reason: "Snapshot of a hibernated Database: the server is started, and the final backup Job waits until it is ready",
		build: func(t *testing.T) *composite.Request {
			old := newDatabase(withPolicy(dbv1.DeletionSnapshot), withHibernate())
			db := newDatabase(withPolicy(dbv1.DeletionSnapshot), withHibernate(), withDeletion())
			return newRequest(t, db, true, withClaims(observedChildren(t, old, 1), false)...)
		},
	},
	{
		name:   "finalize-snapshot-waiting",
		reason: "Snapshot: the final backup Job is added, the server keeps running even though hibernating, backups suspended, resync",
		build: func(t *testing.T) *composite.Request {
			old := newDatabase(withPolicy(dbv1.DeletionSnapshot), withHibernate(), withBackup("0 3 * * *", 7))
			db := newDatabase(withPolicy(dbv1.DeletionSnapshot), withHibernate(), withBackup("0 3 * * *", 7), withDeletion())
			return newRequest(t, db, true, withClaims(observedChildren(t, old, 1, observedCronJob(t, old, nil, nil), finalJob(db, "", "", "")), false)...)
		},
	},
	{
		name:   "finalize-snapshot-failed",
		reason: "Snapshot and the final backup failed: the Database is kept, status says why (in the words of the Job's newest failed pod) and how to go on",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withPolicy(dbv1.DeletionSnapshot), withDeletion())
			job := finalJob(db, batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
			pod := backupPodOf(job, "x7k2p", testNow.Add(-10*time.Minute), 1, diskFull)
			return newRequest(t, db, true, withClaims(observedChildren(t, db, 1, job, pod), false)...)
		},
	},
	{
		name:   "finalize-snapshot-done",
		reason: "Snapshot and the final backup succeeded: finalized, lastBackupTime from the Job",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withPolicy(dbv1.DeletionSnapshot), withDeletion())
			job := finalJob(db, batchv1.JobComplete, "", "")
			return newRequest(t, db, true, withClaims(observedChildren(t, db, 1, job), false)...)
		},
	},
}

// TestGolden runs the hook on testdata/<scenario>/request.json and compares
// the answer with response.json. With -update both files are written from the
// scenario builders first.
func TestGolden(t *testing.T) {
	for _, sc := range append(scenarios, instanceScenarios...) {
		t.Run(sc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", sc.name)
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				writeJSON(t, filepath.Join(dir, "request.json"), sc.build(t))
			}
			body, err := os.ReadFile(filepath.Join(dir, "request.json"))
			if err != nil {
				t.Fatal(err)
			}
			req, err := composite.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			got := indent(t, mustSync(t, req))
			path := filepath.Join(dir, "response.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s\nSync(%s): -want +got:\n%s", sc.reason, sc.name, diff)
			}
		})
	}
}

func indent(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(raw, '\n')
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.WriteFile(path, indent(t, v), 0o644); err != nil {
		t.Fatal(err)
	}
}

// responseChild finds a child of a response by kind and name, decoded.
func responseChild[T any](t *testing.T, resp *composite.Response, kind, name string) *T {
	t.Helper()
	for _, child := range resp.Children {
		if child.Kind == kind && child.Name == name {
			var obj T
			if err := json.Unmarshal(child.JSON, &obj); err != nil {
				t.Fatal(err)
			}
			return &obj
		}
	}
	return nil
}

func decodeStatus(t *testing.T, resp *composite.Response) dbv1.DatabaseStatus {
	t.Helper()
	var st dbv1.DatabaseStatus
	if err := json.Unmarshal(resp.Status, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

package database

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"

	dbv1 "metahooks/api/v1"
)

func mustParse(t *testing.T, db *dbv1.Database) *database {
	t.Helper()
	d, err := parseParent(mustJSON(t, db))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPodTemplateRolls(t *testing.T) {
	base := mustParse(t, newDatabase())
	baseSTS := statefulSet(base, &observed{}, 1, false)
	cases := map[string]struct {
		reason    string
		db        *dbv1.Database
		wantRolls bool
	}{
		"SameSpec":     {reason: "nothing changed, nothing rolls", db: newDatabase(), wantRolls: false},
		"SizeChange":   {reason: "new resources and postgresql.conf", db: newDatabase(withSize(dbv1.SizeLarge)), wantRolls: true},
		"ImageChange":  {reason: "a minor upgrade", db: newDatabase(func(db *dbv1.Database) { db.Spec.Image = "postgres:17.2" }), wantRolls: true},
		"BackupChange": {reason: "backups do not touch the server", db: newDatabase(withBackup("0 1 * * *", 3)), wantRolls: false},
		"PolicyChange": {reason: "the retention policy is not in the pod template", db: newDatabase(withPolicy(dbv1.DeletionDelete)), wantRolls: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sts := statefulSet(mustParse(t, tc.db), &observed{}, 1, false)
			rolls := cmp.Diff(baseSTS.Spec.Template, sts.Spec.Template) != ""
			if rolls != tc.wantRolls {
				t.Errorf("%s\npod template changed: %v, want %v", tc.reason, rolls, tc.wantRolls)
			}
		})
	}
}

func TestPresetsAreConsistent(t *testing.T) {
	for size, p := range presets {
		d := mustParse(t, newDatabase(withSize(size)))
		sts := statefulSet(d, &observed{}, 1, false)
		res := sts.Spec.Template.Spec.Containers[0].Resources
		if got := res.Limits.Memory().String(); got != p.memory {
			t.Errorf("%s: memory limit %s, want %s", size, got, p.memory)
		}
		if got := res.Requests.Cpu().String(); got != p.cpuRequest {
			t.Errorf("%s: cpu request %s, want the canonical %s", size, got, p.cpuRequest)
		}
		conf := postgresqlConf(d)
		// The file replaces initdb's, so initdb's locale-derived settings are
		// spelled out too.
		for _, want := range []string{"shared_buffers = " + p.sharedBuffers, "max_connections = ", "effective_cache_size = " + p.effectiveCacheSize,
			"default_text_search_config = 'pg_catalog.english'", "datestyle = 'iso, mdy'"} {
			if !strings.Contains(conf, want) {
				t.Errorf("%s: postgresql.conf lacks %q", size, want)
			}
		}
		if got := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String(); got != p.storage {
			t.Errorf("%s: data volume %s, want %s", size, got, p.storage)
		}
	}
}

func TestBackupCronJob(t *testing.T) {
	cases := map[string]struct {
		reason      string
		db          *dbv1.Database
		suspend     bool
		wantNil     bool
		wantSuspend bool
	}{
		"NoSchedule": {reason: "no spec.backup, no CronJob", db: newDatabase(), wantNil: true},
		"Scheduled":  {reason: "runs on schedule", db: newDatabase(withBackup("0 2 * * *", 3))},
		"Suspended":  {reason: "hibernating or deleting", db: newDatabase(withBackup("0 2 * * *", 3)), suspend: true, wantSuspend: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := mustParse(t, tc.db)
			cj := backupCronJob(d, tc.suspend, d.host())
			if (cj == nil) != tc.wantNil {
				t.Fatalf("%s\nCronJob nil: %v, want %v", tc.reason, cj == nil, tc.wantNil)
			}
			if cj == nil {
				return
			}
			if *cj.Spec.Suspend != tc.wantSuspend {
				t.Errorf("%s\nsuspend %v, want %v", tc.reason, *cj.Spec.Suspend, tc.wantSuspend)
			}
			pod := cj.Spec.JobTemplate.Spec.Template.Spec
			if diff := cmp.Diff("backups-orders-0", pod.Volumes[0].PersistentVolumeClaim.ClaimName); diff != "" {
				t.Errorf("%s\nbackups claim: -want +got:\n%s", tc.reason, diff)
			}
			env := map[string]string{}
			for _, e := range pod.Containers[0].Env {
				env[e.Name] = e.Value
			}
			if env["BACKUP_RETENTION"] != "3" {
				t.Errorf("%s\nBACKUP_RETENTION %q, want 3", tc.reason, env["BACKUP_RETENTION"])
			}
		})
	}
}

func TestRestoreMachinery(t *testing.T) {
	cases := map[string]struct {
		reason     string
		source     string
		wantClaims []string
	}{
		"FromAnotherDatabase": {reason: "mounts the source's backups PVC read-only", source: "orders", wantClaims: []string{"backups-orders-0"}},
		"FromItself":          {reason: "uses its own backups volume, no second claim", source: "orders-copy", wantClaims: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := mustParse(t, newDatabase(withRestore(tc.source, "latest")))
			sts := statefulSet(d, &observed{}, 1, true)
			pod := sts.Spec.Template.Spec
			var claims []string
			for _, v := range pod.Volumes {
				if v.PersistentVolumeClaim != nil {
					claims = append(claims, v.PersistentVolumeClaim.ClaimName)
					if !v.PersistentVolumeClaim.ReadOnly {
						t.Errorf("%s\nthe source volume must be read-only", tc.reason)
					}
				}
			}
			if diff := cmp.Diff(tc.wantClaims, claims); diff != "" {
				t.Errorf("%s\nclaims: -want +got:\n%s", tc.reason, diff)
			}
			if len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != initContainerName {
				t.Fatalf("%s\nwant one init container init, got %+v", tc.reason, pod.InitContainers)
			}
			env := map[string]string{}
			for _, e := range pod.InitContainers[0].Env {
				env[e.Name] = e.Value
			}
			if env["RESTORE_BACKUP"] != d.restore.Backup || env["RESTORE_DATABASE"] != d.restore.Database || env["RESTORE_DIR"] != restoreSourcePath {
				t.Errorf("%s\ninit container env %v lacks the backup to restore", tc.reason, env)
			}
			done := statefulSet(d, &observed{}, 1, false).Spec.Template.Spec.InitContainers[0]
			for _, e := range done.Env {
				if strings.HasPrefix(e.Name, "RESTORE_") {
					t.Errorf("%s\nonce restored the init container must not restore again: %s", tc.reason, e.Name)
				}
			}
		})
	}
}

func TestRestoringEndsOnceReady(t *testing.T) {
	d := mustParse(t, newDatabase(withRestore("orders", "latest")))
	restoringSTS := statefulSet(d, &observed{}, 1, true)
	settled := func(sts *appsv1.StatefulSet, ready int32) *appsv1.StatefulSet {
		sts = sts.DeepCopy()
		sts.Status = appsv1.StatefulSetStatus{ReadyReplicas: ready, CurrentRevision: "r1", UpdateRevision: "r1"}
		return sts
	}
	done := statefulSet(d, &observed{}, 1, false)
	cases := map[string]struct {
		reason string
		sts    *appsv1.StatefulSet
		want   bool
	}{
		"NoStatefulSet":     {reason: "nothing created yet", sts: nil, want: true},
		"NotReady":          {reason: "the restore is running or failed", sts: settled(restoringSTS, 0), want: true},
		"ReadyOnRestore":    {reason: "the init container succeeded and the server answers", sts: settled(restoringSTS, 1), want: false},
		"AnnotatedRestored": {reason: "remembered on the StatefulSet", sts: settled(done, 0), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := restoring(d, tc.sts); got != tc.want {
				t.Errorf("%s\nrestoring = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

// TestRestoreWithInstances: at instances >= 2 pod 0 restores alone (the
// source is a ReadWriteOnce volume every pod of the template mounts); once
// the StatefulSet shows the restore over, it runs every instance.
func TestRestoreWithInstances(t *testing.T) {
	db := newDatabase(withInstances(3), withRestore("orders-old", "latest"))
	first := desired[appsv1.StatefulSet](t, db, "StatefulSet", db.Name)
	if *first.Spec.Replicas != 1 || first.Spec.Template.Annotations[restoringAnnotation] == "" {
		t.Fatalf("while restoring: replicas %d, restoring annotation %q; want 1 and the restore machinery", *first.Spec.Replicas, first.Spec.Template.Annotations[restoringAnnotation])
	}
	// The pod became ready on the restoring template: the restore is over.
	observed := first.DeepCopy()
	observed.Generation = 2
	observed.Status = appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 1, ReadyReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r1"}
	resp := mustSync(t, newRequest(t, db, false, observed))
	after := responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", db.Name)
	if *after.Spec.Replicas != 3 || after.Spec.Template.Annotations[restoringAnnotation] != "" {
		t.Errorf("after the restore: replicas %d, restoring annotation %q; want 3 and no machinery", *after.Spec.Replicas, after.Spec.Template.Annotations[restoringAnnotation])
	}
}

package database

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"metahooks/hooks/kube"
)

type reasonOf struct {
	Status metav1.ConditionStatus
	Reason string
}

func TestBackupCondition(t *testing.T) {
	at := func(h int) *time.Time { return ptr.To(testNow.Add(time.Duration(h) * time.Hour)) }
	withActive := func(cj *batchv1.CronJob) *batchv1.CronJob {
		cj.Status.Active = []corev1.ObjectReference{{Name: "orders-backup-29900000"}}
		return cj
	}
	db := newDatabase(withBackup("0 * * * *", 3))
	cases := map[string]struct {
		reason string
		cj     *batchv1.CronJob
		want   reasonOf
	}{
		"NotCreated":      {reason: "no CronJob observed yet", cj: nil, want: reasonOf{metav1.ConditionUnknown, kube.ReasonNoBackupYet}},
		"NeverRan":        {reason: "created, not scheduled yet", cj: observedCronJob(t, db, nil, nil), want: reasonOf{metav1.ConditionUnknown, kube.ReasonNoBackupYet}},
		"Succeeded":       {reason: "the last scheduled run succeeded", cj: observedCronJob(t, db, at(-2), at(-1)), want: reasonOf{metav1.ConditionTrue, kube.ReasonBackupSucceeded}},
		"RunningAfterOK":  {reason: "a new run is under way", cj: withActive(observedCronJob(t, db, at(-1), at(-2))), want: reasonOf{metav1.ConditionUnknown, kube.ReasonBackupRunning}},
		"FailedAfterOK":   {reason: "the last run is over and did not succeed", cj: observedCronJob(t, db, at(-1), at(-2)), want: reasonOf{metav1.ConditionFalse, kube.ReasonBackupFailed}},
		"FirstRunFailed":  {reason: "scheduled, never succeeded, nothing active", cj: observedCronJob(t, db, at(-1), nil), want: reasonOf{metav1.ConditionFalse, kube.ReasonBackupFailed}},
		"FirstRunRunning": {reason: "scheduled, running", cj: withActive(observedCronJob(t, db, at(-1), nil)), want: reasonOf{metav1.ConditionUnknown, kube.ReasonBackupRunning}},
	}
	d := mustParse(t, db)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := backupCondition(d, &observed{cronJob: tc.cj}, plan{replicas: 1})
			if diff := cmp.Diff(tc.want, reasonOf{c.Status, c.Reason}); diff != "" {
				t.Errorf("%s\nbackupCondition: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestStorageCondition(t *testing.T) {
	d := mustParse(t, newDatabase(withStorage("10Gi")))
	ha := mustParse(t, newDatabase(withStorage("10Gi"), withInstances(3)))
	q := func(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }
	cases := map[string]struct {
		reason            string
		d                 *database
		template, backups *resource.Quantity
		want              reasonOf
	}{
		"NoStatefulSet": {reason: "the template will be the requested size", d: d, want: reasonOf{metav1.ConditionTrue, ReasonAsRequested}},
		"Equal":         {reason: "same quantity in another notation", d: d, template: q("10240Mi"), backups: q("10Gi"), want: reasonOf{metav1.ConditionTrue, ReasonAsRequested}},
		"Larger":        {reason: "volumes are never shrunk", d: d, template: q("20Gi"), backups: q("20Gi"), want: reasonOf{metav1.ConditionTrue, ReasonLargerThanRequested}},
		"Smaller": {reason: "growth needs a PVC expansion, of the backups volume of the same size too (issue 31: only the data PVC was named)",
			d: d, template: q("5Gi"), backups: q("5Gi"), want: reasonOf{metav1.ConditionFalse, ReasonExpansionRequired}},
		"SmallerBackupsLarge": {reason: "a backups template already large enough is not named",
			d: d, template: q("5Gi"), backups: q("10Gi"), want: reasonOf{metav1.ConditionFalse, ReasonExpansionRequired}},
		"SmallerEveryInstance": {reason: "with instances 3, every instance's volumes",
			d: ha, template: q("5Gi"), backups: q("5Gi"), want: reasonOf{metav1.ConditionFalse, ReasonExpansionRequired}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := storageCondition(tc.d, tc.template, tc.backups)
			if diff := cmp.Diff(tc.want, reasonOf{c.Status, c.Reason}); diff != "" {
				t.Errorf("%s\nstorageCondition: -want +got:\n%s", tc.reason, diff)
			}
			if c.Reason != ReasonExpansionRequired {
				return
			}
			backupsToo := tc.backups.Cmp(tc.d.storage) < 0
			var want []string
			for ordinal := range int(tc.d.ha.instances) {
				want = append(want, kube.ClaimName(dataVolume, tc.d.name, ordinal))
				if backupsToo {
					want = append(want, kube.ClaimName(backupsVolume, tc.d.name, ordinal))
				}
			}
			if !strings.Contains(c.Message, " "+strings.Join(want, ", ")+" to 10Gi") {
				t.Errorf("%s: message %q does not name %v", tc.reason, c.Message, want)
			}
			if !backupsToo && strings.Contains(c.Message, backupsVolume+"-") {
				t.Errorf("%s: message %q names a backups PVC", tc.reason, c.Message)
			}
		})
	}
}

// TestRestoringSaysWhereToLook: the hook cannot see the pod, so a restore
// that does not end must name the logs that tell a failure from a long load.
func TestRestoringSaysWhereToLook(t *testing.T) {
	db := newDatabase(withRestore(testName, "latest"))
	sts := desired[appsv1.StatefulSet](t, db, "StatefulSet", db.Name)
	created(sts, db, 1)
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, CurrentRevision: "r1", UpdateRevision: "r1"}
	st := decodeStatus(t, mustSync(t, newRequest(t, db, false, sts)))
	ready := st.Conditions[0]
	if ready.Reason != kube.ReasonRestoring || !strings.Contains(ready.Message, "kubectl -n shop logs orders-copy-0 -c init") {
		t.Errorf("Ready = %s %q, want Restoring naming the init container's logs", ready.Reason, ready.Message)
	}
}

package database

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// onDemandName is the Job name the design gives a request value, computed
// here independently of the hook.
func onDemandName(value string) string {
	return fmt.Sprintf("%s-backup-%x", testName, sha256.Sum256([]byte(value)))[:len(testName)+len("-backup-")+8]
}

// onDemandJobs are the names of the response's Jobs <name>-backup-*.
func onDemandJobs(resp *composite.Response) []string {
	var names []string
	for _, child := range resp.Children {
		if child.Kind == "Job" && strings.HasPrefix(child.Name, testName+"-backup-") {
			names = append(names, child.Name)
		}
	}
	return names
}

// observedOnDemandJob is the on-demand Job the hook asks for parent, as
// created, with the given terminal condition ("" while it runs).
func observedOnDemandJob(t *testing.T, parent *dbv1.Database, condition batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	job := desired[batchv1.Job](t, parent, "Job", onDemandName(parent.Annotations[backupRequestAnnotation]))
	return observedJob(job, parent, condition, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
}

func TestOnDemandBackupJob(t *testing.T) {
	const first, second = "1764586800", "1764590400"
	backup := withBackup("0 2 * * *", 4)
	old := newDatabase(backup, withBackupRequest(first))
	cases := map[string]struct {
		reason     string
		parent     *dbv1.Database
		finalizing bool
		observed   []*batchv1.Job
		want       []string
	}{
		"NoRequest":        {reason: "without the annotation there is no on-demand Job", parent: newDatabase(backup), want: nil},
		"Requested":        {reason: "the annotation asks for one Job named by the value's hash", parent: newDatabase(backup, withBackupRequest(first)), want: []string{onDemandName(first)}},
		"WithoutSchedule":  {reason: "an on-demand backup needs no schedule: the backups volume is always there", parent: newDatabase(withBackupRequest(first)), want: []string{onDemandName(first)}},
		"KeptWhenFinished": {reason: "a finished Job stays listed while the request is the same: listing it again never runs it twice", parent: old, observed: []*batchv1.Job{observedOnDemandJob(t, old, batchv1.JobComplete)}, want: []string{onDemandName(first)}},
		"NewValue":         {reason: "a new value replaces the Job: the old one is no longer listed, so Metacontroller deletes it", parent: newDatabase(backup, withBackupRequest(second)), observed: []*batchv1.Job{observedOnDemandJob(t, old, batchv1.JobComplete)}, want: []string{onDemandName(second)}},
		"Removed":          {reason: "removing the annotation removes the Job", parent: newDatabase(backup), observed: []*batchv1.Job{observedOnDemandJob(t, old, "")}, want: nil},
		"Hibernated":       {reason: "no server to dump, as the suspended CronJob", parent: newDatabase(backup, withHibernate(), withBackupRequest(first)), want: nil},
		"Finalizing":       {reason: "finalize never emits it: the final backup is the one that counts", parent: newDatabase(backup, withBackupRequest(first), withDeletion()), finalizing: true, want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var extra []runtime.Object
			for _, j := range tc.observed {
				extra = append(extra, j)
			}
			req := newRequest(t, tc.parent, tc.finalizing, withClaims(observedChildren(t, tc.parent, 1, extra...), false)...)
			if diff := cmp.Diff(tc.want, onDemandJobs(mustSync(t, req))); diff != "" {
				t.Errorf("%s\non-demand Jobs: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestOnDemandJobIsTheCronJobsJob: the on-demand Job runs exactly what the
// CronJob runs, with the same host, retention and volumes.
func TestOnDemandJobIsTheCronJobsJob(t *testing.T) {
	for _, instances := range []int32{1, 3} {
		t.Run(fmt.Sprint(instances), func(t *testing.T) {
			db := newDatabase(withBackup("0 2 * * *", 4), withBackupRequest("now"))
			if instances > 1 {
				db.Spec.Instances = &instances
			}
			resp := mustSync(t, newRequest(t, db, false))
			cj := responseChild[batchv1.CronJob](t, resp, "CronJob", testName+"-backup")
			job := responseChild[batchv1.Job](t, resp, "Job", onDemandName("now"))
			if cj == nil || job == nil {
				t.Fatalf("want CronJob and Job, got %v %v", cj != nil, job != nil)
			}
			if diff := cmp.Diff(cj.Spec.JobTemplate.Spec, job.Spec); diff != "" {
				t.Errorf("the on-demand Job's spec must be the CronJob's job template: -cronjob +job:\n%s", diff)
			}
			if diff := cmp.Diff(cj.Labels, job.Labels); diff != "" {
				t.Errorf("the on-demand Job must carry the CronJob's labels: -cronjob +job:\n%s", diff)
			}
		})
	}
}

func TestOnDemandBackupStatus(t *testing.T) {
	const value = "1764586800"
	db := newDatabase(withBackup("0 2 * * *", 4), withBackupRequest(value))
	cronSucceeded := testNow.Add(-3 * time.Hour)
	cronLater := testNow.Add(time.Hour) // after the Jobs of observedJob finished
	succeeded := observedOnDemandJob(t, db, batchv1.JobComplete)
	type want struct {
		OnDemand *dbv1.OnDemandBackupStatus
		Last     *metav1.Time
		Backup   reasonOf
	}
	cases := map[string]struct {
		reason   string
		parent   *dbv1.Database
		cronLast *time.Time
		job      *batchv1.Job
		want     want
	}{
		"NoRequest": {
			reason: "no annotation, no onDemandBackup", parent: newDatabase(withBackup("0 2 * * *", 4)), cronLast: &cronSucceeded,
			want: want{Last: &metav1.Time{Time: cronSucceeded}, Backup: reasonOf{metav1.ConditionTrue, kube.ReasonBackupSucceeded}},
		},
		"Pending": {
			reason: "the Job is not observed yet", parent: db, cronLast: &cronSucceeded,
			want: want{
				OnDemand: &dbv1.OnDemandBackupStatus{Request: value, Job: onDemandName(value), State: dbv1.OnDemandBackupPending, Message: "Job " + onDemandName(value) + " is not created yet"},
				Last:     &metav1.Time{Time: cronSucceeded}, Backup: reasonOf{metav1.ConditionTrue, kube.ReasonBackupSucceeded},
			},
		},
		"PendingHibernated": {
			reason: "status says why the Job is not created", parent: newDatabase(withBackup("0 2 * * *", 4), withBackupRequest(value), withHibernate()),
			want: want{
				OnDemand: &dbv1.OnDemandBackupStatus{Request: value, Job: onDemandName(value), State: dbv1.OnDemandBackupPending, Message: "the Database hibernates: the backup runs once spec.hibernate is false"},
				Backup:   reasonOf{metav1.ConditionUnknown, kube.ReasonNoBackupYet},
			},
		},
		"Running": {
			reason: "the Job is observed without a terminal condition", parent: db, cronLast: &cronSucceeded, job: observedOnDemandJob(t, db, ""),
			want: want{
				OnDemand: &dbv1.OnDemandBackupStatus{Request: value, Job: onDemandName(value), State: dbv1.OnDemandBackupRunning},
				Last:     &metav1.Time{Time: cronSucceeded}, Backup: reasonOf{metav1.ConditionTrue, kube.ReasonBackupSucceeded},
			},
		},
		"Succeeded": {
			reason: "completed later than the CronJob's last success: lastBackupTime is the Job's", parent: db, cronLast: &cronSucceeded, job: succeeded,
			want: want{
				OnDemand: &dbv1.OnDemandBackupStatus{Request: value, Job: onDemandName(value), State: dbv1.OnDemandBackupSucceeded, CompletionTime: succeeded.Status.CompletionTime},
				Last:     succeeded.Status.CompletionTime, Backup: reasonOf{metav1.ConditionTrue, kube.ReasonBackupSucceeded},
			},
		},
		"SucceededBeforeCron": {
			reason: "a later scheduled success stays the lastBackupTime", parent: db, cronLast: &cronLater, job: succeeded,
			want: want{
				OnDemand: &dbv1.OnDemandBackupStatus{Request: value, Job: onDemandName(value), State: dbv1.OnDemandBackupSucceeded, CompletionTime: succeeded.Status.CompletionTime},
				Last:     &metav1.Time{Time: cronLater}, Backup: reasonOf{metav1.ConditionTrue, kube.ReasonBackupSucceeded},
			},
		},
		"Failed": {
			reason: "failed after the CronJob's last success: BackupSucceeded is False with OnDemandBackupFailed", parent: db, cronLast: &cronSucceeded, job: observedOnDemandJob(t, db, batchv1.JobFailed),
			want: want{
				OnDemand: &dbv1.OnDemandBackupStatus{Request: value, Job: onDemandName(value), State: dbv1.OnDemandBackupFailed,
					Message: "BackoffLimitExceeded: Job has reached the specified backoff limit; see kubectl -n shop logs job/" + onDemandName(value) + ", and set a new request value to try again"},
				Last: &metav1.Time{Time: cronSucceeded}, Backup: reasonOf{metav1.ConditionFalse, ReasonOnDemandBackupFailed},
			},
		},
		"FailedBeforeCron": {
			reason: "a later scheduled success is the last backup: the old failure does not hide it", parent: db, cronLast: &cronLater, job: observedOnDemandJob(t, db, batchv1.JobFailed),
			want: want{
				OnDemand: &dbv1.OnDemandBackupStatus{Request: value, Job: onDemandName(value), State: dbv1.OnDemandBackupFailed,
					Message: "BackoffLimitExceeded: Job has reached the specified backoff limit; see kubectl -n shop logs job/" + onDemandName(value) + ", and set a new request value to try again"},
				Last: &metav1.Time{Time: cronLater}, Backup: reasonOf{metav1.ConditionTrue, kube.ReasonBackupSucceeded},
			},
		},
		"SucceededWithoutSchedule": {
			reason: "without spec.backup the on-demand run is the last backup", parent: newDatabase(withBackupRequest(value)), job: succeeded,
			want: want{
				OnDemand: &dbv1.OnDemandBackupStatus{Request: value, Job: onDemandName(value), State: dbv1.OnDemandBackupSucceeded, CompletionTime: succeeded.Status.CompletionTime},
				Last:     succeeded.Status.CompletionTime, Backup: reasonOf{metav1.ConditionTrue, kube.ReasonBackupSucceeded},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var extra []runtime.Object
			if tc.parent.Spec.Backup != nil {
				scheduled := testNow.Add(-4 * time.Hour)
				if tc.cronLast != nil && tc.cronLast.After(scheduled) {
					scheduled = tc.cronLast.Add(-time.Minute)
				}
				var last *time.Time
				if tc.cronLast != nil {
					last = tc.cronLast
				} else {
					scheduled = time.Time{}
				}
				var sched *time.Time
				if !scheduled.IsZero() {
					sched = &scheduled
				}
				extra = append(extra, observedCronJob(t, tc.parent, sched, last))
			}
			if tc.job != nil {
				extra = append(extra, tc.job)
			}
			st := decodeStatus(t, mustSync(t, newRequest(t, tc.parent, false, observedChildren(t, tc.parent, 1, extra...)...)))
			var backup metav1.Condition
			for _, c := range st.Conditions {
				if c.Type == kube.ConditionBackupSucceeded {
					backup = c
				}
			}
			got := want{OnDemand: st.OnDemandBackup, Last: st.LastBackupTime, Backup: reasonOf{backup.Status, backup.Reason}}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nstatus: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

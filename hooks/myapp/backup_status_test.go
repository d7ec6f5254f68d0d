package myapp

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/kube"
)

func cronJobWith(scheduled, succeeded *time.Time, active bool) *batchv1.CronJob {
	cj := &batchv1.CronJob{}
	if scheduled != nil {
		cj.Status.LastScheduleTime = &metav1.Time{Time: *scheduled}
	}
	if succeeded != nil {
		cj.Status.LastSuccessfulTime = &metav1.Time{Time: *succeeded}
	}
	if active {
		cj.Status.Active = []corev1.ObjectReference{{Name: "running"}}
	}
	return cj
}

func TestReportBackups(t *testing.T) {
	at := func(h, m int) *time.Time { v := time.Date(2026, 12, 1, h, m, 0, 0, time.UTC); return &v }
	yesterday := func(h, m int) *time.Time { v := at(h, m).AddDate(0, 0, -1); return &v }
	schedule := withSpec(map[string]any{"backupSchedule": "0 2 * * *"})
	override := withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"command": []string{"b"}}})
	done := cronJobWith(at(2, 0), at(2, 3), false)

	type want struct {
		Status  metav1.ConditionStatus
		Reason  string
		Message string
		Time    string
		Name    string
	}
	cases := map[string]struct {
		reason   string
		spec     map[string]any
		cronJobs []*batchv1.CronJob
		want     want
	}{
		"NoSchedule": {
			reason: "no backupSchedule", spec: baseSpec(),
			want: want{Status: "Unknown", Reason: kube.ReasonNoBackupSchedule, Message: "spec.backupSchedule is not set"},
		},
		"NotYet": {
			reason: "the CronJobs have not run", spec: schedule, cronJobs: []*batchv1.CronJob{nil, cronJobWith(nil, nil, false)},
			want: want{Status: "Unknown", Reason: kube.ReasonNoBackupYet, Message: "no backup has run yet on schedule 0 2 * * *: CronJob demo-backup-0, demo-backup-1"},
		},
		"Succeeded": {
			reason: "both replicas archived the 02:00 run: the backup is named after it, finished with the later archive",
			spec:   schedule, cronJobs: []*batchv1.CronJob{done, cronJobWith(at(2, 0), at(2, 7), false)},
			want: want{Status: "True", Reason: kube.ReasonBackupSucceeded, Message: "backup 20261201T020000Z finished at 2026-12-01T02:07:00Z",
				Time: "2026-12-01T02:07:00Z", Name: "20261201T020000Z"},
		},
		"Running": {
			reason: "one replica still archiving: the last complete time is the older of the two successes",
			spec:   schedule, cronJobs: []*batchv1.CronJob{done, cronJobWith(at(2, 0), yesterday(2, 5), true)},
			want: want{Status: "Unknown", Reason: kube.ReasonBackupRunning, Message: "backup running: CronJob demo-backup-1", Time: "2026-11-30T02:05:00Z"},
		},
		"OneFailed": {
			reason: "replica 1's run of 02:00 failed: False, naming the Job to read",
			spec:   schedule, cronJobs: []*batchv1.CronJob{done, cronJobWith(at(2, 0), yesterday(2, 5), false)},
			want: want{Status: "False", Reason: kube.ReasonBackupFailed,
				Message: "the newest backup did not succeed: Job demo-backup-1-" + minutes(at(2, 0)) + " failed; see kubectl -n apps logs job/demo-backup-1-" + minutes(at(2, 0)),
				Time:    "2026-11-30T02:05:00Z"},
		},
		"NeverSucceeded": {
			reason: "a replica that never succeeded leaves no time at which every replica had a backup",
			spec:   schedule, cronJobs: []*batchv1.CronJob{done, cronJobWith(at(2, 0), nil, false)},
			want: want{Status: "False", Reason: kube.ReasonBackupFailed,
				Message: "the newest backup did not succeed: Job demo-backup-1-" + minutes(at(2, 0)) + " failed; see kubectl -n apps logs job/demo-backup-1-" + minutes(at(2, 0))},
		},
		"Override": {
			reason: "spec.backup.command: one CronJob, the backup named by its Job",
			spec:   override, cronJobs: []*batchv1.CronJob{done},
			want: want{Status: "True", Reason: kube.ReasonBackupSucceeded, Message: "backup demo-backup-" + minutes(at(2, 0)) + " finished at 2026-12-01T02:03:00Z",
				Time: "2026-12-01T02:03:00Z", Name: "demo-backup-" + minutes(at(2, 0))},
		},
		"ScaledToZero": {
			reason: "no replica: nothing to back up", spec: withSpec(map[string]any{"backupSchedule": "0 2 * * *", "replicaCount": 0}),
			want: want{Status: "Unknown", Reason: kube.ReasonNoBackupYet, Message: "no replica, nothing to back up"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := parse(t, tc.spec)
			o := observedFor(t, a, nil)
			o.backupCronJobs = tc.cronJobs
			got := reportBackups(a, o)
			g := want{Status: got.condition.Status, Reason: got.condition.Reason, Message: got.condition.Message, Name: got.lastName}
			if got.lastTime != nil {
				g.Time = got.lastTime.UTC().Format(time.RFC3339)
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("%s\nreportBackups: -want +got:\n%s", tc.reason, diff)
			}
			if got.condition.Type != kube.ConditionBackupSucceeded || got.condition.ObservedGeneration != 3 {
				t.Errorf("%s\ncondition type %q generation %d", tc.reason, got.condition.Type, got.condition.ObservedGeneration)
			}
		})
	}
}

// TestReportBackupsVolumeMissing: a StatefulSet made without the backups
// volume template cannot get one; the status says what to do.
func TestReportBackupsVolumeMissing(t *testing.T) {
	a := parse(t, withSpec(map[string]any{"backupSchedule": "0 2 * * *"}))
	before := parse(t, baseSpec()) // made before the schedule was set: data template only
	o := observedFor(t, a, build(before, 2))
	got := reportBackups(a, o)
	if got.condition.Status != metav1.ConditionFalse || got.condition.Reason != ReasonBackupsVolumeMissing {
		t.Errorf("condition %s/%s %q, want False/%s", got.condition.Status, got.condition.Reason, got.condition.Message, ReasonBackupsVolumeMissing)
	}
	if jobs := backupCronJobs(a, o, false); len(jobs) != 0 {
		t.Errorf("%d backup CronJobs without a backups volume, want none", len(jobs))
	}
}

func minutes(t *time.Time) string {
	return jobName("", *t)[1:]
}

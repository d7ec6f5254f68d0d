package database

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// backupPodOf is a pod the Job controller made for job: the template's
// labels, the job-name labels, the Job as controller, and its backup
// container ended at finished with code and the termination message the
// kubelet takes from the log.
func backupPodOf(job *batchv1.Job, suffix string, finished time.Time, code int32, message string) *corev1.Pod {
	podLabels := map[string]string{"batch.kubernetes.io/job-name": job.Name, "job-name": job.Name, "batch.kubernetes.io/controller-uid": "0b5e0000"}
	for k, v := range job.Spec.Template.Labels {
		podLabels[k] = v
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-" + suffix, Namespace: job.Namespace, Labels: podLabels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: "0b5e0000", Controller: ptr.To(true)}}},
		Spec: job.Spec.Template.Spec,
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			Name: backupContainerName, Image: "postgres:15",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: message,
				StartedAt: metav1.NewTime(finished.Add(-time.Minute)), FinishedAt: metav1.NewTime(finished)}},
		}}},
	}
}

// cronJobRun is the Job the CronJob controller makes for cj's run scheduled
// at scheduled.
func cronJobRun(cj *batchv1.CronJob, scheduled time.Time) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: kube.CronJobRunName(cj.Name, scheduled), Namespace: cj.Namespace},
		Spec:       cj.Spec.JobTemplate.Spec,
	}
}

const (
	unreachable = "backup: FAILED: the server orders.shop.svc:5432 did not accept connections for 5 minutes (pg_isready: orders.shop.svc:5432 - no response); no backup written, older ones kept"
	diskFull    = "pg_dump: error: could not write to output file: No space left on device\nbackup: FAILED: pg_dump failed: pg_dump: error: could not write to output file: No space left on device; no backup written, older ones kept"
)

// TestBackupFailureReason: the BackupSucceeded condition of a failed backup
// says why in the backup's own words, from the newest failed pod of that
// Job, and from nothing else.
func TestBackupFailureReason(t *testing.T) {
	scheduled := testNow.Add(-3 * time.Hour)
	earlier := scheduled.Add(-24 * time.Hour)
	scheduledDB := newDatabase(withBackup("0 2 * * *", 3))
	cj := observedCronJob(t, scheduledDB, &scheduled, ptr.To(earlier.Add(time.Minute)))
	run, oldRun := cronJobRun(cj, scheduled), cronJobRun(cj, earlier)
	onDemandDB := newDatabase(withBackupRequest("1764586800"))
	onDemand := observedOnDemandJob(t, onDemandDB, batchv1.JobFailed)
	finalDB := newDatabase(withPolicy(dbv1.DeletionSnapshot), withDeletion())
	final := finalJob(finalDB, batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	otherDB := newDatabase(withBackup("0 2 * * *", 3), func(p *dbv1.Database) { p.Name = "other" })
	otherRun := cronJobRun(observedCronJob(t, otherDB, &scheduled, nil), scheduled)
	otherRun.Name = run.Name // even a Job of the same name: not this Database's pods
	serverPod := backupPodOf(run, "srv", scheduled.Add(5*time.Minute), 1, unreachable)
	serverPod.Labels[kube.ComponentLabel] = kube.ComponentServer

	const scheduledMsg = "the backup scheduled at 2026-11-30T02:00:00Z did not succeed"
	const cronTail = "; see the Jobs of CronJob orders-backup"
	cases := map[string]struct {
		reason     string
		parent     *dbv1.Database
		finalizing bool
		observed   []runtime.Object
		want       metav1.Condition
	}{
		"ScheduledNoPods": {
			reason: "no pod observed (older CompositeController, or the Job is gone): the condition as before",
			parent: scheduledDB, observed: []runtime.Object{cj},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: kube.ReasonBackupFailed, Message: scheduledMsg + cronTail},
		},
		"Scheduled": {
			reason: "the newest of the run's three failed pods says why, whatever order they come in",
			parent: scheduledDB, observed: []runtime.Object{cj,
				backupPodOf(run, "c", scheduled.Add(9*time.Minute), 1, diskFull),
				backupPodOf(run, "a", scheduled.Add(5*time.Minute), 1, unreachable),
				backupPodOf(run, "b", scheduled.Add(7*time.Minute), 1, unreachable)},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: kube.ReasonBackupFailed, Message: scheduledMsg +
				": pg_dump failed: pg_dump: error: could not write to output file: No space left on device; no backup written, older ones kept" + cronTail},
		},
		"ScheduledOtherRunsAndPods": {
			reason: "an older run's pod, another Database's pod of the same Job name, a server pod and a pod that succeeded say nothing about this run",
			parent: scheduledDB, observed: []runtime.Object{cj,
				backupPodOf(oldRun, "a", earlier.Add(5*time.Minute), 1, unreachable),
				backupPodOf(otherRun, "a", scheduled.Add(5*time.Minute), 1, unreachable),
				serverPod,
				backupPodOf(run, "ok", scheduled.Add(5*time.Minute), 0, "backup: FAILED: not a failure\n")},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: kube.ReasonBackupFailed, Message: scheduledMsg + cronTail},
		},
		"ScheduledKilled": {
			reason: "a pod killed before it could say why: its exit code and reason only, not its log",
			parent: scheduledDB, observed: []runtime.Object{cj,
				backupPodOf(run, "a", scheduled.Add(5*time.Minute), 137, "pg_dump: dumping contents of table public.secrets\n")},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: kube.ReasonBackupFailed, Message: scheduledMsg + ": exited 137 (Error)" + cronTail},
		},
		"OnDemand": {
			reason: "the on-demand Job's pod",
			parent: onDemandDB, observed: []runtime.Object{onDemand, backupPodOf(onDemand, "a", testNow.Add(-time.Minute), 1, unreachable)},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonOnDemandBackupFailed, Message: "on-demand backup Job " + onDemand.Name +
				" failed: the server orders.shop.svc:5432 did not accept connections for 5 minutes (pg_isready: orders.shop.svc:5432 - no response); no backup written, older ones kept; set a new example.com/backup-request value to try again"},
		},
		"Final": {
			reason: "the final backup Job's pod", parent: finalDB, finalizing: true,
			observed: []runtime.Object{final, backupPodOf(final, "a", testNow.Add(-time.Minute), 1, diskFull)},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonFinalBackupFailed, Message: "final backup Job orders-final-backup failed " +
				"(BackoffLimitExceeded: Job has reached the specified backoff limit): pg_dump failed: pg_dump: error: could not write to output file: No space left on device; no backup written, older ones kept; " +
				"the Database is kept: delete the Job to try again, or set spec.deletionPolicy to Retain or Delete"},
		},
		"Bounded": {
			reason: "a very long reason is cut at kube.MaxSaid bytes",
			parent: onDemandDB, observed: []runtime.Object{onDemand, backupPodOf(onDemand, "a", testNow.Add(-time.Minute), 1, "backup: FAILED: "+strings.Repeat("x", 5000))},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonOnDemandBackupFailed, Message: "on-demand backup Job " + onDemand.Name +
				" failed: " + strings.Repeat("x", kube.MaxSaid) + "...; set a new example.com/backup-request value to try again"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			children := observedChildren(t, tc.parent, 1, tc.observed...)
			if tc.finalizing {
				children = withClaims(children, false)
			}
			resp := mustSync(t, newRequest(t, tc.parent, tc.finalizing, children...))
			got := backupConditionOf(t, resp)
			if diff := cmp.Diff(tc.want, metav1.Condition{Status: got.Status, Reason: got.Reason, Message: got.Message}); diff != "" {
				t.Errorf("%s\nBackupSucceeded: -want +got:\n%s", tc.reason, diff)
			}
			// Fed back, the answer changes nothing (no hot loop), byte for byte.
			again := tc.parent.DeepCopy()
			again.Status = decodeStatus(t, resp)
			resp2 := mustSync(t, newRequest(t, again, tc.finalizing, children...))
			if !bytes.Equal(resp.Status, resp2.Status) {
				t.Errorf("%s\nthe status fed back changed:\n%s\n%s", tc.reason, resp.Status, resp2.Status)
			}
		})
	}
}

// backupConditionOf is the BackupSucceeded condition of resp's status.
func backupConditionOf(t *testing.T, resp *composite.Response) metav1.Condition {
	t.Helper()
	for _, c := range decodeStatus(t, resp).Conditions {
		if c.Type == kube.ConditionBackupSucceeded {
			return c
		}
	}
	t.Fatalf("no BackupSucceeded condition in %s", resp.Status)
	return metav1.Condition{}
}

// TestCustomizeSelectsEveryBackupPod: the rule Customize returns for backup
// pods matches the pod template of the CronJob, the on-demand Job and the
// final backup Job, and not the server's.
func TestCustomizeSelectsEveryBackupPod(t *testing.T) {
	db := newDatabase(withBackup("0 2 * * *", 3), withBackupRequest("1"))
	resp, err := Customize(customizeRequest(t, db))
	if err != nil {
		t.Fatal(err)
	}
	var rule *metav1.LabelSelector
	for _, r := range resp.RelatedResources {
		if r.Resource == "pods" && r.LabelSelector != nil {
			rule = r.LabelSelector
		}
	}
	if rule == nil {
		t.Fatalf("Customize asks for no pods by labels: %+v", resp.RelatedResources)
	}
	selector, err := metav1.LabelSelectorAsSelector(rule)
	if err != nil {
		t.Fatal(err)
	}
	cj := desired[batchv1.CronJob](t, db, "CronJob", testName+"-backup")
	onDemand := desired[batchv1.Job](t, db, "Job", onDemandName("1"))
	final := finalJob(newDatabase(withPolicy(dbv1.DeletionSnapshot), withDeletion()), "", "", "")
	sts := desired[struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}](t, db, "StatefulSet", testName)
	for name, tc := range map[string]struct {
		labels map[string]string
		want   bool
	}{
		"CronJob":  {cj.Spec.JobTemplate.Spec.Template.Labels, true},
		"OnDemand": {onDemand.Spec.Template.Labels, true},
		"Final":    {final.Spec.Template.Labels, true},
		"Server":   {sts.Spec.Template.Labels, false},
	} {
		if got := selector.Matches(labels.Set(tc.labels)); got != tc.want {
			t.Errorf("%s pod template %v: selected %v, want %v", name, tc.labels, got, tc.want)
		}
	}
}

package myapp

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/kube"
)

// backupCronJobNames are the CronJobs whose runs make up one backup: one per
// replica for the default backup, <name>-backup for spec.backup.command.
func (a *app) backupCronJobNames(o *observed) []string {
	switch {
	case a.backupSchedule == "":
		return nil
	case len(a.backupCommand) > 0:
		return []string{a.cronJobName()}
	case !a.defaultBackup(o):
		return nil
	}
	names := make([]string, 0, a.replicas)
	for i := range a.replicas {
		names = append(names, a.backupCronJobName(i))
	}
	return names
}

// backupReport is what the status says about backups.
type backupReport struct {
	condition metav1.Condition
	lastTime  *metav1.Time
	lastName  string
}

// cronJobRun is the outcome of a CronJob's newest scheduled run, from its
// status alone (the Jobs are the CronJob's, not the MyApp's children).
type cronJobRun int

const (
	runNone cronJobRun = iota
	runActive
	runSucceeded
	runFailed
)

// newestRun reads a CronJob's status (the controller sets lastScheduleTime
// to the scheduled time when it creates a run's Job, lastSuccessfulTime to a
// succeeded Job's completion time). The newest run succeeded when the last
// success is not older than the last schedule: the CronJob's runs never
// overlap (ForbidConcurrent), so a success after the newest schedule is that
// run's. (One case reads wrong: a run that started late because its
// predecessor overran it, and then failed, is taken for a success of its
// predecessor's end time.)
func newestRun(cj *batchv1.CronJob) cronJobRun {
	if cj == nil || cj.Status.LastScheduleTime == nil {
		return runNone
	}
	last, scheduled := cj.Status.LastSuccessfulTime, cj.Status.LastScheduleTime
	switch {
	case len(cj.Status.Active) > 0:
		return runActive
	case last != nil && !scheduled.After(last.Time):
		return runSucceeded
	}
	return runFailed
}

// jobName is the name of the Job of cronJob's run scheduled at t
// (archiveScript reads it from the pod's batch.kubernetes.io/job-name label).
func jobName(cronJob string, t time.Time) string { return kube.CronJobRunName(cronJob, t) }

// reportBackups computes the BackupSucceeded condition and the last backup
// from the observed backup CronJobs (see backupCronJobNames). A backup
// succeeded when the newest run of every one of them succeeded for the same
// scheduled time; its name is that time (the name of the archives), or with
// spec.backup.command the Job's name.
func reportBackups(a *app, o *observed) backupReport {
	cronJobs := o.backupCronJobs
	c := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: kube.ConditionBackupSucceeded, Status: status, Reason: reason, Message: message, ObservedGeneration: a.generation}
	}
	switch {
	case a.backupSchedule == "":
		return backupReport{condition: c(metav1.ConditionUnknown, kube.ReasonNoBackupSchedule, "spec.backupSchedule is not set")}
	case len(a.backupCommand) == 0 && !a.defaultBackup(o):
		return backupReport{condition: c(metav1.ConditionFalse, ReasonBackupsVolumeMissing, fmt.Sprintf(
			"the default backup writes to the backups volume template of StatefulSet %s, which was created without one, "+
				"and volume templates cannot change: set spec.backup.command, or delete and recreate the MyApp (its data volumes are kept)", a.name))}
	case a.replicas == 0:
		return backupReport{condition: c(metav1.ConditionUnknown, kube.ReasonNoBackupYet, "no replica, nothing to back up")}
	}

	var report backupReport
	var failed, running, pending []string
	var scheduled *metav1.Time
	sameSchedule := true
	for i, cj := range cronJobs {
		name := a.backupCronJobNames(o)[i]
		switch newestRun(cj) {
		case runNone:
			pending = append(pending, name)
			continue
		case runActive:
			running = append(running, name)
		case runFailed:
			failed = append(failed, jobName(name, cj.Status.LastScheduleTime.Time))
		}
		if scheduled != nil && !scheduled.Equal(cj.Status.LastScheduleTime) {
			sameSchedule = false
		}
		scheduled = cj.Status.LastScheduleTime
	}
	report.lastTime = earliestSuccess(cronJobs)

	switch {
	case len(failed) > 0:
		report.condition = c(metav1.ConditionFalse, kube.ReasonBackupFailed, fmt.Sprintf(
			"the newest backup did not succeed: Job %s failed; see kubectl -n %s logs job/%s",
			strings.Join(failed, ", "), a.namespace, failed[0]))
	case len(running) > 0:
		report.condition = c(metav1.ConditionUnknown, kube.ReasonBackupRunning, "backup running: CronJob "+strings.Join(running, ", "))
	case len(pending) > 0:
		report.condition = c(metav1.ConditionUnknown, kube.ReasonNoBackupYet, "no backup has run yet on schedule "+a.backupSchedule+": CronJob "+strings.Join(pending, ", "))
	case !sameSchedule:
		report.condition = c(metav1.ConditionUnknown, kube.ReasonBackupRunning, "the replicas' newest archives are of different scheduled runs; waiting for the next run")
	default:
		report.lastTime = latestSuccess(cronJobs)
		report.lastName = scheduled.UTC().Format(backupStampLayout)
		if len(a.backupCommand) > 0 {
			report.lastName = jobName(a.cronJobName(), scheduled.Time)
		}
		report.condition = c(metav1.ConditionTrue, kube.ReasonBackupSucceeded, fmt.Sprintf(
			"backup %s finished at %s", report.lastName, report.lastTime.UTC().Format(time.RFC3339)))
	}
	return report
}

// earliestSuccess is the oldest of the CronJobs' last successes: the time by
// which every replica had a successful archive; nil when one has none.
func earliestSuccess(cronJobs []*batchv1.CronJob) *metav1.Time {
	var earliest *metav1.Time
	for _, cj := range cronJobs {
		if cj == nil || cj.Status.LastSuccessfulTime == nil {
			return nil
		}
		if t := cj.Status.LastSuccessfulTime; earliest == nil || t.Before(earliest) {
			earliest = t
		}
	}
	return earliest
}

// latestSuccess is the newest last success: when the newest backup had been
// archived on every replica.
func latestSuccess(cronJobs []*batchv1.CronJob) *metav1.Time {
	var latest *metav1.Time
	for _, cj := range cronJobs {
		if t := cj.Status.LastSuccessfulTime; t != nil && (latest == nil || latest.Before(t)) {
			latest = t
		}
	}
	return latest
}

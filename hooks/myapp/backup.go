package myapp

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"metahooks/api/v1alpha1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// archiveDeadlineSeconds ends an archive run that has not finished in 12
// hours, typically one whose pod cannot be scheduled because its replica's
// node is down: the run fails (BackupSucceeded False) instead of showing as
// running for ever and, runs never overlapping, holding back every later run.
const archiveDeadlineSeconds = 12 * 60 * 60

// archiveScript is the default backup of one replica: a tar.gz of its data
// volume (mounted read-only at DATA_DIR) written to its backups volume
// (BACKUP_DIR) as <name>.tar.gz.
//
//   - The name is the time the CronJob scheduled the run for, read from the
//     Job's name (<CRONJOB_NAME>-<minutes since the epoch>), so every replica's
//     archive of one run has the same name, and the hook can name the backup
//     from the CronJob's lastScheduleTime. A Job made by hand (kubectl create
//     job --from=cronjob/...) is named after the current time instead.
//   - It refuses while a restore into the volume is unfinished: an archive of
//     half-restored data would pass for a backup.
//   - The archive is written as <file>.partial, read back whole (tar -tzf, so
//     a truncated or corrupt archive fails the run), flushed and renamed; a
//     failed run removes its .partial file (the trap), and .partial files
//     older than a day (a killed run) are removed.
//   - Only then all but the newest BACKUP_RETENTION archives are deleted (names
//     sort by time).
//
// It uses only POSIX sh, tar -z, gzip, find, sort, tail, date -d @seconds:
// busybox has them all.
const archiveScript = `set -eu
umask 077
suffix=${JOB_NAME#"$CRONJOB_NAME"-}
case "$suffix" in
  "$JOB_NAME"|''|*[!0-9]*) stamp=$(date -u +%Y%m%dT%H%M%SZ) ;;
  *) stamp=$(date -u -d "@$((suffix * 60))" +%Y%m%dT%H%M%SZ) ;;
esac
if [ -e "$DATA_DIR/` + restoringMarker + `" ]; then
  echo "backup: a restore into the data volume has not finished; no backup taken" >&2
  exit 1
fi
if ! [ -d "$DATA_DIR" ] || ! [ -r "$DATA_DIR" ]; then
  echo "backup: cannot read the data volume at $DATA_DIR; no backup taken" >&2
  exit 1
fi
file="$BACKUP_DIR/$stamp.tar.gz"
trap 'rm -f "$file.partial"' EXIT
find "$BACKUP_DIR" -maxdepth 1 -name '*.tar.gz.partial' -mmin +1440 -exec rm -f {} \;
tar -czf "$file.partial" -C "$DATA_DIR" .
tar -tzf "$file.partial" > /dev/null
sync
mv "$file.partial" "$file"
sync
echo "backup: wrote $file ($(wc -c < "$file") bytes)"
ls -1 "$BACKUP_DIR" | grep '^[0-9]\{8\}T[0-9]\{6\}Z\.tar\.gz$' | sort -r | tail -n +$((BACKUP_RETENTION + 1)) | while read -r old; do
  rm -f -- "$BACKUP_DIR/$old"
  echo "backup: deleted $old (retention $BACKUP_RETENTION)"
done
`

// defaultBackup reports whether the default backup runs: a schedule, no
// command, and a StatefulSet that has (or will be created with) the backups
// volume template.
func (a *app) defaultBackup(o *observed) bool {
	return a.backupSchedule != "" && len(a.backupCommand) == 0 && o.backupsTemplate != nil
}

// wantsBackupsVolume reports whether a new StatefulSet gets the backups
// volume template: the default backup and the restore read and write it.
func (a *app) wantsBackupsVolume() bool {
	return (a.backupSchedule != "" && len(a.backupCommand) == 0) || a.restoreFrom != ""
}

// backupsVolumeClaim is the backups volume template: the observed
// StatefulSet's when it has one (volume templates are immutable), none when
// the observed StatefulSet was created without one, else a new one of
// spec.backup.volumeSize.
func backupsVolumeClaim(a *app, observed []corev1.PersistentVolumeClaim, stsObserved bool) *corev1.PersistentVolumeClaim {
	for i := range observed {
		if observed[i].Name == backupsVolume {
			return observed[i].DeepCopy()
		}
	}
	if stsObserved || !a.wantsBackupsVolume() {
		return nil
	}
	claim := kube.ClaimTemplate(backupsVolume, a.backupVolumeSize, a.storageClass)
	return &claim
}

func (a *app) backupCronJobName(ordinal int32) string {
	return fmt.Sprintf("%s-backup-%d", a.name, ordinal)
}

// backupImageOr is spec.backup.image, or fallback when unset.
func (a *app) backupImageOr(fallback string) string {
	if a.backupImage != "" {
		return a.backupImage
	}
	return fallback
}

// validateBackup checks the backup and restore fields, and that every backup
// CronJob name fits.
func (a *app) validateBackup() error {
	if a.backupSchedule != "" {
		if err := kube.ValidateCron(a.backupSchedule); err != nil {
			return composite.Invalid("spec.backupSchedule", "%v", err)
		}
		longest := a.name + "-backup"
		if len(a.backupCommand) == 0 && a.replicas > 0 {
			longest = a.backupCronJobName(a.replicas - 1)
		}
		if err := kube.ValidateParentName(a.name, kube.ChildName{Name: longest, Max: kube.MaxCronJobName, What: "backup CronJob"}); err != nil {
			return composite.Invalid("metadata.name", "%v", err)
		}
	}
	if a.backupImage != "" && strings.ContainsAny(a.backupImage, " \t\n") {
		return composite.Invalid("spec.backup.image", "may not contain whitespace, got %s", composite.Quote(a.backupImage))
	}
	if a.backupRetention < 1 {
		return composite.Invalid("spec.backup.retention", "must be at least 1, got %d", a.backupRetention)
	}
	if a.backupVolumeSize.Sign() <= 0 {
		return composite.Invalid("spec.backup.volumeSize", "must be greater than 0, got %s", a.backupVolumeSize.String())
	}
	if a.restoreFrom != "" && a.restoreFrom != v1alpha1.LatestBackup {
		if _, err := parseBackupName(a.restoreFrom); err != nil {
			return composite.Invalid("spec.restoreFrom", "must be %q or a backup name such as 20261201T020000Z, got %s", v1alpha1.LatestBackup, composite.Quote(a.restoreFrom))
		}
	}
	return nil
}

// backupCronJobs are the default backup's CronJobs <name>-backup-<i>, one per
// replica, while the default backup runs; nil otherwise.
func backupCronJobs(a *app, o *observed, suspend bool) []runtime.Object {
	if !a.defaultBackup(o) {
		return nil
	}
	jobs := make([]runtime.Object, 0, a.replicas)
	for i := range a.replicas {
		jobs = append(jobs, archiveCronJob(a, i, suspend))
	}
	return jobs
}

// archiveCronJob runs archiveScript for the replica of ordinal on that
// replica's node (its ReadWriteOnce volumes are attached there, and pods on
// one node can share them), with its data volume mounted read-only and its
// backups volume read-write. suspend stops new runs while the app is torn
// down.
func archiveCronJob(a *app, ordinal int32, suspend bool) *batchv1.CronJob {
	name := a.backupCronJobName(ordinal)
	labels := a.podLabels(kube.ComponentBackup, nil)
	container := corev1.Container{
		Name:    "backup",
		Image:   a.backupImageOr(v1alpha1.DefaultBackupImage),
		Command: []string{"/bin/sh", "-c", archiveScript},
		Env: []corev1.EnvVar{
			{Name: "CRONJOB_NAME", Value: name},
			{Name: "JOB_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
				APIVersion: "v1", FieldPath: "metadata.labels['" + batchv1.JobNameLabel + "']",
			}}},
			{Name: "DATA_DIR", Value: archiveDataPath},
			{Name: "BACKUP_DIR", Value: backupsMountPath},
			{Name: "BACKUP_RETENTION", Value: fmt.Sprint(a.backupRetention)},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: dataVolume, MountPath: archiveDataPath, ReadOnly: true},
			{Name: backupsVolume, MountPath: backupsMountPath},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: a.namespace, Labels: a.objectLabels()}
	ordinalInt := int(ordinal)
	cj := kube.CronJob(meta, a.backupSchedule, suspend, kube.JobSpec(labels, corev1.PodSpec{
		Affinity:   kube.OnNodeOfPod(kube.PodName(a.name, ordinalInt), true),
		Containers: []corev1.Container{container},
		Volumes: []corev1.Volume{
			kube.ClaimVolume(dataVolume, kube.ClaimName(dataVolume, a.name, ordinalInt), true),
			kube.ClaimVolume(backupsVolume, kube.ClaimName(backupsVolume, a.name, ordinalInt), false),
		},
	}))
	// The Jobs carry the backup labels too, for kubectl get jobs -l.
	cj.Spec.JobTemplate.Labels = labels
	cj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds = ptr.To[int64](archiveDeadlineSeconds)
	return cj
}

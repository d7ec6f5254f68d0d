package database

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"metahooks/hooks/kube"
)

// backupScript dumps the database with pg_dump (custom format, compressed) to
// the backups volume as <UTC time><suffix>.dump:
//
//   - it first waits up to 5 minutes for the server to accept connections, so
//     a backup started with the server (the final backup of a hibernated
//     Database) does not fail on a refused connection;
//   - the dump is written as <file>.partial, flushed to disk, renamed, and the
//     directory flushed, so a .dump file is complete and durable before it
//     counts; a failed run removes its .partial file (the trap), and .partial
//     files older than a day (a killed run) are removed;
//   - only then, when BACKUP_RETENTION > 0, all but the newest
//     BACKUP_RETENTION scheduled dumps are deleted (file names sort by time).
//     Final dumps (*-final.dump) are never deleted.
//
// File names never contain spaces or newlines.
const backupScript = `set -eu
umask 077
stamp=$(date -u +%Y%m%dT%H%M%SZ)
file="$BACKUP_DIR/${stamp}${BACKUP_SUFFIX:-}.dump"
trap 'rm -f "$file.partial"' EXIT
find "$BACKUP_DIR" -maxdepth 1 -name '*.dump.partial' -mmin +1440 -delete
i=0; until pg_isready -q; do i=$((i+1)); [ $i -ge 60 ] && exit 1; sleep 5; done
pg_dump --format=custom --no-password --file="$file.partial"
sync "$file.partial"
mv "$file.partial" "$file"
sync "$BACKUP_DIR"
echo "backup: wrote $file"
if [ "$BACKUP_RETENTION" -gt 0 ]; then
  ls -1 "$BACKUP_DIR" | grep '\.dump$' | grep -v -e '-final\.dump$' | sort -r | tail -n +$((BACKUP_RETENTION + 1)) | while read -r old; do
    rm -f -- "$BACKUP_DIR/$old"
    echo "backup: deleted $old (retention $BACKUP_RETENTION)"
  done
fi
`

// backupCronJob is CronJob <name>-backup, nil unless spec.backup is set. It is
// suspended while the Database hibernates (there is no server to dump) and
// while it is being deleted.
//
// host is the server pg_dump reads from: Service <name>, or <name>-ro while a
// standby is ready (instances >= 2), so a backup puts no load on the primary.
func backupCronJob(d *database, suspend bool, host string) *batchv1.CronJob {
	if d.backupSchedule == "" {
		return nil
	}
	meta := metav1.ObjectMeta{Name: d.cronJobName(), Namespace: d.namespace, Labels: d.objectLabels()}
	return kube.CronJob(meta, d.backupSchedule, suspend, backupJobSpec(d, host, "", d.retention))
}

// finalBackupJob is Job <name>-final-backup, the last dump taken while a
// Database with deletionPolicy Snapshot is finalized. It is never pruned by
// retention and has no TTL: the hook must observe its outcome.
func finalBackupJob(d *database) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      d.finalBackupJobName(),
			Namespace: d.namespace,
			Labels:    d.objectLabels(),
		},
		Spec: backupJobSpec(d, d.host(), "-final", 0),
	}
}

// backupJobSpec runs backupScript in the server's image (pg_dump matches the
// server version) on the node of the server pod, with the backups volume
// (PVC backups-<name>-0) mounted read-write.
func backupJobSpec(d *database, host, suffix string, retention int32) batchv1.JobSpec {
	env := []corev1.EnvVar{
		{Name: "PGHOST", Value: host},
		{Name: "PGPORT", Value: fmt.Sprint(port)},
		secretEnv("PGUSER", d.secretName(), "username"),
		secretEnv("PGPASSWORD", d.secretName(), "password"),
		secretEnv("PGDATABASE", d.secretName(), "database"),
		{Name: "BACKUP_DIR", Value: backupsMountPath},
		{Name: "BACKUP_RETENTION", Value: fmt.Sprint(retention)},
	}
	if suffix != "" {
		env = append(env, corev1.EnvVar{Name: "BACKUP_SUFFIX", Value: suffix})
	}
	return kube.JobSpec(d.podLabels(kube.ComponentBackup, nil), corev1.PodSpec{
		SecurityContext:    podSecurityContext(),
		EnableServiceLinks: ptr.To(false),
		Affinity:           kube.OnNodeOfPod(d.podName(), true),
		Containers: []corev1.Container{{
			Name:            "backup",
			Image:           d.image,
			Command:         []string{"/bin/sh", "-c", backupScript},
			Env:             env,
			VolumeMounts:    []corev1.VolumeMount{{Name: backupsVolume, MountPath: backupsMountPath}},
			SecurityContext: containerSecurityContext(),
		}},
		Volumes: []corev1.Volume{{
			Name: backupsVolume,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: backupsClaimName(d.name),
			}},
		}},
	})
}

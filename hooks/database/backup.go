package database

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"metahooks/hooks/kube"
)

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
	return backupJob(d, d.finalBackupJobName(), backupJobSpec(d, d.host(), "-final", 0))
}

// backupJob is Job name of the Database with spec, labelled as its other
// children.
func backupJob(d *database, name string, spec batchv1.JobSpec) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.namespace, Labels: d.objectLabels()},
		Spec:       spec,
	}
}

// backupJobSpec runs backupScript (scripts/backup.sh) in the server's image
// (pg_dump matches the server version) on the node of the server pod, with
// the backups volume (PVC backups-<name>-0) mounted read-write. It connects
// to host as the superuser over TCP (scram-sha-256): only the superuser can
// read every object and role. The last lines of its log are the termination
// message of a failed pod, which says why.
func backupJobSpec(d *database, host, suffix string, retention int32) batchv1.JobSpec {
	env := []corev1.EnvVar{
		{Name: "PGHOST", Value: host},
		{Name: "PGPORT", Value: fmt.Sprint(port)},
		secretEnv("PGUSER", d.superuserSecretName(), "username"),
		secretEnv("PGPASSWORD", d.superuserSecretName(), "password"),
		secretEnv("PGDATABASE", d.secretName(), "database"),
		secretEnv("APP_USER", d.secretName(), "username"),
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
			Name:                     backupContainerName,
			Image:                    d.image,
			Command:                  shellCommand(backupScript, "backup"),
			Env:                      env,
			VolumeMounts:             []corev1.VolumeMount{{Name: backupsVolume, MountPath: backupsMountPath}},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			SecurityContext:          containerSecurityContext(),
		}},
		Volumes: []corev1.Volume{{
			Name: backupsVolume,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: backupsClaimName(d.name),
			}},
		}},
	})
}

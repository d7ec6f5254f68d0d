package myapp

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/kube"
)

// backupCronJob is CronJob <name>-backup, nil unless spec.backupSchedule and
// spec.backup.command are set (the default backup is backupCronJobs). Each run
// executes spec.backup.command in the app's image (or spec.backup.image) on
// the node of pod <name>-0, with that pod's data volume mounted read-only (a ReadWriteOnce
// volume can be shared by pods on one node). suspend stops new runs while the
// app is being torn down.
func backupCronJob(a *app, suspend bool) *batchv1.CronJob {
	if a.backupSchedule == "" || len(a.backupCommand) == 0 {
		return nil
	}
	meta := metav1.ObjectMeta{Name: a.cronJobName(), Namespace: a.namespace, Labels: a.objectLabels()}
	return kube.CronJob(meta, a.backupSchedule, suspend, kube.JobSpec(a.podLabels(kube.ComponentBackup, nil), corev1.PodSpec{
		Affinity: kube.OnNodeOfPod(a.firstPodName(), true),
		Containers: []corev1.Container{{
			Name:    "backup",
			Image:   a.backupImageOr(a.image),
			Command: a.backupCommand,
			Env: []corev1.EnvVar{
				{Name: "MYAPP_NAME", Value: a.name},
				{Name: "MYAPP_HOST", Value: fmt.Sprintf("%s.%s.%s.svc", a.firstPodName(), a.name, a.namespace)},
				{Name: "MYAPP_PORT", Value: fmt.Sprint(a.port)},
				{Name: "MYAPP_DATA_DIR", Value: a.mountPath},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: dataVolume, MountPath: a.mountPath, ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{kube.ClaimVolume(dataVolume, kube.ClaimName(dataVolume, a.name, 0), true)},
	}))
}

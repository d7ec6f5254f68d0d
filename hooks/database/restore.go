package database

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/kube"
)

// Names and paths of the restore machinery.
const (
	restoreVolume     = "restore-source"
	restoreSourcePath = "/restore-source"
)

// restoreSource names the backup of spec.restoreFrom: "<database>/<backup>".
func restoreSource(d *database) string {
	return d.restore.Database + "/" + d.restore.Backup
}

// addRestore gives the init container (initScript) the backup to load into
// an empty PGDATA, and the source backups volume (PVC backups-<source>-0,
// read-only) with a preferred affinity to the source's server pod, whose
// node already has that ReadWriteOnce volume attached while the source runs.
// Restoring from the Database's own backups uses its own backups volume.
func addRestore(d *database, sts *appsv1.StatefulSet) {
	tpl := &sts.Spec.Template
	tpl.Annotations[restoringAnnotation] = restoreSource(d)
	pod := &tpl.Spec

	sourceVolume := backupsVolume // the volumeClaimTemplate's, when restoring from its own backups
	if d.restore.Database != d.name {
		sourceVolume = restoreVolume
		pod.Affinity = kube.OnNodeOfPod(kube.PodName(d.restore.Database, 0), false)
		pod.Volumes = append(pod.Volumes, corev1.Volume{
			Name: restoreVolume,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: backupsClaimName(d.restore.Database),
				ReadOnly:  true,
			}},
		})
	}
	init := &pod.InitContainers[0]
	init.Env = append(init.Env,
		corev1.EnvVar{Name: "RESTORE_DIR", Value: restoreSourcePath},
		corev1.EnvVar{Name: "RESTORE_DATABASE", Value: d.restore.Database},
		corev1.EnvVar{Name: "RESTORE_BACKUP", Value: d.restore.Backup},
	)
	init.VolumeMounts = append(init.VolumeMounts, corev1.VolumeMount{Name: sourceVolume, MountPath: restoreSourcePath, ReadOnly: true})
}

// restoring reports whether the restore machinery belongs in the template:
// spec.restoreFrom is set and the observed StatefulSet does not show the
// restore as over. It is over once the StatefulSet is marked restored, or when
// its controller reports the pod ready on a template that carries the
// machinery (the init container succeeded and the server answers).
func restoring(d *database, sts *appsv1.StatefulSet) bool {
	if d.restore == nil {
		return false
	}
	if sts == nil {
		return true
	}
	if sts.Annotations[restoredAnnotation] == restoreSource(d) {
		return false
	}
	carried := sts.Spec.Template.Annotations[restoringAnnotation] == restoreSource(d)
	return !(carried && readyOnLatestRevision(sts))
}

// readyOnLatestRevision reports a StatefulSet whose controller has seen its
// latest spec and whose pods all run the latest revision, at least one ready.
func readyOnLatestRevision(sts *appsv1.StatefulSet) bool {
	st := sts.Status
	return st.ObservedGeneration >= sts.Generation &&
		st.ReadyReplicas >= 1 &&
		st.UpdateRevision != "" && st.CurrentRevision == st.UpdateRevision
}

package database

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/kube"
)

// Names and paths of the restore machinery.
const (
	restoreMarker     = dataMountPath + "/restore-incomplete" // beside PGDATA, not in it
	initdbVolume      = "initdb"
	initdbMountPath   = "/docker-entrypoint-initdb.d" // in the server container
	initdbScratchPath = "/initdb"                     // in the init container
	restoreVolume     = "restore-source"
	restoreSourcePath = "/restore-source"
)

// restoreInitScript runs in the init container "restore". It only ever
// prepares a restore into an empty data directory:
//   - PGDATA holds a database: nothing to do, unless the marker says an earlier
//     restore did not finish, then it fails rather than serve partial data;
//   - PGDATA holds anything else: it fails, it never touches unknown data;
//   - the backup is missing: it fails, so no empty server starts in its place.
//
// Otherwise it leaves the marker and an initdb script: the official image runs
// /docker-entrypoint-initdb.d only when it initialises an empty PGDATA, with a
// server listening on the local socket only, before the real server starts.
var restoreInitScript = fmt.Sprintf(`set -eu
marker=%[1]q
if [ -s "$PGDATA/PG_VERSION" ]; then
  if [ -e "$marker" ]; then
    echo "restore: an earlier restore into $PGDATA did not finish; refusing to start on partial data (empty the volume to restore again)" >&2
    exit 1
  fi
  echo "restore: $PGDATA already holds a database; nothing restored"
  exit 0
fi
if [ -d "$PGDATA" ] && [ -n "$(ls -A "$PGDATA")" ]; then
  echo "restore: $PGDATA is not empty but holds no database; refusing to touch it" >&2
  exit 1
fi
if [ "$RESTORE_BACKUP" = latest ]; then
  name=$(ls -1 "$RESTORE_DIR" | grep '\.dump$' | sort | tail -n 1 || true)
else
  name=$RESTORE_BACKUP
fi
if [ -z "$name" ] || [ ! -s "$RESTORE_DIR/$name" ]; then
  echo "restore: backup $RESTORE_BACKUP not found on the backups volume of Database $RESTORE_DATABASE" >&2
  exit 1
fi
touch "$marker"
printf '%%s\n' "$RESTORE_DIR/$name" > %[2]q/restore-path
cat > %[2]q/50-restore.sh <<'SCRIPT'
dump=$(cat %[3]q/restore-path)
echo "restore: loading $dump"
pg_restore --exit-on-error --single-transaction --no-owner --no-acl --username="$POSTGRES_USER" --dbname="$POSTGRES_DB" "$dump"
rm -f %[1]q
echo "restore: done"
SCRIPT
echo "restore: $name will be loaded before the server starts"
`, restoreMarker, initdbScratchPath, initdbMountPath)

// restoreGuard wraps the server's entrypoint while restoring: a container
// restart after a failed load (init containers do not run again) finds the
// marker next to an initialised PGDATA and stops there.
var restoreGuard = fmt.Sprintf(`if [ -e %[1]q ] && [ -s "$PGDATA/PG_VERSION" ]; then
  echo "restore: an earlier restore did not finish; refusing to start on partial data (empty the volume to restore again)" >&2
  exit 1
fi
exec docker-entrypoint.sh "$@"
`, restoreMarker)

// restoreSource names the backup of spec.restoreFrom: "<database>/<backup>".
func restoreSource(d *database) string {
	return d.restore.Database + "/" + d.restore.Backup
}

// addRestore adds the restore machinery to the server's pod template: the
// init container, the initdb scripts volume, the guard, and the source
// backups volume (PVC backups-<source>-0, read-only) with a preferred affinity
// to the source's server pod, whose node already has that ReadWriteOnce
// volume attached while the source runs. Restoring from the Database's own
// backups uses its own backups volume.
func addRestore(d *database, sts *appsv1.StatefulSet) {
	tpl := &sts.Spec.Template
	tpl.Annotations[restoringAnnotation] = restoreSource(d)
	pod := &tpl.Spec

	sourceVolume, sourcePath := backupsVolume, backupsMountPath
	if d.restore.Database != d.name {
		sourceVolume, sourcePath = restoreVolume, restoreSourcePath
		pod.Volumes = append(pod.Volumes, corev1.Volume{
			Name: restoreVolume,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: backupsClaimName(d.restore.Database),
				ReadOnly:  true,
			}},
		})
		pod.Affinity = kube.OnNodeOfPod(kube.PodName(d.restore.Database, 0), false)
	}
	pod.Volumes = append(pod.Volumes, corev1.Volume{
		Name:         initdbVolume,
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
	})
	sourceMount := corev1.VolumeMount{Name: sourceVolume, MountPath: sourcePath, ReadOnly: true}

	pod.InitContainers = []corev1.Container{{
		Name:    "restore",
		Image:   d.image,
		Command: []string{"/bin/sh", "-c", restoreInitScript},
		Env: []corev1.EnvVar{
			{Name: "PGDATA", Value: pgdataPath},
			{Name: "RESTORE_DIR", Value: sourcePath},
			{Name: "RESTORE_DATABASE", Value: d.restore.Database},
			{Name: "RESTORE_BACKUP", Value: d.restore.Backup},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: dataVolume, MountPath: dataMountPath},
			sourceMount,
			{Name: initdbVolume, MountPath: initdbScratchPath},
		},
		SecurityContext: containerSecurityContext(),
	}}

	server := &pod.Containers[0]
	server.Command = []string{"/bin/sh", "-c", restoreGuard, "restore-guard"}
	// The load runs before the server listens on TCP: the startup probe gets
	// a day, not an hour, or the kubelet would kill a long load and the guard
	// would then (rightly) refuse to start on the partial data.
	server.StartupProbe.FailureThreshold = restoreStartupFailureThreshold
	server.VolumeMounts = append(server.VolumeMounts, corev1.VolumeMount{Name: initdbVolume, MountPath: initdbMountPath, ReadOnly: true})
	if sourceVolume == restoreVolume {
		server.VolumeMounts = append(server.VolumeMounts, sourceMount)
	}
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

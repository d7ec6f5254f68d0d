package myapp

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/api/v1alpha1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// restoreScript runs in the init container "restore" of every pod while the
// restore is under way. It fills the data volume (DATA_DIR) from the pod's
// own backups volume (BACKUP_DIR, read-only), or fails, so that the
// application never starts on an empty volume in the backup's place:
//
//   - the volume was restored before (the restored marker): nothing to do;
//   - an earlier attempt did not finish (the incomplete marker): the volume
//     holds only what that attempt extracted, which is emptied, and it
//     starts again;
//   - the volume holds anything else (lost+found aside): it fails, it never
//     overwrites data it did not write;
//   - the backup is missing, or unreadable (tar -tzf reads it whole first): it
//     fails and says so in the log, which is also the pod's termination
//     message.
//
// RESTORE_BACKUP "latest" is the newest archive on this pod's backups volume.
const restoreScript = `set -eu
done_marker="$DATA_DIR/` + restoredMarker + `"
partial="$DATA_DIR/` + restoringMarker + `"
volume="backups-$POD_NAME"
fail() {
  echo "restore: $*; refusing to start on an empty data volume" >&2
  exit 1
}
if [ -e "$done_marker" ] && [ ! -e "$partial" ]; then
  echo "restore: the data volume of $POD_NAME was restored from $(cat "$done_marker") already; nothing to do"
  exit 0
fi
if [ -e "$partial" ]; then
  echo "restore: an earlier restore into the data volume of $POD_NAME did not finish; emptying it and starting again"
  find "$DATA_DIR" -mindepth 1 -maxdepth 1 ! -name lost+found ! -name ` + restoringMarker + ` -exec rm -rf {} \;
elif [ -n "$(ls -A "$DATA_DIR" | grep -v '^lost+found$' || true)" ]; then
  echo "restore: the data volume of $POD_NAME already holds data that no restore wrote; refusing to overwrite it (empty the volume to restore into it)" >&2
  exit 1
fi
if [ "$RESTORE_BACKUP" = latest ]; then
  name=$(ls -1 "$BACKUP_DIR" | grep '^[0-9]\{8\}T[0-9]\{6\}Z\.tar\.gz$' | sort | tail -n 1 || true)
  name=${name%.tar.gz}
  [ -n "$name" ] || fail "no backup on volume $volume (restoreFrom latest)"
else
  name=$RESTORE_BACKUP
fi
archive="$BACKUP_DIR/$name.tar.gz"
[ -s "$archive" ] || fail "backup $name not found on volume $volume"
tar -tzf "$archive" > /dev/null || fail "backup $name on volume $volume is unreadable"
touch "$partial"
tar -xzf "$archive" -C "$DATA_DIR" || fail "cannot extract backup $name into the data volume of $POD_NAME"
printf '%s\n' "$name" > "$done_marker"
sync
rm -f "$partial"
sync
echo "restore: restored backup $name from volume $volume into the data volume of $POD_NAME"
`

// restoring reports whether the restore init container belongs in the pod
// template: spec.restoreFrom is set and the observed StatefulSet does not
// show the restore as over. It is over once the StatefulSet is marked
// restored, or when its controller reports every replica ready on a template
// that carries the init container (each one's restore succeeded).
func restoring(a *app, sts *appsv1.StatefulSet) bool {
	if a.restoreFrom == "" {
		return false
	}
	if sts == nil {
		return true
	}
	if sts.Annotations[restoredAnnotation] == a.restoreFrom {
		return false
	}
	carried := sts.Spec.Template.Annotations[restoringAnnotation] == a.restoreFrom
	return !(carried && allReadyOnLatestRevision(sts, a.replicas))
}

// checkRestorable refuses a restore the StatefulSet cannot carry: one that
// exists without the backups volume template (volume templates are
// immutable) would have its update refused by the API server, as the init
// container mounts that volume; and leaving the init container out would
// start the application on an empty volume.
func checkRestorable(a *app, o *observed) error {
	if a.restoreFrom == "" || o.restored || o.backupsTemplate != nil {
		return nil
	}
	return composite.Invalid("spec.restoreFrom", "StatefulSet %s exists without the backups volume template the restore reads, and volume templates cannot change: "+
		"delete the StatefulSet (its data volumes stay) to restore", a.name)
}

// allReadyOnLatestRevision reports a StatefulSet whose controller has seen
// its latest spec and whose desired replicas (at least one) all run the
// latest revision and are ready.
func allReadyOnLatestRevision(sts *appsv1.StatefulSet, desired int32) bool {
	st := sts.Status
	return desired >= 1 && st.ObservedGeneration >= sts.Generation &&
		st.ReadyReplicas >= desired && st.UpdatedReplicas >= desired &&
		st.UpdateRevision != "" && st.CurrentRevision == st.UpdateRevision
}

// addRestore adds the restore to the pod template while restoring, or marks
// the StatefulSet restored once the restore is over. The init container
// mounts the pod's data volume and, read-only, its backups volume (both
// volume templates of the StatefulSet).
func addRestore(a *app, o *observed, sts *appsv1.StatefulSet) {
	if a.restoreFrom == "" {
		return
	}
	if o.restored {
		sts.Annotations = map[string]string{restoredAnnotation: a.restoreFrom}
		return
	}
	tpl := &sts.Spec.Template
	tpl.Annotations[restoringAnnotation] = a.restoreFrom
	tpl.Spec.InitContainers = []corev1.Container{{
		Name:    "restore",
		Image:   a.backupImageOr(v1alpha1.DefaultBackupImage),
		Command: []string{"/bin/sh", "-c", restoreScript},
		Env: []corev1.EnvVar{
			kube.FieldEnv("POD_NAME", "metadata.name"),
			{Name: "DATA_DIR", Value: archiveDataPath},
			{Name: "BACKUP_DIR", Value: backupsMountPath},
			{Name: "RESTORE_BACKUP", Value: a.restoreFrom},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: dataVolume, MountPath: archiveDataPath},
			{Name: backupsVolume, MountPath: backupsMountPath, ReadOnly: true},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}}
}

// restoredCondition reports spec.restoreFrom; nil without one.
func restoredCondition(a *app, o *observed) *metav1.Condition {
	failures := o.restoreFailures
	if a.restoreFrom == "" {
		return nil
	}
	c := &metav1.Condition{Type: ConditionRestored, ObservedGeneration: a.generation}
	if o.restored {
		c.Status, c.Reason = metav1.ConditionTrue, ReasonRestoreComplete
		c.Message = "the data volumes were restored from backup " + a.restoreFrom
		if a.restoreFrom == v1alpha1.LatestBackup {
			c.Message = "the data volumes were restored, each from the newest archive on its backups volume"
		}
		return c
	}
	if len(failures) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonRestoreFailed
		c.Message = fmt.Sprintf("the restore refused to start the application on an empty or partial data volume: %s; see kubectl -n %s logs %s -c restore",
			strings.Join(failures, "; "), a.namespace, strings.SplitN(failures[0], ":", 2)[0])
		return c
	}
	c.Status, c.Reason = metav1.ConditionFalse, kube.ReasonRestoring
	c.Message = fmt.Sprintf(
		"restoring backup %s into the data volumes before the pods start; a missing or unreadable backup stops a pod there "+
			"and never starts it on an empty volume: see kubectl -n %s logs %s -c restore",
		a.restoreFrom, a.namespace, a.firstPodName())
	return c
}

// parseBackupName reads a backup name: the UTC time its run was scheduled for.
func parseBackupName(name string) (time.Time, error) {
	return time.Parse(backupStampLayout, name)
}

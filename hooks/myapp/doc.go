// Package myapp is the MyApp hook: a pure function from a Metacontroller
// request (the MyApp parent and its observed children) to the desired children
// and the parent's status.
//
// Children of MyApp <n> in its namespace:
//   - StatefulSet <n>: replicaCount pods of the image, serviceName <n>, rolling
//     updates, a data volume per pod that outlives the MyApp, and a pod-template
//     annotation with the hash of the ConfigMap data so a config change rolls
//     the pods;
//   - Service <n>: headless (clusterIP None);
//   - ConfigMap <n>-config: spec.config;
//   - PodDisruptionBudget <n> (policy/v1) when spec.highAvailability is true;
//   - with spec.backupSchedule, the default backup: CronJob <n>-backup-<i>
//     (batch/v1) per replica i, archiving that replica's data volume
//     (read-only, on its node) into its backups volume backups-<n>-<i>, a
//     second volume template of the StatefulSet, keeping spec.backup.retention
//     archives; or, with spec.backup.command, CronJob <n>-backup running it.
//
// spec.restoreFrom adds an init container "restore" to the pods of a new
// MyApp that fills each empty data volume from its backups volume, or fails
// (and so never starts the application on an empty volume); once every
// replica is ready on that template the init container is dropped and the
// StatefulSet annotated example.com/restored-from. Volume templates are
// immutable: an observed StatefulSet's backups template is kept as found, and
// one created without it never gets one (BackupSucceeded False,
// BackupsVolumeMissing; with restoreFrom, a 422 on spec.restoreFrom). Customize asks Metacontroller for a restoring MyApp's
// server pods, so the Restored condition can quote a refusing restore.
//
// Sync never sets finalized. On a finalize call (request.finalizing) the
// StatefulSet is scaled to 0 and the backup CronJob suspended; finalized is true
// only once the observed StatefulSet has no replicas left (or is gone), and
// resyncAfterSeconds asks to be called again while waiting. Data volumes are
// kept: the StatefulSet's PVC retention policy is Retain.
//
// Status: replicas, conditions Ready, Progressing, BackupSucceeded (from the
// backup CronJobs' status) and, with restoreFrom, Restored; lastBackupTime
// and lastBackupName (the UTC time the backup was scheduled for, the
// archives' name).
//
// Errors: a parent that breaks the schema yields *composite.InvalidError (422),
// a malformed observed child *composite.RequestError (400). Output depends only
// on the request and, for a condition whose status changes, on now.
package myapp

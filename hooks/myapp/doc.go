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
//   - CronJob <n>-backup (batch/v1) when spec.backupSchedule is set.
//
// Sync never sets finalized. On a finalize call (request.finalizing) the
// StatefulSet is scaled to 0 and the backup CronJob suspended; finalized is true
// only once the observed StatefulSet has no replicas left (or is gone), and
// resyncAfterSeconds asks to be called again while waiting. Data volumes are
// kept: the StatefulSet's PVC retention policy is Retain.
//
// Errors: a parent that breaks the schema yields *composite.InvalidError (422),
// a malformed observed child *composite.RequestError (400). Output depends only
// on the request and, for a condition whose status changes, on now.
package myapp

// Package kube is the Kubernetes toolkit both parents' hooks build their
// children with, so that nothing is written twice for two parents: the
// recommended labels, the component label and the kept StatefulSet selector,
// volumeClaimTemplates in their stored form, the CronJob and Job skeletons of
// backups and the pin to a StatefulSet pod's node, the config hash, the
// StatefulSet rollout summary, status conditions and cron line validation.
//
// Contract:
//   - Everything here is a pure function of its arguments: no I/O, no clock
//     (time comes in as an argument), no global state.
//   - Objects are built from k8s.io/api types in the form the API server
//     stores, so that sending them again is never an update.
//   - Nothing here knows Metacontroller's wire format (package composite) or a
//     parent's schema (packages myapp and database).
package kube

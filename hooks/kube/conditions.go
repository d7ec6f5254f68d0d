package kube

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons both parents' statuses use; each parent adds
// its own.
const (
	ConditionReady           = "Ready"
	ConditionProgressing     = "Progressing"
	ConditionBackupSucceeded = "BackupSucceeded"

	ReasonStatefulSetMissing = "StatefulSetMissing"
	ReasonRollingOut         = "RollingOut"
	ReasonRolloutComplete    = "RolloutComplete"
	ReasonTerminating        = "Terminating"
	ReasonRestoring          = "Restoring"

	ReasonNoBackupSchedule = "NoBackupSchedule"
	ReasonNoBackupYet      = "NoBackupYet"
	ReasonBackupRunning    = "BackupRunning"
	ReasonBackupSucceeded  = "BackupSucceeded"
	ReasonBackupFailed     = "BackupFailed"
)

// Conditions returns the desired conditions, in the order given, with
// lastTransitionTime carried over from previous (the parent's current status)
// for every condition whose status did not change, and set to now for the
// others. Reason, message and observedGeneration always come from desired. So a
// sync that changes nothing returns exactly the conditions it was given, and
// the status write that would start a hot loop never happens.
func Conditions(previous []metav1.Condition, now time.Time, desired ...metav1.Condition) []metav1.Condition {
	transition := metav1.NewTime(now.UTC().Truncate(time.Second))
	out := make([]metav1.Condition, len(desired))
	for i, condition := range desired {
		condition.LastTransitionTime = transition
		if old := meta.FindStatusCondition(previous, condition.Type); old != nil && old.Status == condition.Status && !old.LastTransitionTime.IsZero() {
			condition.LastTransitionTime = old.LastTransitionTime
		}
		out[i] = condition
	}
	return out
}

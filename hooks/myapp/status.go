package myapp

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"metahooks/api/v1alpha1"
	"metahooks/hooks/kube"
)

// rollout summarises an observed StatefulSet against the desired replica count.
type rollout struct {
	exists    bool
	replicas  int32 // pods the StatefulSet has
	ready     int32
	available int32
	settled   bool   // the StatefulSet controller has seen the latest spec and every pod runs the latest revision
	progress  string // what is still under way, when not settled
}

// observeRollout also reports a desired pod template (nil for none) that
// differs from the observed one as progress (this answer starts a roll),
// without unsettling what runs now: Ready is about the pods as they are.
func observeRollout(sts *appsv1.StatefulSet, desired int32, template *corev1.PodTemplateSpec) rollout {
	if sts == nil {
		return rollout{progress: "StatefulSet not created yet"}
	}
	st := sts.Status
	r := rollout{exists: true, replicas: st.Replicas, ready: st.ReadyReplicas, available: st.AvailableReplicas}
	r.progress = kube.RolloutProgress(sts, desired)
	r.settled = r.progress == ""
	if r.settled && template != nil {
		r.progress = kube.TemplateChange(sts, template)
	}
	return r
}

// status computes the MyApp status from the observed StatefulSet and the
// desired pod template (nil while finalizing). With the same inputs and the
// same previous conditions it returns the same status, whatever now is.
func status(a *app, o *observed, desiredReplicas int32, template *corev1.PodTemplateSpec, finalizing bool, now time.Time) v1alpha1.MyAppStatus {
	r := observeRollout(o.statefulSet, desiredReplicas, template)
	ready := metav1.Condition{Type: kube.ConditionReady, ObservedGeneration: a.generation}
	progressing := metav1.Condition{Type: kube.ConditionProgressing, ObservedGeneration: a.generation}

	switch {
	case finalizing:
		ready.Status, ready.Reason = metav1.ConditionFalse, kube.ReasonTerminating
		ready.Message = fmt.Sprintf("finalizing: scaling to 0 before the MyApp goes, pods left: %d", r.replicas)
	case !r.exists:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, kube.ReasonStatefulSetMissing, "StatefulSet "+a.name+" does not exist yet"
	case desiredReplicas == 0 && r.settled:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionTrue, ReasonScaledToZero, "scaled to 0 replicas"
	case r.settled && r.available >= desiredReplicas:
		ready.Status, ready.Reason = metav1.ConditionTrue, ReasonAllReplicasAvailable
		ready.Message = fmt.Sprintf("%d/%d replicas available", r.available, desiredReplicas)
	default:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonReplicasUnavailable
		ready.Message = fmt.Sprintf("%d/%d replicas available", r.available, desiredReplicas)
	}

	switch {
	case finalizing:
		progressing.Status, progressing.Reason = metav1.ConditionTrue, kube.ReasonTerminating
		progressing.Message = "scaling to 0 before deletion"
		if r.progress != "" {
			progressing.Message += ": " + r.progress
		}
	case r.progress != "":
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, kube.ReasonRollingOut, r.progress
	default:
		progressing.Status, progressing.Reason = metav1.ConditionFalse, kube.ReasonRolloutComplete
		progressing.Message = fmt.Sprintf("%d replicas on the current revision", r.replicas)
	}

	backups := reportBackups(a, o)
	conditions := []metav1.Condition{ready, progressing, backups.condition}
	if restored := restoredCondition(a, o); restored != nil {
		conditions = append(conditions, *restored)
	}
	return v1alpha1.MyAppStatus{
		ObservedGeneration: a.generation,
		Replicas:           r.replicas,
		ReadyReplicas:      r.ready,
		AvailableReplicas:  r.available,
		Selector:           labels.SelectorFromSet(a.selector(o)).String(), // for the scale subresource
		LastBackupTime:     backups.lastTime,
		LastBackupName:     backups.lastName,
		Conditions:         kube.Conditions(a.conditions, now, conditions...),
	}
}

package myapp

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"metahooks/hooks/composite"
)

// finalizeWaitSeconds is how soon to ask again while the pods go.
const finalizeWaitSeconds = 5

// Sync answers a sync or finalize call for a MyApp parent: the desired children
// and the parent's status. It is pure: the same request and now give the same
// response, and now only matters for a condition whose status changes.
func Sync(req *composite.Request, now time.Time) (*composite.Response, error) {
	a, err := parseRequestParent(req)
	if err != nil {
		return nil, err
	}
	o, err := observeChildren(req, a)
	if err != nil {
		return nil, err
	}
	if req.Finalizing {
		return finalize(a, o, now)
	}
	children := desiredChildren(a, o, a.replicas, false)
	template := &children[0].(*appsv1.StatefulSet).Spec.Template
	response, err := composite.NewResponse(status(a, o, a.replicas, template, false, now), children...)
	if err != nil {
		return nil, fmt.Errorf("cannot build MyApp %s/%s: %w", a.namespace, a.name, err)
	}
	return response, nil
}

// desiredChildren lists every child of the app; builders return nil for
// children the spec does not ask for.
func desiredChildren(a *app, o *observed, replicas int32, finalizing bool) []runtime.Object {
	selector := a.selector(o)
	return append([]runtime.Object{
		statefulSet(a, o, selector, replicas), // first: Sync reads its template
		headlessService(a, selector),
		configMap(a),
		podDisruptionBudget(a, selector),
		backupCronJob(a, finalizing),
	}, backupCronJobs(a, o, finalizing)...)
}

// finalize tears the app down in order: scale the StatefulSet to 0 (and stop
// backups), and only when the observed StatefulSet has no pods left answer
// finalized. Metacontroller then removes its finalizer and garbage collection
// deletes the children through their owner references (Metacontroller v4.17
// stops managing children once its finalizer is gone, so the empty child list
// of that answer only matters to older versions, which delete them directly).
// Either way the data volumes stay: the PVC retention policy is Retain.
func finalize(a *app, o *observed, now time.Time) (*composite.Response, error) {
	done := scaledDown(o.statefulSet)
	response, err := composite.NewFinalizeResponse(done, finalizeWaitSeconds,
		status(a, o, 0, nil, true, now), desiredChildren(a, o, 0, true)...)
	if err != nil {
		return nil, fmt.Errorf("cannot finalize MyApp %s/%s: %w", a.namespace, a.name, err)
	}
	return response, nil
}

// scaledDown reports whether the observed StatefulSet is gone, or asks for 0
// replicas, has been seen so by its controller, and has no pods left.
func scaledDown(sts *appsv1.StatefulSet) bool {
	if sts == nil {
		return true
	}
	return ptr.Deref(sts.Spec.Replicas, 1) == 0 &&
		sts.Status.ObservedGeneration >= sts.Generation &&
		sts.Status.Replicas == 0
}

package myapp

import (
	appsv1 "k8s.io/api/apps/v1"

	"metahooks/hooks/composite"
)

// observed holds the observed children the hook reads; nil when absent.
type observed struct {
	statefulSet *appsv1.StatefulSet
}

func observeChildren(req *composite.Request, a *app) (*observed, error) {
	sts, err := composite.ObservedAs[appsv1.StatefulSet](req, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), a.namespace, a.name)
	if err != nil {
		return nil, err
	}
	return &observed{statefulSet: sts}, nil
}

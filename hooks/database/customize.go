package database

import (
	"encoding/json"
	"errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/composite"
)

// Customize answers the customize hook of database-controller: the related
// objects Metacontroller is to send with every sync and finalize call of the
// Database, namely its PVCs, data-<n>-<i> and backups-<n>-<i> of every
// ordinal spec.instances allows (a Database that once ran more instances
// keeps their volumes). They are not children (see doc.go), but finalize
// must see their owner references before it lets the StatefulSet go
// (volumesFollowPolicy). And the pods of its
// backup Jobs, by the backup component's labels: the status says why a
// backup failed in their words (backup_failures.go).
//
// With spec.instances of 2 or more it also asks for the pods <n>-0 to
// <n>-8 (every ordinal spec.instances allows): their readiness and what the
// instances publish on them are what failover decides on (topology.go).
// With spec.restoreFrom and one instance it asks for pod <n>-0, whose init
// container restores (restore_failure.go).
//
// Metacontroller caches the answer per parent and generation, so it depends
// on the parent's name and namespace and on spec.instances only (a change of
// spec bumps the generation); the spec is not validated (a bad spec is the
// sync hook's 422, and an unreadable spec.instances counts as 1 here).
func Customize(req *composite.CustomizeRequest) (*composite.CustomizeResponse, error) {
	var parent struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
	}
	var spec struct {
		Spec struct {
			Instances   *int32          `json:"instances"`
			RestoreFrom json.RawMessage `json:"restoreFrom"`
		} `json:"spec"`
	}
	if err := composite.DecodeObject(req.Parent, &parent); err != nil {
		if costErr := (*composite.CostError)(nil); errors.As(err, &costErr) {
			return nil, costErr.Within("parent")
		}
		return nil, &composite.RequestError{Field: "parent", Reason: err.Error()}
	}
	if err := composite.CheckKind(parent.APIVersion, parent.Kind, GroupVersionKind); err != nil {
		return nil, err
	}
	d := &database{name: parent.Name, namespace: parent.Namespace}
	if err := d.validateMeta(); err != nil {
		return nil, err
	}
	rules := []composite.RelatedResourceRule{{
		APIVersion: "v1",
		Resource:   "persistentvolumeclaims",
		Namespace:  d.namespace,
		Names:      d.claimNames(),
	}, {
		APIVersion:    "v1",
		Resource:      "pods",
		Namespace:     d.namespace,
		LabelSelector: &metav1.LabelSelector{MatchLabels: d.backupPodSelector()},
	}}
	specRead := composite.DecodeObject(req.Parent, &spec) == nil
	switch {
	case specRead && spec.Spec.Instances != nil && *spec.Spec.Instances > 1:
		rules = append(rules, composite.RelatedResourceRule{
			APIVersion: "v1",
			Resource:   "pods",
			Namespace:  d.namespace,
			Names:      d.podNames(),
		})
	case specRead && len(spec.Spec.RestoreFrom) > 0 && string(spec.Spec.RestoreFrom) != "null":
		// Pod <n>-0, whose init container restores: the status says why a
		// restore failed (restore_failure.go).
		rules = append(rules, composite.RelatedResourceRule{
			APIVersion: "v1",
			Resource:   "pods",
			Namespace:  d.namespace,
			Names:      []string{d.podName()},
		})
	}
	return &composite.CustomizeResponse{RelatedResources: rules}, nil
}

// podNames are the pods of every ordinal spec.instances allows.
func (d *database) podNames() []string {
	names := make([]string, maxInstances)
	for i := range names {
		names[i] = d.instanceName(i)
	}
	return names
}

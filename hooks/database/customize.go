package database

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/composite"
)

// Customize answers the customize hook of database-controller: the related
// objects Metacontroller is to send with every sync and finalize call of the
// Database, namely its two PVCs, data-<n>-0 and backups-<n>-0. They are not
// children (see doc.go), but finalize must see their owner references before
// it lets the StatefulSet go (volumesFollowPolicy).
//
// Metacontroller caches the answer per parent and generation, so it depends
// on the parent's name and namespace only; the spec is not even validated (a
// bad spec is the sync hook's 422).
func Customize(req *composite.CustomizeRequest) (*composite.CustomizeResponse, error) {
	var parent struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
	}
	if err := composite.DecodeObject(req.Parent, &parent); err != nil {
		return nil, &composite.RequestError{Field: "parent", Reason: err.Error()}
	}
	if err := composite.CheckKind(parent.APIVersion, parent.Kind, GroupVersionKind); err != nil {
		return nil, err
	}
	d := &database{name: parent.Name, namespace: parent.Namespace}
	if err := d.validateMeta(); err != nil {
		return nil, err
	}
	return &composite.CustomizeResponse{RelatedResources: []composite.RelatedResourceRule{{
		APIVersion: "v1",
		Resource:   "persistentvolumeclaims",
		Namespace:  d.namespace,
		Names:      d.claimNames(),
	}}}, nil
}

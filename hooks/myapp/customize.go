package myapp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// Customize answers the customize hook of myapp-controller: the related
// objects Metacontroller is to send with every sync call. A MyApp with
// spec.restoreFrom asks for its server pods, so that the status can say why a
// restore init container refused (Restored False, RestoreFailed, with the
// container's own words); any other MyApp asks for nothing, and Metacontroller
// then watches no pods for it.
//
// Metacontroller caches the answer per parent and generation; spec.restoreFrom
// is immutable, so the answer never changes for a parent. Only metadata and
// spec.restoreFrom are read: a bad spec is the sync hook's 422.
func Customize(req *composite.CustomizeRequest) (*composite.CustomizeResponse, error) {
	var parent struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              struct {
			RestoreFrom string `json:"restoreFrom"`
		} `json:"spec"`
	}
	if err := composite.DecodeParent(req.Parent, &parent, GroupVersionKind); err != nil {
		return nil, err
	}
	a := &app{name: parent.Name, namespace: parent.Namespace}
	switch {
	case a.name == "":
		return nil, composite.Invalid("metadata.name", "required")
	case a.namespace == "":
		return nil, composite.Invalid("metadata.namespace", "required: MyApp is namespaced")
	}
	response := &composite.CustomizeResponse{RelatedResources: []composite.RelatedResourceRule{}}
	if parent.Spec.RestoreFrom != "" {
		response.RelatedResources = append(response.RelatedResources, composite.RelatedResourceRule{
			APIVersion:    "v1",
			Resource:      "pods",
			Namespace:     a.namespace,
			LabelSelector: &metav1.LabelSelector{MatchLabels: kube.ComponentSelector(appName, a.name, kube.ComponentServer)},
		})
	}
	return response, nil
}

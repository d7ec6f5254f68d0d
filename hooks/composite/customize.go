package composite

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CustomizeRequest is Metacontroller's customize hook request: the
// CompositeController and the parent, no children.
type CustomizeRequest struct {
	// Controller is the CompositeController that made the call.
	Controller json.RawMessage `json:"controller,omitempty"`
	// Parent is the parent object as Metacontroller's cache holds it.
	Parent json.RawMessage `json:"parent"`
}

// CustomizeResponse is Metacontroller's customize hook response: the rules
// selecting the related objects sent in every later sync and finalize request
// (Request.Related). Metacontroller caches it per parent and generation, so
// it must depend only on what a new generation would change.
type CustomizeResponse struct {
	RelatedResources []RelatedResourceRule `json:"relatedResources"`
}

// RelatedResourceRule selects related objects of one resource, by names (with
// an optional namespace) or by label selectors, never both.
type RelatedResourceRule struct {
	APIVersion        string                `json:"apiVersion"`
	Resource          string                `json:"resource"`
	LabelSelector     *metav1.LabelSelector `json:"labelSelector,omitempty"`
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	Namespace         string                `json:"namespace,omitempty"`
	Names             []string              `json:"names,omitempty"`
}

// DecodeCustomizeRequest parses a customize hook request body. It fails with
// *RequestError when the body is not a JSON object or has no parent object.
//
// It is DecodeRequest's reading, with its answers (a customize request has
// no children): one scan, the parent and controller kept as sub-slices of
// body; only a body that scan does not read is decoded again, for the
// precise error.
func DecodeCustomizeRequest(body []byte) (*CustomizeRequest, error) {
	req, err := DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	return &CustomizeRequest{Controller: req.Controller, Parent: req.Parent}, nil
}

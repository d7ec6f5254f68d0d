package composite

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// Response is Metacontroller's CompositeHookResponse.
type Response struct {
	// Status replaces the parent's status wholesale.
	Status json.RawMessage `json:"status"`
	// Children is the full desired set: any observed child missing here is deleted.
	Children []json.RawMessage `json:"children"`
	// ResyncAfterSeconds asks for one more call after this delay, when > 0.
	ResyncAfterSeconds float64 `json:"resyncAfterSeconds,omitempty"`
	// Finalized lets Metacontroller remove its finalizer. Finalize calls only.
	Finalized bool `json:"finalized,omitempty"`
}

// NewResponse encodes status and the desired children into a Response.
// Nil children (a builder's "not wanted") are skipped; the rest are encoded with
// EncodeChild and sorted, and a duplicate fails the whole response.
func NewResponse(status any, children ...runtime.Object) (*Response, error) {
	encoded := make([]Child, 0, len(children))
	for _, child := range children {
		if isNil(child) {
			continue
		}
		c, err := EncodeChild(child)
		if err != nil {
			return nil, err
		}
		encoded = append(encoded, c)
	}
	if err := SortChildren(encoded); err != nil {
		return nil, err
	}
	statusJSON, err := Clean(status)
	if err != nil {
		return nil, fmt.Errorf("cannot encode status: %w", err)
	}
	response := &Response{Status: statusJSON, Children: make([]json.RawMessage, len(encoded))}
	for i, c := range encoded {
		response.Children[i] = c.JSON
	}
	return response, nil
}

// NewFinalizeResponse is NewResponse for a finalize call. Until done it
// carries status and the children to keep, and asks to be called again after
// resyncAfterSeconds; once done it carries status alone and finalized, so
// Metacontroller removes its finalizer and garbage collection deletes the
// children through their owner references.
func NewFinalizeResponse(done bool, resyncAfterSeconds float64, status any, children ...runtime.Object) (*Response, error) {
	if done {
		children = nil
	}
	response, err := NewResponse(status, children...)
	if err != nil {
		return nil, err
	}
	response.Finalized = done
	if !done {
		response.ResyncAfterSeconds = resyncAfterSeconds
	}
	return response, nil
}

// isNil reports a nil interface or a typed nil pointer (a builder returning
// (*policyv1.PodDisruptionBudget)(nil) when no PDB is wanted).
func isNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

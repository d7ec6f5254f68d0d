package composite

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
)

// Parent is a typed parent object: a Kubernetes object with TypeMeta.
type Parent interface {
	GetObjectKind() schema.ObjectKind
}

// DecodeParent decodes the parent object raw (Request.Parent) into into with
// the API server's rules (DecodeObject) and checks that it is of kind want. A
// value of the wrong type is an *InvalidError naming its JSON path once, as in
// `spec.replicaCount: wrong type: got a JSON string, want int32` (422: the
// parent breaks its schema); a parent of another kind is a *RequestError
// (400: the request was sent to the wrong hook).
//
// The kind is checked first, from apiVersion and kind alone, so a parent of
// another kind is refused as such rather than for a field it cannot have.
func DecodeParent(raw []byte, into Parent, want schema.GroupVersionKind) error {
	return decodeParent(raw, into, want, nil)
}

// DecodeParent is composite.DecodeParent of the request's parent, which the
// scan may have decoded already (Prefetch).
func (r *Request) DecodeParent(into Parent, want schema.GroupVersionKind) error {
	return decodeParent(r.Parent, into, want, r.prefetched)
}

func decodeParent(raw []byte, into Parent, want schema.GroupVersionKind, pre prefetched) error {
	if pre.take(raw, into) {
		return checkParentKind(into, want)
	}
	if err := DecodeObject(raw, into); err != nil {
		// Only now, on the error path, read apiVersion and kind alone: a
		// parent of another kind is refused as such.
		var typeMeta metav1.TypeMeta
		if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &typeMeta); err == nil {
			if err := CheckKind(typeMeta.APIVersion, typeMeta.Kind, want); err != nil {
				return err
			}
		}
		var decodeErr *DecodeError
		if errors.As(err, &decodeErr) && decodeErr.repeated { // malformed, not the schema broken
			return &RequestError{Field: "parent." + decodeErr.Field, Reason: decodeErr.Reason}
		}
		if errors.As(err, &decodeErr) && decodeErr.Field != "" {
			return &InvalidError{Field: decodeErr.Field, Reason: decodeErr.Reason}
		}
		return &InvalidError{Field: "parent", Reason: err.Error()}
	}
	return checkParentKind(into, want)
}

// checkParentKind is CheckKind of a decoded parent's apiVersion and kind.
func checkParentKind(into Parent, want schema.GroupVersionKind) error {
	kind := into.GetObjectKind()
	if typeMeta, ok := kind.(*metav1.TypeMeta); ok { // as written, even when apiVersion does not parse
		return CheckKind(typeMeta.APIVersion, typeMeta.Kind, want)
	}
	apiVersion, kindName := kind.GroupVersionKind().ToAPIVersionAndKind()
	return CheckKind(apiVersion, kindName, want)
}

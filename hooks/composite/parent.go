package composite

import (
	"errors"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
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
	return decodeParent(raw, into, want, nil, nil, unpaid)
}

// DecodeParent is composite.DecodeParent of the request's parent, which the
// scan may have decoded already (Prefetch).
func (r *Request) DecodeParent(into Parent, want schema.GroupVersionKind) error {
	paid := unpaid
	if r.reads != nil && reflect.TypeOf(into).Elem() == r.reads.parent.t {
		paid = r.takePrepaid(r.Parent)
	}
	return decodeParent(r.Parent, into, want, r.prefetched, r.budget, paid)
}

func decodeParent(raw []byte, into Parent, want schema.GroupVersionKind, pre prefetched, budget *costBudget, paid payment) error {
	if pre.take(raw, into) {
		return checkDecodedParent(into, want)
	}
	if err := decodeTree(raw, into, pruneTreeOf(reflect.TypeOf(into).Elem(), false), budget, paid); err != nil {
		var costErr *CostError
		if errors.As(err, &costErr) {
			return costErr.Within("parent")
		}
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
	return checkDecodedParent(into, want)
}

// checkDecodedParent checks a decoded parent's kind, then bounds its name and
// namespace (CheckParentMeta) before any hook copies, formats or builds
// children from them.
func checkDecodedParent(into Parent, want schema.GroupVersionKind) error {
	if err := checkParentKind(into, want); err != nil {
		return err
	}
	if meta, ok := into.(metav1.Object); ok {
		return CheckParentMeta(meta.GetName(), meta.GetNamespace())
	}
	return nil
}

// CheckParentMeta checks a parent's name and namespace as the API server
// does for any object: a name is a DNS-1123 subdomain of at most 253
// characters, a namespace a DNS-1123 label of at most 63. The length comes
// first, so a huge value costs one comparison and is quoted by its prefix
// alone. An empty name or namespace is left to the hook, which says why it
// needs one. A hook that derives children from the name checks its tighter
// limits after this one (kube.ValidateParentName).
func CheckParentMeta(name, namespace string) error {
	if n := len(name); n > validation.DNS1123SubdomainMaxLength {
		return Invalid("metadata.name", "must be at most %d characters, got %d: %s", validation.DNS1123SubdomainMaxLength, n, Quote(name))
	}
	if name != "" {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return Invalid("metadata.name", "must be a DNS-1123 subdomain (%s), got %s", strings.Join(errs, "; "), Quote(name))
		}
	}
	if n := len(namespace); n > validation.DNS1123LabelMaxLength {
		return Invalid("metadata.namespace", "must be at most %d characters, got %d: %s", validation.DNS1123LabelMaxLength, n, Quote(namespace))
	}
	if namespace != "" {
		if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
			return Invalid("metadata.namespace", "must be a DNS-1123 label (%s), got %s", strings.Join(errs, "; "), Quote(namespace))
		}
	}
	return nil
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

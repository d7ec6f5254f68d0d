package composite

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// keepWhenEmpty lists the fields whose empty object means something to the API
// server ("emptyDir: {}" asks for a volume), so Clean keeps them.
var keepWhenEmpty = map[string]bool{"emptyDir": true}

// Child is one desired child as apply JSON, with the identity used to sort it.
type Child struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	JSON       json.RawMessage
}

// EncodeChild turns a typed Kubernetes object into the apply JSON Metacontroller
// expects: apiVersion, kind and metadata.name set, no top-level status, and no
// nulls (creationTimestamp: null) or empty objects (resources: {}) anywhere, so
// that nothing the hook does not mean becomes part of its intent.
//
// It is one pass over the typed object by a plan cached per Go type
// (plan.go), writing what encoding/json's output cleaned by cleanJSON would
// be (the goldens are written in encoding/json's escaping and number format).
func EncodeChild(obj runtime.Object) (Child, error) {
	c, err := childIdentity(obj)
	if err != nil {
		return Child{}, err
	}
	if c.JSON, err = encodeTyped(obj, true); err != nil {
		return Child{}, fmt.Errorf("cannot encode %s: %w", c.Kind, err)
	}
	return c, nil
}

// childIdentity is the child of obj without its JSON: apiVersion, kind,
// namespace and name, of which all but the namespace must be set.
func childIdentity(obj runtime.Object) (Child, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return Child{}, fmt.Errorf("cannot encode %T: apiVersion and kind must be set", obj)
	}
	named, ok := obj.(interface {
		GetName() string
		GetNamespace() string
	})
	if !ok || named.GetName() == "" {
		return Child{}, fmt.Errorf("cannot encode %s: metadata.name must be set", gvk.Kind)
	}
	return Child{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Namespace:  named.GetNamespace(),
		Name:       named.GetName(),
	}, nil
}

// Clean marshals v (a status struct, say) to JSON without nulls or empty objects.
func Clean(v any) (json.RawMessage, error) {
	return encodeTyped(v, false)
}

// encodeTyped writes v as clean JSON with its plan (plan.go): what
// encodeClean gives, in one pass. A document that cleans to nothing is {}.
func encodeTyped(v any, dropStatus bool) (json.RawMessage, error) {
	scratch := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(scratch)
	dst, err := appendTyped((*scratch)[:0], v, dropStatus)
	*scratch = dst[:0] // keeps what it grew to
	if err != nil {
		return nil, err
	}
	return bytes.Clone(dst), nil
}

// appendTyped appends what encodeTyped gives for v to dst. On an error
// what it appended is to be discarded.
func appendTyped(dst []byte, v any, dropStatus bool) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(dst, "{}"...), nil
	}
	p := planOf(rv.Type())
	for p.kind == planPointer && !rv.IsNil() {
		rv, p = rv.Elem(), p.elem
	}
	var out outcome
	var err error
	switch {
	case p.kind == planStruct:
		dst, out, err = writeStruct(dst, rv, p.fields, dropStatus)
	case dropStatus: // not a plain struct: the two passes, status dropped by cleanJSON
		raw, err := encodeClean(v, true)
		if err != nil {
			return dst, err
		}
		return append(dst, raw...), nil
	default:
		dst, out, err = p.encode(dst, rv)
	}
	if err != nil {
		return dst, err
	}
	if out != written {
		return append(dst, "{}"...), nil
	}
	return dst, nil
}

// encodeBuffers hold encodeTyped's output while it is written, so that it
// is copied once, at its size, rather than grown.
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// marshalBuffers holds the intermediate encoding/json output between calls.
var marshalBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// encodeClean marshals v with encoding/json and cleans the result
// (cleanJSON): the two-pass encoder, for what has no plan of its own and as
// the reference the plans are tested against.
func encodeClean(v any, dropStatus bool) (json.RawMessage, error) {
	buf := marshalBuffers.Get().(*bytes.Buffer)
	defer marshalBuffers.Put(buf)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(v); err != nil { // escapes HTML, like json.Marshal
		return nil, err
	}
	return cleanJSON(make([]byte, 0, buf.Len()), buf.Bytes(), dropStatus)
}

// SortChildren orders children by apiVersion, kind, namespace and name, and
// fails on two children with the same identity: Metacontroller keys children by
// that identity, so a duplicate would silently replace the other.
func SortChildren(children []Child) error {
	slices.SortFunc(children, func(a, b Child) int {
		return cmp.Or(
			strings.Compare(a.APIVersion, b.APIVersion),
			strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.Namespace, b.Namespace),
			strings.Compare(a.Name, b.Name),
		)
	})
	for i := 1; i < len(children); i++ {
		a, b := children[i-1], children[i]
		if a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name {
			return fmt.Errorf("duplicate desired child %s %s", b.Kind, b.Name)
		}
	}
	return nil
}

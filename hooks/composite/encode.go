package composite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

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
func EncodeChild(obj runtime.Object) (Child, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return Child{}, fmt.Errorf("cannot encode %T: apiVersion and kind must be set", obj)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return Child{}, fmt.Errorf("cannot encode %s: %w", gvk.Kind, err)
	}
	var fields map[string]any
	if err := decodeNumbers(raw, &fields); err != nil {
		return Child{}, fmt.Errorf("cannot encode %s: %w", gvk.Kind, err)
	}
	delete(fields, "status")
	cleaned, err := marshalClean(fields)
	if err != nil {
		return Child{}, fmt.Errorf("cannot encode %s: %w", gvk.Kind, err)
	}
	meta, _ := fields["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	if name == "" {
		return Child{}, fmt.Errorf("cannot encode %s: metadata.name must be set", gvk.Kind)
	}
	return Child{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Namespace:  namespace,
		Name:       name,
		JSON:       cleaned,
	}, nil
}

// Clean marshals v (a status struct, say) to JSON without nulls or empty objects.
func Clean(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var value any
	if err := decodeNumbers(raw, &value); err != nil {
		return nil, err
	}
	return marshalClean(value)
}

func decodeNumbers(raw []byte, into any) error {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	return decoder.Decode(into)
}

func marshalClean(value any) (json.RawMessage, error) {
	pruned, _ := prune(value)
	if pruned == nil {
		pruned = map[string]any{}
	}
	// encoding/json writes map keys sorted, so equal values give equal bytes.
	return json.Marshal(pruned)
}

// prune drops nulls and empty objects, depth first. It reports false when the
// value itself should be dropped.
func prune(value any) (any, bool) {
	switch v := value.(type) {
	case nil:
		return nil, false
	case map[string]any:
		for key, field := range v {
			kept, ok := prune(field)
			if !ok && !(keepWhenEmpty[key] && field != nil) {
				delete(v, key)
				continue
			}
			if ok {
				v[key] = kept
			}
		}
		return v, len(v) > 0
	case []any:
		for i, item := range v {
			kept, ok := prune(item)
			if !ok {
				kept = emptyLike(item)
			}
			v[i] = kept
		}
		return v, true
	default:
		return v, true
	}
}

// emptyLike keeps a list item in place when it prunes to nothing, so list
// positions never shift.
func emptyLike(item any) any {
	if _, isMap := item.(map[string]any); isMap {
		return map[string]any{}
	}
	return item
}

// SortChildren orders children by apiVersion, kind, namespace and name, and
// fails on two children with the same identity: Metacontroller keys children by
// that identity, so a duplicate would silently replace the other.
func SortChildren(children []Child) error {
	sort.Slice(children, func(i, j int) bool {
		a, b := children[i], children[j]
		if a.APIVersion != b.APIVersion {
			return a.APIVersion < b.APIVersion
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	for i := 1; i < len(children); i++ {
		a, b := children[i-1], children[i]
		if a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name {
			return fmt.Errorf("duplicate desired child %s %s", b.Kind, b.Name)
		}
	}
	return nil
}

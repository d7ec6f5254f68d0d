package composite

import (
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Prefetch names what a hook decodes from every request it serves: its
// parent's type and the types of the observed children it always reads (a
// StatefulSet). DecodeRequestPrefetching decodes those in the pass that scans
// the request: the scan copies what is read of each as it goes, rather than
// skipping it and reading it again when asked; Request.DecodeParent and
// Request.Observed then hand out the value decoded there. Children of other types stay raw until looked up. A
// Prefetch is built once per hook and only read after.
type Prefetch struct {
	parent   reflect.Type            // nil: the parent is decoded when asked for
	children map[string]reflect.Type // by type key
}

// NewPrefetch is the Prefetch of a hook whose parent is a *P and which reads
// the observed children of the given kinds, each decoded into its value in
// types (an appsv1.StatefulSet{} for StatefulSet).
func NewPrefetch[P any](children map[schema.GroupVersionKind]any) *Prefetch {
	p := &Prefetch{parent: reflect.TypeFor[P](), children: map[string]reflect.Type{}}
	for gvk, v := range children {
		p.children[TypeKey(gvk)] = reflect.TypeOf(v)
	}
	return p
}

// prefetched holds what the scan decoded, by the first byte of its raw JSON
// (a sub-slice of the body: each is distinct). A value is taken by the first
// lookup that asks for its type, so no two callers share one.
type prefetched map[*byte]any

// take moves the value decoded for raw into into (a pointer to the same
// type), reporting whether there was one.
func (p prefetched) take(raw []byte, into any) bool {
	if len(raw) == 0 {
		return false
	}
	v, ok := p[&raw[0]]
	if !ok || reflect.TypeOf(v) != reflect.TypeOf(into) {
		return false
	}
	delete(p, &raw[0])
	reflect.ValueOf(into).Elem().Set(reflect.ValueOf(v).Elem())
	return true
}

// decodeNew decodes the object that begins at i into a new *t, from the
// copy pruneTreeOf(t, observed) leaves of it, and returns it with its raw JSON, a
// sub-slice of the data, and the offset after it. It reports false when the
// value is not an object or does not decode: the scan then gives up and the
// request takes the slow path, which gives the same answer or the precise
// error.
func (s *scanner) decodeNew(i int, t reflect.Type, observed bool) (json.RawMessage, any, int, bool) {
	if s.data[i] != '{' {
		return nil, nil, i, false
	}
	v := reflect.New(t).Interface()
	end, ok := s.decode(i, v, pruneTreeOf(t, observed))
	return json.RawMessage(s.data[i:end:end]), v, end, ok
}

// childType is the type the observed children of typeKey decode into, nil
// when they stay raw.
func (p *Prefetch) childType(typeKey string) reflect.Type {
	if p == nil {
		return nil
	}
	return p.children[typeKey]
}

// observedChild is child for a child of a prefetched type: decoded as
// decodeObserved decodes it, kept in req, and refused (the slow path then
// gives checkChildren's error) unless it has a name.
func (s *scanner) observedChild(i int, t reflect.Type, req *Request) (json.RawMessage, int, bool) {
	raw, v, end, ok := s.decodeNew(i, t, true)
	if !ok {
		return nil, end, false
	}
	if named, isNamed := v.(interface{ GetName() string }); !isNamed || named.GetName() == "" {
		return nil, end, false
	}
	req.prefetch(raw, v)
	return raw, end, true
}

// prefetch keeps v, decoded from raw, for the first lookup of raw.
func (r *Request) prefetch(raw []byte, v any) {
	if r.prefetched == nil {
		r.prefetched = prefetched{}
	}
	r.prefetched[&raw[0]] = v
}

package composite

import (
	"encoding/json"
	"fmt"
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
	parent   prefetchedKind            // a nil type: the parent is decoded when asked for
	children map[string]prefetchedKind // by type key
}

// prefetchedKind is what the scan decodes of the parent or of the observed
// children of one kind: the type, and its prune tree.
type prefetchedKind struct {
	t    reflect.Type
	tree *pruneNode
}

// NewPrefetch is the Prefetch of a hook whose parent is a *P and which reads
// the observed children of the given kinds, each decoded into its value in
// types (an appsv1.StatefulSet{} for StatefulSet), or only as much of it as
// an ObservedReads says. It panics on an ObservedReads that names a member
// its type does not have: a Prefetch is a hook's fixed declaration.
func NewPrefetch[P any](children map[schema.GroupVersionKind]any) *Prefetch {
	parent := reflect.TypeFor[P]()
	p := &Prefetch{parent: prefetchedKind{t: parent, tree: pruneTreeOf(parent, false)}, children: map[string]prefetchedKind{}}
	for gvk, v := range children {
		kind := prefetchedKind{t: reflect.TypeOf(v)}
		if reads, ok := v.(ObservedReads); ok {
			kind.t = reflect.TypeOf(reads.Into)
			tree, err := readsTree(kind.t, reads.Paths)
			if err != nil {
				panic(fmt.Sprintf("composite.NewPrefetch: %s: %v", gvk.Kind, err))
			}
			kind.tree = tree
		} else {
			kind.tree = pruneTreeOf(kind.t, true)
		}
		p.children[TypeKey(gvk)] = kind
	}
	return p
}

// ObservedReads, a value of NewPrefetch's map, says what a hook reads of
// the observed children of one kind: Into is the value they decode into
// (an appsv1.StatefulSet{}), Paths the members it reads, as dotted JSON
// member names ("spec.template.metadata.annotations"). Each is decoded as
// any observed object is (managedFields, the last applied configurations
// and a pod spec but its containers' names and images left out); every
// other member is read to be JSON, its names checked, and never built. The
// hook's answers must not change for it: its tests hold the answers with
// the Prefetch to those without.
type ObservedReads struct {
	Into  any
	Paths []string
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

// takeAs is take for a caller that wants the value itself: the *T decoded
// for raw, handed out rather than copied, and no longer kept.
func takeAs[T any](p prefetched, raw []byte) (*T, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	v, ok := p[&raw[0]].(*T)
	if ok {
		delete(p, &raw[0])
	}
	return v, ok
}

// decodeNew decodes the object that begins at i into a new *t, leaving
// out what tree says, and returns it with its raw JSON, a sub-slice of the
// data, and the offset after it. It reports false when the value is not an
// object or does not decode: the scan then gives up and the request takes
// the slow path, which gives the same answer or the precise error.
func (s *scanner) decodeNew(i int, t reflect.Type, tree *pruneNode, budget *costBudget) (json.RawMessage, any, int, bool) {
	if s.data[i] != '{' {
		return nil, nil, i, false
	}
	if err := budget.chargeAt(s, i, t, tree); err != nil {
		budget.refused = err.(*CostError) // placed by the caller, which knows the object
		return nil, nil, i, false
	}
	v := reflect.New(t).Interface()
	end, ok := s.decode(i, v, tree)
	return json.RawMessage(s.data[i:end:end]), v, end, ok
}

// childKind is what the observed children of typeKey decode into; a nil
// type when they stay raw.
func (p *Prefetch) childKind(typeKey string) prefetchedKind {
	if p == nil {
		return prefetchedKind{}
	}
	return p.children[typeKey]
}

// observedChild is child for a child of a prefetched type: decoded as
// decodeObserved decodes it, kept in req, and refused (the slow path then
// gives checkChildren's error) unless it has a name.
func (s *scanner) observedChild(i int, kind prefetchedKind, req *Request) (json.RawMessage, int, bool) {
	raw, v, end, ok := s.decodeNew(i, kind.t, kind.tree, req.budget)
	if !ok {
		if req.budget.refused == nil {
			req.decline(s.data[i:])
		}
		return nil, end, false
	}
	if named, isNamed := v.(interface{ GetName() string }); !isNamed || named.GetName() == "" {
		return nil, end, false
	}
	req.prefetch(raw, v)
	return raw, end, true
}

// decline notes that the typed decoder declined the object that begins
// raw: the slow path, which takes the request on, goes to the slow decoder
// at once instead of trying it again.
func (r *Request) decline(raw []byte) {
	if r.declined == nil {
		r.declined = map[*byte]struct{}{}
	}
	r.declined[&raw[0]] = struct{}{}
}

// prefetch keeps v, decoded from raw, for the first lookup of raw.
func (r *Request) prefetch(raw []byte, v any) {
	if r.prefetched == nil {
		r.prefetched = prefetched{}
	}
	r.prefetched[&raw[0]] = v
}

// childTree is the prune tree the scan cuts the observed children of gvk
// with when they decode into into's type, so that a lookup cuts them the
// same when the scan did not; nil when p names no such kind.
func (p *Prefetch) childTree(gvk schema.GroupVersionKind, into any) *pruneNode {
	if p == nil {
		return nil
	}
	var buf typeKeyBuffer
	kind, ok := p.children[string(appendTypeKey(buf[:0], gvk))]
	if !ok || reflect.TypeOf(into) != reflect.PointerTo(kind.t) {
		return nil
	}
	return kind.tree
}

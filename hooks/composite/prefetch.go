package composite

import (
	"encoding/json"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Prefetch names what a hook decodes from every request it serves: its
// parent's type and the types of the observed children it always reads (a
// StatefulSet). DecodeRequestPrefetching decodes those in the pass that scans
// the request, so their bytes are read once rather than scanned and then
// decoded again; Request.DecodeParent and Request.Observed then hand out the
// value decoded there. Children of other types stay raw until looked up. A
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

// scanDecode decodes the object value dec is at into a new *t with opts,
// and returns it with its raw JSON, a sub-slice of body. It reports false
// when the value is not an object or does not decode, leaving dec unusable:
// the scan then gives up and the request takes the slow path, which gives
// the same answer or the precise error.
func scanDecode(dec *jsontext.Decoder, body []byte, t reflect.Type, opts jsonv2.Options) (json.RawMessage, any, bool) {
	if dec.PeekKind() != '{' {
		return nil, nil, false
	}
	start := valueStart(body, dec)
	v := reflect.New(t).Interface()
	if err := jsonv2.UnmarshalDecode(dec, v, opts); err != nil {
		return nil, nil, false
	}
	end := int(dec.InputOffset())
	return json.RawMessage(body[start:end:end]), v, true
}

// childType is the type the observed children of typeKey decode into, nil
// when they stay raw.
func (p *Prefetch) childType(typeKey string) reflect.Type {
	if p == nil {
		return nil
	}
	return p.children[typeKey]
}

// scanObservedChild is scanChild for a child of a prefetched type: decoded
// as decodeObserved decodes it, kept in req, and refused (the slow path then
// gives checkChildren's error) unless it has a name.
func scanObservedChild(dec *jsontext.Decoder, body []byte, t reflect.Type, req *Request) (json.RawMessage, bool) {
	raw, v, ok := scanDecode(dec, body, t, observedDecodeOptions)
	if !ok {
		return nil, false
	}
	if named, isNamed := v.(interface{ GetName() string }); !isNamed || named.GetName() == "" {
		return nil, false
	}
	req.prefetch(raw, v)
	return raw, true
}

// prefetch keeps v, decoded from raw, for the first lookup of raw.
func (r *Request) prefetch(raw []byte, v any) {
	if r.prefetched == nil {
		r.prefetched = prefetched{}
	}
	r.prefetched[&raw[0]] = v
}

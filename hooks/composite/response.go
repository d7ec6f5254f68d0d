package composite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Response is Metacontroller's CompositeHookResponse.
type Response struct {
	// Status replaces the parent's status wholesale.
	Status json.RawMessage `json:"status"`
	// Children is the full desired set, each child with its identity: any
	// observed child missing here is deleted. On the wire each is its apply
	// JSON.
	Children []Child `json:"children"`
	// ResyncAfterSeconds asks for one more call after this delay, when > 0.
	ResyncAfterSeconds float64 `json:"resyncAfterSeconds,omitempty"`
	// Finalized lets Metacontroller remove its finalizer. Finalize calls only.
	Finalized bool `json:"finalized,omitempty"`

	// arena holds the JSON of Status and Children (NewResponse), until
	// Release gives it back.
	arena *[]byte
}

// NewResponse encodes status and the desired children into a Response.
// Nil children (a builder's "not wanted") are skipped; the rest are encoded with
// EncodeChild and sorted, and a duplicate fails the whole response.
//
// The children's and the status's JSON share one buffer taken from a pool:
// a caller that is done with the response (it has written AppendJSON's
// bytes) may give it back with Release; one that never does leaves it to
// the collector.
func NewResponse(status any, children ...runtime.Object) (*Response, error) {
	arena := responseArenas.Get().(*[]byte)
	buf := (*arena)[:0]
	fail := func(err error) (*Response, error) {
		*arena = buf[:0]
		putArena(arena)
		return nil, err
	}
	encoded := make([]Child, 0, len(children))
	var endsOnStack [8]int
	ends := endsOnStack[:0] // where each child's JSON ends in buf
	for _, child := range children {
		if isNil(child) {
			continue
		}
		c, err := childIdentity(child)
		if err != nil {
			return fail(err)
		}
		if buf, err = appendTyped(buf, child, true); err != nil {
			return fail(fmt.Errorf("cannot encode %s: %w", c.Kind, err))
		}
		encoded = append(encoded, c)
		ends = append(ends, len(buf))
	}
	// buf may have moved while it grew: the children take their JSON from
	// where it is now, each capped at its end so none can grow into the next.
	start := 0
	for i, end := range ends {
		encoded[i].JSON = buf[start:end:end]
		start = end
	}
	if err := SortChildren(encoded); err != nil {
		return fail(err)
	}
	buf, err := appendTyped(buf, status, false)
	if err != nil {
		return fail(fmt.Errorf("cannot encode status: %w", err))
	}
	*arena = buf
	return &Response{Status: buf[start:len(buf):len(buf)], Children: encoded, arena: arena}, nil
}

// Release gives the buffer of the response's JSON back to the pool, for a
// later response to reuse: the response's Status and each child's JSON are
// emptied, and nothing read from them before may be used afterwards. It does
// nothing to a response not made by NewResponse, or made and released.
func (r *Response) Release() {
	if r.arena == nil {
		return
	}
	r.Status = nil
	for i := range r.Children {
		r.Children[i].JSON = nil
	}
	putArena(r.arena)
	r.arena = nil
}

// responseArenas are the buffers of NewResponse's JSON.
var responseArenas = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// putArena pools an arena for the next response, unless it grew past
// maxPooledArena for one of the rare huge ones.
func putArena(arena *[]byte) {
	if cap(*arena) <= maxPooledArena {
		*arena = (*arena)[:0]
		responseArenas.Put(arena)
	}
}

// maxPooledArena bounds the arenas kept in responseArenas.
const maxPooledArena = 1 << 20

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

// AppendJSON appends the response to dst as the bytes json.Marshal(r)
// gives, without json.Marshal's second pass over every child and the status
// (validating and compacting what the encoder wrote compact and valid).
// Children without JSON fail, as in MarshalJSON.
func (r *Response) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"status":`...)
	dst = appendRaw(dst, r.Status)
	dst = append(dst, `,"children":`...)
	if r.Children == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, c := range r.Children {
			if c.JSON == nil {
				return nil, fmt.Errorf("child %s %s has no JSON", c.Kind, c.Name)
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, c.JSON...)
		}
		dst = append(dst, ']')
	}
	if r.ResyncAfterSeconds != 0 {
		seconds, err := json.Marshal(r.ResyncAfterSeconds) // encoding/json's float format
		if err != nil {
			return nil, err
		}
		dst = append(dst, `,"resyncAfterSeconds":`...)
		dst = append(dst, seconds...)
	}
	if r.Finalized {
		dst = append(dst, `,"finalized":true`...)
	}
	return append(dst, '}'), nil
}

func appendRaw(dst []byte, raw json.RawMessage) []byte {
	if raw == nil {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

// MarshalJSON writes the child as its apply JSON.
func (c Child) MarshalJSON() ([]byte, error) {
	if c.JSON == nil {
		return nil, fmt.Errorf("child %s %s has no JSON", c.Kind, c.Name)
	}
	return c.JSON, nil
}

// UnmarshalJSON reads a child of a response body (a test's, render's): the
// object as it is, and its identity from apiVersion, kind and metadata.
func (c *Child) UnmarshalJSON(raw []byte) error {
	var id struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &id); err != nil {
		return err
	}
	*c = Child{APIVersion: id.APIVersion, Kind: id.Kind, Namespace: id.Metadata.Namespace, Name: id.Metadata.Name, JSON: bytes.Clone(raw)}
	return nil
}

// GroupVersionKind is the child's type.
func (c Child) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(c.APIVersion, c.Kind)
}

// TypeKey is the key of the child's type in Request.Children (TypeKey).
func (c Child) TypeKey() string { return TypeKey(c.GroupVersionKind()) }

// isNil reports a nil interface or a typed nil pointer (a builder returning
// (*policyv1.PodDisruptionBudget)(nil) when no PDB is wanted).
func isNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

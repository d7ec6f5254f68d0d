package composite

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the typed decode builds of an object. A prune tree of its Go type
// says what no hook reads; the typed decoder (typeddecode.go) reads that
// and drops it, and where it hands a value to go-json-experiment/json, the
// scanner first copies the value without it. What is left out is still
// read to be JSON, and its names are checked as the rest's (but in
// managedFields, where a name may repeat, as json.RawMessage allows):
//
//   - metadata.managedFields, anywhere: the API server's field ownership,
//     often half of an object's bytes;
//   - the last applied configuration Metacontroller and kubectl keep in an
//     annotation, anywhere: a whole object again in a string (in a
//     Database's StatefulSet, its scripts again; in a parent made with
//     kubectl apply, its spec);
//   - of an observed or related object only: every pod spec but its
//     containers' and init containers' names and images (what
//     kube.TemplateChange compares).
//
// A tree follows encoding/json's member names (jsonMembers), which the
// decoder matches case-sensitively, and never looks inside a value of a type
// that decodes itself (a quantity, a time): that type gets all of it.

// pruneNode is what of one JSON value is kept.
type pruneNode struct {
	drop dropRule
	// members are the nodes of an object's members by name; others the
	// node of every other member (nil: copied whole).
	members map[string]*pruneNode
	others  *pruneNode
	// elements is the node of each element of an array.
	elements *pruneNode
}

// dropRule says whether a member is left out of the copy.
type dropRule uint8

const (
	kept          dropRule = iota // copied, as the node's other fields say
	dropRaw                       // left out, read only to be JSON: a name may repeat inside
	dropChecked                   // left out, read with its names checked
	dropIfAString                 // left out when it is a string, copied when it is not (the decoder then refuses it)
)

var (
	managedFieldsType = reflect.TypeFor[[]metav1.ManagedFieldsEntry]()
	objectMetaType    = reflect.TypeFor[metav1.ObjectMeta]()
	podSpecType       = reflect.TypeFor[corev1.PodSpec]()

	keepWhole = &pruneNode{}

	// observedPodSpec is a pod spec as hooks read it.
	observedPodSpec = func() *pruneNode {
		containers := &pruneNode{elements: &pruneNode{
			members: map[string]*pruneNode{"name": keepWhole, "image": keepWhole},
			others:  &pruneNode{drop: dropChecked},
		}}
		return &pruneNode{
			members: map[string]*pruneNode{"containers": containers, "initContainers": containers},
			others:  &pruneNode{drop: dropChecked},
		}
	}()

	// lastAppliedAnnotations leaves out the last applied configurations.
	lastAppliedAnnotations = &pruneNode{members: map[string]*pruneNode{
		"metacontroller.k8s.io/last-applied-configuration": {drop: dropIfAString},
		"kubectl.kubernetes.io/last-applied-configuration": {drop: dropIfAString},
	}}
)

// pruneKey names a cached prune tree: the Go type, and whether the object
// is an observed or related one.
type pruneKey struct {
	t        reflect.Type
	observed bool
}

var pruneTrees sync.Map // pruneKey -> *pruneNode; nil: nothing to leave out

// pruneTreeOf is the prune tree of a value of type t, built on first use.
func pruneTreeOf(t reflect.Type, observed bool) *pruneNode {
	key := pruneKey{t, observed}
	if tree, ok := pruneTrees.Load(key); ok {
		return tree.(*pruneNode)
	}
	tree := buildPruneTree(t, observed, map[reflect.Type]bool{})
	pruneTrees.Store(key, tree)
	return tree
}

// buildPruneTree is the prune tree of type t, nil when nothing in it is left
// out; visiting holds the structs being built (a recursive type is not
// followed into itself).
func buildPruneTree(t reflect.Type, observed bool, visiting map[reflect.Type]bool) *pruneNode {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == managedFieldsType:
		return &pruneNode{drop: dropRaw}
	case observed && t == podSpecType:
		return observedPodSpec
	case decodesItself(t):
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if visiting[t] {
			return nil
		}
		visiting[t] = true
		defer delete(visiting, t)
		members, ok := jsonMembers(t)
		if !ok {
			return nil
		}
		node := &pruneNode{members: map[string]*pruneNode{}}
		for _, m := range members {
			if child := buildPruneTree(m.typ, observed, visiting); child != nil {
				node.members[m.name] = child
			}
		}
		if t == objectMetaType {
			node.members["annotations"] = lastAppliedAnnotations
		}
		if len(node.members) == 0 {
			return nil
		}
		return node
	case reflect.Slice, reflect.Array:
		if child := buildPruneTree(t.Elem(), observed, visiting); child != nil {
			return &pruneNode{elements: child}
		}
	case reflect.Map:
		if child := buildPruneTree(t.Elem(), observed, visiting); child != nil {
			return &pruneNode{others: child}
		}
	}
	return nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	unmarshalerFromType = reflect.TypeFor[jsonv2.UnmarshalerFrom]()
)

// decodesItself reports a type whose values the decoder hands whole to a
// method of theirs.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, method := range []reflect.Type{unmarshalerType, textUnmarshalerType, unmarshalerFromType} {
		if t.Implements(method) || pt.Implements(method) {
			return true
		}
	}
	return false
}

// prune appends to dst the value that begins at i as node leaves it (nil:
// whole), and returns the offset after the value. Every object in the value
// has its names checked, but inside what node drops raw.
func (s *scanner) prune(dst []byte, i int, node *pruneNode) ([]byte, int, bool) {
	if node != nil && i < len(s.data) {
		switch {
		case (node.members != nil || node.others != nil) && s.data[i] == '{':
			return s.pruneObject(dst, i, node)
		case node.elements != nil && s.data[i] == '[':
			dst = append(dst, '[')
			first := true
			end, ok := s.elements(i, func(i int) (int, bool) {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				var end int
				var ok bool
				dst, end, ok = s.prune(dst, i, node.elements)
				return end, ok
			})
			return append(dst, ']'), end, ok
		}
	}
	end, ok := s.value(i, true)
	return append(dst, s.data[i:end]...), end, ok
}

// pruneObject is prune of an object.
func (s *scanner) pruneObject(dst []byte, i int, node *pruneNode) ([]byte, int, bool) {
	dst = append(dst, '{')
	first := true
	end, ok := s.members(i, func(name string, rawName []byte, at int) (int, bool) {
		child, listed := node.members[name]
		if !listed {
			child = node.others
		}
		if child != nil {
			switch child.drop {
			case dropRaw:
				return s.value(at, false)
			case dropChecked:
				return s.value(at, true)
			case dropIfAString:
				if s.data[at] == '"' {
					end, _, ok := s.str(at)
					return end, ok
				}
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(append(dst, rawName...), ':')
		var end int
		var ok bool
		dst, end, ok = s.prune(dst, at, child)
		return end, ok
	})
	return append(dst, '}'), end, ok
}

package composite

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the typed decode builds of an object. A prune tree of its Go type
// says what no hook reads; the typed decoder (typeddecode.go) reads that
// and drops it, never building it. What is left out is still
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
//     kube.TemplateChange compares);
//   - of an observed child a hook's Prefetch names with ObservedReads:
//     every member but those it reads (readsTree).
//
// A tree follows encoding/json's member names (jsonMembers), which the
// decoder matches case-sensitively, and never looks inside a value of a type
// that decodes itself (a quantity, a time): that type gets all of it.

// pruneNode is what of one JSON value is kept.
type pruneNode struct {
	drop dropRule
	// members are the nodes of an object's members by name; others the
	// node of every other member (nil: kept whole).
	members map[string]*pruneNode
	others  *pruneNode
	// elements is the node of each element of an array.
	elements *pruneNode
}

// dropRule says whether a member is left out of the decoded value.
type dropRule uint8

const (
	kept          dropRule = iota // decoded, as the node's other fields say
	dropRaw                       // left out, read only to be JSON: a name may repeat inside
	dropChecked                   // left out, read with its names checked
	dropIfAString                 // left out when it is a string, decoded when it is not (and then refused where a string is wanted)
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

// readsTree is the prune tree of an observed t of which only the members
// at paths (dotted JSON member names) are read (ObservedReads): each of
// those is cut as t's observed tree cuts it, what that tree drops unread
// (managedFields) stays so, and every other member is dropped, its names
// checked.
func readsTree(t reflect.Type, paths []string) (*pruneNode, error) {
	split := make([][]string, len(paths))
	for n, path := range paths {
		split[n] = strings.Split(path, ".")
	}
	return narrowed(pruneTreeOf(t, true), t, split)
}

// narrowed is base, the tree of struct type t, keeping only the members the
// paths name (a path ending at a member keeps all base keeps of it).
func narrowed(base *pruneNode, t reflect.Type, paths [][]string) (*pruneNode, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s has no members to read by name", t)
	}
	members, ok := jsonMembers(t)
	if !ok {
		return nil, fmt.Errorf("%s has no members to read by name", t)
	}
	node := &pruneNode{members: map[string]*pruneNode{}, others: &pruneNode{drop: dropChecked}}
	if base != nil {
		for name, child := range base.members {
			if child.dropRule() != kept {
				node.members[name] = child
			}
		}
	}
	below := map[string][][]string{} // the rest of each path by its first member
	whole := map[string]bool{}
	for _, path := range paths {
		if len(path) == 1 {
			whole[path[0]] = true
		} else {
			below[path[0]] = append(below[path[0]], path[1:])
		}
	}
	for _, m := range members {
		child := base.memberNode(m.name)
		switch {
		case whole[m.name]:
			node.members[m.name] = child
		case below[m.name] != nil:
			var err error
			if node.members[m.name], err = narrowed(child, m.typ, below[m.name]); err != nil {
				return nil, fmt.Errorf("%s: %w", m.name, err)
			}
		}
		delete(whole, m.name)
		delete(below, m.name)
	}
	for name := range whole {
		return nil, fmt.Errorf("%s has no member %q", t, name)
	}
	for name := range below {
		return nil, fmt.Errorf("%s has no member %q", t, name)
	}
	return node, nil
}

// memberNode is the node of an object member's value by its name (nil:
// kept whole).
func (node *pruneNode) memberNode(name string) *pruneNode {
	if node == nil {
		return nil
	}
	if child, listed := node.members[name]; listed {
		return child
	}
	return node.others
}

// dropRule is the node's drop rule; kept for nil.
func (node *pruneNode) dropRule() dropRule {
	if node == nil {
		return kept
	}
	return node.drop
}

// dropped reads the member value at i when drop leaves it out; dropped
// false: it is kept, and nothing was read.
func (s *scanner) dropped(i int, drop dropRule) (end int, dropped, ok bool) {
	switch drop {
	case dropRaw:
		if end, read := s.skips.of(i); read {
			return end, true, true
		}
		end, ok = s.value(i, false)
		return end, true, ok
	case dropChecked:
		end, ok = s.value(i, true)
		return end, true, ok
	case dropIfAString:
		if s.data[i] == '"' {
			end, _, ok = s.str(i)
			return end, true, ok
		}
	}
	return i, false, true
}

package composite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// The hot path of decoding. A request is read once by a scanner
// (jsonscan.go), which takes the JSON encoding/json takes and refuses a name
// repeated in an object it reads; the controller object and the children
// stay sub-slices of the body. An object is decoded typed in the same
// reading (typeddecode.go), with encoding/json's semantics made
// case-sensitive (the rules of sigs.k8s.io/json, which the API server
// uses), leaving out what no hook reads (prune.go): managedFields and the
// last applied configuration, and of observed objects most of every pod
// spec. Only when this fails does the caller decode again with
// sigs.k8s.io/json, so that every error is the one the API server's
// decoder gives, and no input that decoder refuses is accepted, but what
// is left out, which is only checked to be JSON (a wrong type there is
// taken, and inside managedFields a repeated name). That decoder refuses
// a key given twice only where it is a struct field or a map key; the
// slow path then looks for the others where the fast path does
// (repeatedRequestName, repeatedObjectName), so that both paths refuse
// the same: one request gets one answer whichever path reads it.

// decodeFast decodes the object raw into into, leaving into zeroed when it
// fails.
func decodeFast(raw []byte, into any) bool {
	return decodePruned(raw, into, false)
}

// decodePruned decodes the object raw into into, a pointer to a zero value
// (observed: cut as an observed object is), leaving it zeroed when it fails.
// A value that is not zero is refused: encoding/json merges into it, and
// the slow decoder does that.
func decodePruned(raw []byte, into any, observed bool) bool {
	return decodeWithTree(raw, into, pruneTreeOf(reflect.TypeOf(into).Elem(), observed))
}

// decodeWithTree is decodePruned cut as tree says.
func decodeWithTree(raw []byte, into any, tree *pruneNode) bool {
	s := newScanner(raw)
	defer s.release()
	return s.decodeWhole(into, tree)
}

// decodeWhole is decodeWithTree of s's data, on s (which may hold the
// skips of a cost walk of it).
func (s *scanner) decodeWhole(into any, tree *pruneNode) bool {
	if !reflect.ValueOf(into).Elem().IsZero() {
		return false // encoding/json merges into what is there: decodeSlow does it
	}
	raw := s.data
	start := s.ws(0)
	end, ok := s.decode(start, into, tree)
	if !ok || s.ws(end) != len(raw) {
		reflect.ValueOf(into).Elem().SetZero()
		return false
	}
	return true
}

// decode decodes the value that begins at i into into (a pointer to a zero
// value), leaving out what tree leaves out (typeddecode.go), and returns the
// offset after the value. When it fails, into may hold part of the value.
func (s *scanner) decode(i int, into any, tree *pruneNode) (int, bool) {
	v := reflect.ValueOf(into).Elem()
	return s.decodeTyped(i, v, decoderOf(v.Type(), tree))
}

// scanRequest reads a hook request body in one pass without copying: Parent,
// Controller and every child are sub-slices of body. It reports false for
// anything it does not read exactly as encoding/json reads it into Request
// (a field of the wrong type, a name repeated in an object it reads,
// malformed JSON); the caller then decodes the slow way for the precise
// error. The values it keeps raw or never reads are only checked to be JSON
// (a name may repeat inside, as the slow decoder's json.RawMessage allows),
// but for a child's own members and metadata, which it reads for the name.
//
// With a Prefetch, the parent and the observed children of its types are
// decoded in this pass (scanner.decode) and kept in the Request for the hook,
// each once its cost is taken from budget; one that does not fit ends the
// scan with the refusal noted in budget (the slow path would take more).
func scanRequest(body []byte, p *Prefetch, budget *costBudget) (*Request, bool) {
	if len(body) == 0 || body[0] != '{' {
		return &Request{budget: budget}, false
	}
	s := newScanner(body)
	defer s.release()
	req := &Request{budget: budget}
	end, ok := s.members(0, func(name string, _ []byte, at int) (end int, ok bool) {
		switch name {
		case "parent":
			if p != nil && p.parent.t != nil && body[at] == '{' {
				var parent any
				if req.Parent, parent, end, ok = s.decodeNew(at, p.parent.t, p.parent.tree, budget); ok {
					req.prefetch(req.Parent, parent)
				} else if budget.refused != nil {
					budget.refuse(nil, "parent")
				} else {
					req.decline(body[at:])
				}
				return end, ok
			}
			req.Parent, end, ok = s.raw(at)
		case "controller":
			req.Controller, end, ok = s.raw(at)
		case "children":
			req.Children, end, ok = s.childMap(at, "children", p, req)
		case "related":
			req.Related, end, ok = s.childMap(at, "related", nil, req)
		case "finalizing":
			switch body[at] {
			case 't':
				req.Finalizing = true
				return s.literal(at, "true")
			case 'f':
				return s.literal(at, "false")
			case 'n':
				return s.literal(at, "null")
			}
			return at, false
		default:
			return s.value(at, false)
		}
		return end, ok
	})
	// Given up, req holds what was read so far (for decodeRequestSlow).
	return req, ok && s.ws(end) == len(body)
}

// raw reads the value that begins at i, only checking it to be JSON, and
// returns it, a sub-slice of the data.
func (s *scanner) raw(i int) (json.RawMessage, int, bool) {
	end, ok := s.value(i, false)
	return json.RawMessage(s.data[i:end:end]), end, ok
}

// childMap reads {"<type key>": {"<name>": object, ...}, ...} or null at i,
// decoding the objects of p's types into req. Type keys and names are
// copied: the body is given back once the request is answered.
func (s *scanner) childMap(i int, section string, p *Prefetch, req *Request) (ChildMap, int, bool) {
	switch s.data[i] {
	case 'n':
		end, ok := s.literal(i, "null")
		return nil, end, ok
	case '{':
	default:
		return nil, i, false
	}
	m := ChildMap{}
	end, ok := s.members(i, func(typeKey string, _ []byte, at int) (int, bool) {
		typeKey = strings.Clone(typeKey)
		switch s.data[at] {
		case 'n':
			m[typeKey] = nil
			return s.literal(at, "null")
		case '{':
		default:
			return at, false
		}
		objects := map[string]json.RawMessage{}
		m[typeKey] = objects
		kind := p.childKind(typeKey)
		return s.members(at, func(name string, _ []byte, at int) (end int, ok bool) {
			path := func() string { return fmt.Sprintf("%s[%q][%q]", section, typeKey, name) }
			if !req.budget.take(childCost) {
				req.budget.refuse(nil, path())
				return at, false
			}
			var value json.RawMessage
			if kind.t != nil {
				value, end, ok = s.observedChild(at, kind, req)
				if !ok && req.budget.refused != nil {
					req.budget.refuse(nil, path())
				}
			} else {
				value, end, ok = s.child(at)
			}
			objects[strings.Clone(name)] = value
			return end, ok
		})
	})
	return m, end, ok
}

// child reads one observed object, a sub-slice of the data, and reports
// false (leaving the request to the slow decoder and checkChildren's precise
// error) unless it is an object whose metadata is an object whose name is a
// non-empty string. Its own names and its metadata's are checked; its
// values are only checked to be JSON.
func (s *scanner) child(i int) (json.RawMessage, int, bool) {
	if s.data[i] != '{' {
		return nil, i, false
	}
	named := false
	end, ok := s.members(i, func(name string, _ []byte, at int) (int, bool) {
		if name != "metadata" || s.data[at] != '{' {
			return s.value(at, false)
		}
		return s.members(at, func(name string, _ []byte, at int) (int, bool) {
			end, ok := s.value(at, false)
			if name == "name" {
				named = ok && s.data[at] == '"' && end-at > len(`""`)
			}
			return end, ok
		})
	})
	return json.RawMessage(s.data[i:end:end]), end, ok && named
}

// The names the slow path checks where sigs.k8s.io/json does not: it
// refuses a key given twice only where the key is a struct field or a map
// key, and the scan and the typed decoder refuse every one in what they
// check names in. Both run on the slow path only, after the slow decoder
// took the text: it is JSON, within the depth limit.

// repeatedRequestName is the path of the first name given twice in a
// request body where the scan checks names (scanRequest): the request
// object, children and related, each type's objects, each child's own
// members and its metadata's; "" when there is none.
func repeatedRequestName(body []byte) string {
	s := newScanner(body)
	defer s.release()
	_, field, _ := s.firstRepeated(s.ws(0), func(name string) string { return (&jsonPath{name: name, index: -1}).String() }, func(section string, at int) (int, string, bool) {
		if section != "children" && section != "related" {
			return s.skipValue(at)
		}
		return s.firstRepeated(at, func(typeKey string) string { return section + "[" + Quote(typeKey) + "]" }, func(typeKey string, at int) (int, string, bool) {
			return s.firstRepeated(at, func(key string) string { return ChildPath(section, typeKey, key) }, func(key string, at int) (int, string, bool) {
				child := ChildPath(section, typeKey, key)
				return s.firstRepeated(at, func(name string) string { return child + "." + name }, func(name string, at int) (int, string, bool) {
					if name != "metadata" {
						return s.skipValue(at)
					}
					return s.firstRepeated(at, func(name string) string { return child + ".metadata." + name }, nil)
				})
			})
		})
	})
	return field
}

// repeatedObjectName is the path of the first name given twice in the
// object raw where the typed decoder cut as tree checks names: everywhere
// but in what tree drops unread (managedFields).
func repeatedObjectName(raw []byte, tree *pruneNode) (string, bool) {
	s := newScanner(raw)
	defer s.release()
	_, field, _ := s.repeatedIn(s.ws(0), tree, nil)
	return field, field != ""
}

// repeatedIn reads the value at i, names checked as node says
// (repeatedObjectName), and returns the path under path of the first name
// given twice in it ("": none). The path is built only for that name:
// built for every member, a long name above many members cost their
// product (a 141 KB body, a 100 KB name above 4,000 members, allocated
// 427 MB).
func (s *scanner) repeatedIn(i int, node *pruneNode, path *jsonPath) (int, string, bool) {
	if node.dropRule() == dropRaw {
		return s.skipValue(i)
	}
	switch s.data[i] {
	case '{':
		return s.firstRepeated(i, func(name string) string { return path.member(name).String() }, func(name string, at int) (int, string, bool) {
			return s.repeatedIn(at, node.memberNode(name), path.member(name))
		})
	case '[':
		var elements *pruneNode
		if node != nil {
			elements = node.elements
		}
		var field string
		n := 0
		end, ok := s.elements(i, func(at int) (int, bool) {
			end, found, ok := s.repeatedIn(at, elements, path.element(n))
			n++
			if found != "" {
				field = found
				return end, false
			}
			return end, ok
		})
		return end, field, ok
	}
	return s.skipValue(i)
}

// jsonPath is a path in a JSON value, built from its end up only when it
// is named: a member name (index < 0) or an element index under up. nil
// is the root.
type jsonPath struct {
	up    *jsonPath
	name  string
	index int
}

func (p *jsonPath) member(name string) *jsonPath { return &jsonPath{up: p, name: name, index: -1} }
func (p *jsonPath) element(index int) *jsonPath  { return &jsonPath{up: p, index: index} }

// String is the path as errors name it, "spec.containers[0].name", a name
// longer than MaxQuoted quoted by its prefix (Quote).
func (p *jsonPath) String() string {
	if p == nil {
		return ""
	}
	up := p.up.String()
	if p.index >= 0 {
		return up + "[" + strconv.Itoa(p.index) + "]"
	}
	name := p.name
	if len(name) > MaxQuoted || name == "" {
		name = Quote(name) // "" named as such: an empty path means "none"
	}
	if up == "" {
		return name
	}
	return up + "." + name
}

// firstRepeated reads the object at i (any other value is only read) and
// returns the path of its first name given twice (field(name)), or the
// first path inner returns for a member's value (inner nil: the values are
// only read).
func (s *scanner) firstRepeated(i int, field func(name string) string, inner func(name string, at int) (int, string, bool)) (int, string, bool) {
	if s.data[i] != '{' {
		return s.skipValue(i)
	}
	set := nameSet{start: len(s.names)}
	var found string
	end, ok := s.eachMember(i, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
		name, ok := s.name(nameAt, nameEnd, plain)
		if !ok {
			return nameAt, false
		}
		if !set.add(s, name) {
			found = field(name)
			return nameAt, false
		}
		if inner == nil {
			return s.skip(at)
		}
		end, inside, ok := inner(name, at)
		if inside != "" {
			found = inside
			return end, false
		}
		return end, ok
	})
	s.names = s.names[:set.start]
	return end, found, ok
}

// skipValue is skip, with no name found.
func (s *scanner) skipValue(i int) (int, string, bool) {
	end, ok := s.skip(i)
	return end, "", ok
}

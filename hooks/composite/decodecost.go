package composite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// The cost bound of decoding. A few bytes of JSON can make many times their
// size in Go values: `{}` is 3 bytes and a corev1.Container 408, so an
// 8 MiB list of them in an observed StatefulSet took 6.5 GB to decode, and
// 600,000 labels on a parent 151 MB (issue 30). Before each decode of an
// object, a cost walk (chargeAt) reads it alongside its Go type's costNode
// without building anything and estimates what decoding it allocates: the
// pointees, slice elements (twice, for growth) and map entries (twice, and
// at least a table's group) of its type, the strings, and for every value
// (also where the type has no field for it, since the slow path's quantity
// check reads the whole object as interfaces) a generic charge. For the
// typed decoder it leaves out what the prune tree leaves out (charged as
// its text) and hands the decoder the ends of the long values it skipped,
// so those are read once; for the slow decoder, which builds everything,
// it charges everything. Everything decoded from one request draws on one
// budget, costPerByte times the body plus costSlack; a decode that does
// not fit is refused with *CostError (413) before it allocates.
// TestDecodeCostOfCapturedRequests holds the estimate of every captured
// object at or above what decoding it allocates, less a copy of its text;
// TestDecodeCostBoundsAllocation (server) holds what a whole request
// allocates, for costly shapes, within the budget and three copies of the
// body.

// DecodeBudgetPerByte and DecodeBudgetSlack size the decode budget of a
// request of n body bytes: DecodeBudgetPerByte × n + DecodeBudgetSlack. The
// server's memory budget counts on it.
const (
	DecodeBudgetPerByte = costPerByte
	DecodeBudgetSlack   = costSlack
)

const (
	// costPerByte and costSlack size a request's budget. The 31 captured
	// requests estimate at 2.4 to 3.7 times their size
	// (TestDecodeCostOfCapturedRequests): a real object never comes near.
	costPerByte = 4
	costSlack   = 1 << 20
	// valueCost is charged for every JSON value: an interface holding it
	// (16 bytes) and its place in a map or slice (16 more).
	valueCost = 32
	// objectCost and arrayCost are the map and slice a generic object or
	// array becomes.
	objectCost = 48
	arrayCost  = 24
	// childCost is charged for every observed and related object, decoded
	// or not: what a hook does with one beside decoding it (its key, a
	// look at its labels, its entries in the hook's own maps); 300,000
	// tiny related Pods would otherwise fit. At 2048 the Database hook
	// allocated 4.1 KB per tiny related Pod, 1.17 times the estimate.
	childCost = 4096
	// escapedNameCost is what unquoting an escaped member name with
	// encoding/json allocates besides the string (measured: 192 bytes).
	escapedNameCost = 256
	// seenKeyCost is a key's entry in the slow decoder's set of the keys
	// of one map it decodes, grown from empty: twice a map[string]struct{}
	// entry (review of issue 30: the set and the growth were not charged,
	// and 3,900 labels and a key given twice took 1.55 times the bound).
	seenKeyCost = 2 * 2 * (16 + 8)
	// mapGroup is the slots of the smallest table a non-empty Go map
	// allocates (a swiss-table group).
	mapGroup = 8
)

// rawObjectsType is a ChildMap's objects of one type.
var rawObjectsType = reflect.TypeFor[map[string]json.RawMessage]()

// costBudget is what the values decoded from one request may still take.
type costBudget struct {
	left, limit int64
	body        int
	// Of the last walk: its slice elements' charge (sigs.k8s.io/json
	// grows slices by appending, to about twice what the walk counts),
	// and whether the text was not JSON (then no decoder builds anything:
	// encoding/json checks the whole text first).
	grown   int64
	invalid bool
	// refused is the scan's first refusal, placed once it names its
	// object: the request is refused with it, not read again.
	refused *CostError
	placed  bool
}

// refuse notes the scan's refusal err (nil: the budget ran out between
// objects) inside the object at path, unless one is noted already.
func (b *costBudget) refuse(err error, path string) {
	if b.placed {
		return
	}
	if b.refused == nil {
		costErr, ok := err.(*CostError)
		if !ok {
			costErr = &CostError{Limit: b.limit, Body: b.body}
		}
		b.refused = costErr
	}
	b.refused.Within(path)
	b.placed = true
}

// takeSlow takes what the slow decoder builds beyond the last walk's
// estimate: its slices' growth. False, with the CostError, once spent.
func (b *costBudget) takeSlow() error {
	if b.invalid || b.take(b.grown) {
		return nil
	}
	return &CostError{Limit: b.limit, Body: b.body}
}

// newCostBudget is the budget of a request (or an object): of its bytes
// but white space, which costs nothing to decode (an 8 MiB body of spaces
// and a costly value would otherwise buy 33 MiB for the value). Spaces in
// strings are not counted either: a string charges its text, so only a
// string more than three quarters spaces could be refused for it.
func newCostBudget(body []byte) *costBudget {
	n := len(body)
	for _, c := range []byte{' ', '\n', '\t', '\r'} {
		n -= bytes.Count(body, []byte{c})
	}
	limit := costPerByte*int64(n) + costSlack
	return &costBudget{left: limit, limit: limit, body: n}
}

// CostError refuses a request whose decoding would take more memory than
// its budget: the HTTP layer answers 413.
type CostError struct {
	Field string // JSON path where the budget ran out; "" at the top
	Limit int64  // the request's budget, bytes
	Body  int    // the body's size, bytes, white space not counted
}

// Within names the field of e as a path inside outer (a child's or the
// parent's): e's own path begins with a name, an index or nothing.
func (e *CostError) Within(outer string) *CostError {
	switch {
	case e.Field == "":
		e.Field = outer
	case strings.HasPrefix(e.Field, "["):
		e.Field = outer + e.Field
	default:
		e.Field = outer + "." + e.Field
	}
	return e
}

func (e *CostError) Error() string {
	reason := fmt.Sprintf("decoding would take more than its budget of %d bytes (%d x the %d bytes but white space + %d of the request, or of the object decoded on its own): too many values for their size",
		e.Limit, costPerByte, e.Body, costSlack)
	if e.Field == "" {
		return reason
	}
	return bounded(e.Field, maxField) + ": " + reason
}

// take takes n from b (the scan's own charges, as costOf makes them);
// false once it is spent.
func (b *costBudget) take(n int64) bool {
	b.left -= n
	return b.left >= 0
}

// charge takes the estimated cost of decoding raw into a t, leaving out
// what tree does (nil: nothing), from b (nil: a budget of raw's own), or
// fails with *CostError naming where it ran out; it returns what it took.
// Text that is not JSON is charged as far as it reads: the decoder that
// follows gives its error.
func (b *costBudget) charge(raw []byte, t reflect.Type, tree *pruneNode) (int64, error) {
	if b == nil {
		b = newCostBudget(raw)
	}
	s := newScanner(raw)
	defer s.release()
	left := b.left
	err := b.chargeAt(s, s.ws(0), t, tree)
	return left - b.left, err
}

// chargeAt is charge for the value at i of s's data (the scan of a
// request, which decodes its parent and prefetched children in place).
func (b *costBudget) chargeAt(s *scanner, i int, t reflect.Type, tree *pruneNode) error {
	if _, _, err := b.chargeValue(s, i, t, tree); err != nil {
		return err // not a nil *CostError in an error
	}
	return nil
}

// chargeValue is chargeAt that also returns the offset after the value,
// and false where its text is not JSON.
func (b *costBudget) chargeValue(s *scanner, i int, t reflect.Type, tree *pruneNode) (int, bool, *CostError) {
	if i >= len(s.data) {
		return i, false, nil
	}
	depth := s.depth
	c := coster{s: s, left: b.left}
	ok, end := false, i
	if c.take(int64(t.Size())) { // the value itself, which the caller makes
		end, ok = c.value(i, costNodeOf(t), tree)
	}
	s.depth = depth
	b.grown, b.invalid = c.grown, !ok && !c.over
	if c.over {
		return i, false, &CostError{Field: c.path(), Limit: b.limit, Body: b.body}
	}
	b.left = c.left
	return end, ok, nil
}

// chargeRequest takes from b, in the body's order, what the scan
// (scanRequest) takes as it reads body with p: the parent and the
// observed children of p's kinds as their types cut by their trees, and
// childCost for every observed and related child. It builds nothing and
// checks no name; where the text stops being JSON it stops, having
// charged what came before (the decoder then gives the precise error).
// So a request is refused for its cost at one place whichever path reads
// it: the scan refuses there, and the slow path refuses before it
// decodes anything (issue 30: the slow path charged the parent and the
// children only as a hook read them, after every other check, and
// answered 400 where the scan answered 413).
func chargeRequest(body []byte, p *Prefetch, b *costBudget) *CostError {
	s := newScanner(body)
	defer s.release()
	i := s.ws(0)
	if i >= len(body) || body[i] != '{' {
		return nil
	}
	var refused *CostError
	s.eachMember(i, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
		name, ok := s.name(nameAt, nameEnd, plain)
		if !ok {
			return nameAt, false
		}
		switch {
		case name == "parent" && p != nil && p.parent.t != nil && body[at] == '{':
			end, ok, err := b.chargeValue(s, at, p.parent.t, p.parent.tree)
			if err != nil {
				refused = err.Within("parent")
			}
			return end, ok
		case (name == "children" || name == "related") && body[at] == '{':
			kinds := p
			if name == "related" {
				kinds = nil // the scan decodes no related object
			}
			end, ok, err := b.chargeChildren(s, at, name, kinds)
			refused = err
			return end, ok
		}
		return s.value(at, false)
	})
	return refused
}

// chargeChildren is chargeRequest for the child map at i of section.
func (b *costBudget) chargeChildren(s *scanner, i int, section string, p *Prefetch) (int, bool, *CostError) {
	var refused *CostError
	end, ok := s.eachMember(i, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
		typeKey, ok := s.name(nameAt, nameEnd, plain)
		if !ok {
			return nameAt, false
		}
		if s.data[at] != '{' {
			return s.value(at, false)
		}
		kind := p.childKind(typeKey)
		return s.eachMember(at, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
			name, ok := s.name(nameAt, nameEnd, plain)
			if !ok {
				return nameAt, false
			}
			path := func() string { return fmt.Sprintf("%s[%q][%q]", section, typeKey, name) }
			if !b.take(childCost) {
				refused = (&CostError{Limit: b.limit, Body: b.body}).Within(path())
				return at, false
			}
			if kind.t == nil || s.data[at] != '{' {
				return s.value(at, false)
			}
			end, ok, err := b.chargeValue(s, at, kind.t, kind.tree)
			if err != nil {
				refused = err.Within(path())
			}
			return end, ok
		})
	})
	return end, ok, refused
}

// coster estimates the cost of one value.
type coster struct {
	s     *scanner
	left  int64
	over  bool
	rev   []string // the path where it ran out, innermost first
	grown int64    // the slice elements' charge
}

// take charges n, reporting false once the budget is spent.
func (c *coster) take(n int64) bool {
	c.left -= n
	if c.left < 0 {
		c.over = true
	}
	return !c.over
}

// path is where the budget ran out, as a JSON path.
func (c *coster) path() string { return reversedPath(c.rev) }

// reversedPath joins a path's steps, given innermost first ("name" or
// "[key]"), into a JSON path.
func reversedPath(rev []string) string {
	var b strings.Builder
	for k := len(rev) - 1; k >= 0; k-- {
		p := rev[k]
		if !strings.HasPrefix(p, "[") && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// costNode is how a Go type is charged, worked out once per type
// (costNodeOf): the walk then makes no reflect call. A nil node is an
// interface, charged generically.
type costNode struct {
	kind    costKind
	pointee int64                // pointer types: the pointees' sizes, charged unless null
	pointer bool                 // the value is a pointer (null is then nothing more)
	fields  map[string]*costNode // costStruct: by JSON member name
	elem    *costNode            // costMap, costList: the element
	each    int64                // costMap: an entry; costList: an element
	// children: a ChildMap's objects of one type, charged childCost
	// each and no table (the scan keeps them in a map of its own).
	children bool
}

type costKind uint8

const (
	costScalar costKind = iota // a string, number, literal, or a mismatch: generically
	costItself                 // a type that decodes itself: its text
	costStruct
	costMap
	costList
)

// costNodes caches costNodeOf; costNodesMu serializes building.
var (
	costNodes   sync.Map // reflect.Type -> *costNode
	costNodesMu sync.Mutex
)

// costNodeOf is the costNode of t (nil for an interface).
func costNodeOf(t reflect.Type) *costNode {
	if n, ok := costNodes.Load(t); ok {
		return n.(*costNode)
	}
	costNodesMu.Lock()
	defer costNodesMu.Unlock()
	building := map[reflect.Type]*costNode{}
	n := buildCostNode(t, building)
	for bt, bn := range building {
		costNodes.Store(bt, bn)
	}
	return n
}

func buildCostNode(t reflect.Type, building map[reflect.Type]*costNode) *costNode {
	if t.Kind() == reflect.Interface {
		return nil
	}
	if n, ok := costNodes.Load(t); ok {
		return n.(*costNode)
	}
	if n, ok := building[t]; ok {
		return n // a type that holds itself: filled in below
	}
	n := &costNode{}
	building[t] = n
	base := t
	for base.Kind() == reflect.Pointer {
		n.pointer = true
		n.pointee += int64(base.Elem().Size())
		base = base.Elem()
	}
	switch {
	case decodesItself(base):
		n.kind = costItself
	case base.Kind() == reflect.Interface:
		n.kind = costScalar // a pointer to an interface: the pointee, then generically
	case base.Kind() == reflect.Struct:
		n.kind = costStruct
		n.fields = map[string]*costNode{}
		for name, ft := range fieldsOf(base) {
			n.fields[name] = buildCostNode(ft, building)
		}
	case base.Kind() == reflect.Map:
		n.kind = costMap
		n.elem = buildCostNode(base.Elem(), building)
		n.each = 2 * int64(base.Key().Size()+base.Elem().Size()+8)
		if base == rawObjectsType {
			n.each, n.children = childCost, true
		}
	case base.Kind() == reflect.Slice && base.Elem().Kind() == reflect.Uint8:
		n.kind = costScalar // []byte: base64 in a string, charged as a string
	case base.Kind() == reflect.Slice || base.Kind() == reflect.Array:
		n.kind = costList
		n.elem = buildCostNode(base.Elem(), building)
		n.each = int64(base.Elem().Size())
		if base.Kind() == reflect.Slice {
			n.each *= 2
		}
	}
	return n
}

// value charges the value at i decoded into n's type (nil: into an
// interface) and returns the offset after it; false when the budget is
// spent or the text is not JSON.
func (c *coster) value(i int, n *costNode, tree *pruneNode) (int, bool) {
	data := c.s.data
	if i >= len(data) {
		return i, false
	}
	if tree != nil && (tree.drop == dropRaw || tree.drop == dropChecked || tree.drop == dropIfAString && data[i] == '"') {
		// Left out: only read, its names perhaps checked.
		end, ok := c.s.value(i, false)
		if ok && tree.drop == dropRaw && end-i >= skipLen {
			c.s.skips.add(i, end)
		}
		return end, ok && c.take(int64(end-i))
	}
	if !c.take(valueCost) {
		return i, false
	}
	if n == nil {
		return c.generic(i)
	}
	if n.pointer {
		if data[i] == 'n' {
			return c.s.literal(i, "null")
		}
		if !c.take(n.pointee) {
			return i, false
		}
	}
	switch n.kind {
	case costItself:
		end, ok := c.s.value(i, false)
		return end, ok && c.take(int64(end-i)) // its text, kept or parsed
	case costStruct:
		if data[i] == '{' {
			return c.members(i, n, 0, tree)
		}
	case costMap:
		if data[i] == '{' {
			return c.members(i, n, n.each, tree)
		}
	case costList:
		if data[i] == '[' {
			var elements *pruneNode
			if tree != nil {
				elements = tree.elements
			}
			return c.elements(i, n.elem, n.each, elements)
		}
	}
	// A string, a number, a literal, or a value of another type than the
	// node's (the decoder refuses it; the slow path's checks read it
	// generically).
	return c.generic(i)
}

// members charges the object at i: each member's name and entry, and its
// value as n says (a struct's field by name, a map's element; nil:
// generically), left out as tree says (nil: nothing).
func (c *coster) members(i int, n *costNode, entry int64, tree *pruneNode) (int, bool) {
	if !c.take(objectCost) {
		return i, false
	}
	count, mark := 0, c.s.counts.add(i, -1)
	end, ok := c.s.eachMember(i, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
		count++
		name, ok := c.s.name(nameAt, nameEnd, plain)
		if !ok {
			return nameAt, false
		}
		charge := entry + int64(nameEnd-nameAt)
		if !plain {
			// An escaped name is unquoted by encoding/json, here and
			// in the decoder: its decoder state and the string, twice.
			charge += 2 * (escapedNameCost + int64(nameEnd-nameAt))
		}
		if !c.take(charge) {
			c.rev = append(c.rev, c.step(name, entry))
			return at, false
		}
		var field *costNode
		switch {
		case n == nil:
		case n.kind == costStruct:
			field = n.fields[name]
		default:
			field = n.elem
		}
		var sub *pruneNode
		if tree != nil {
			if m, found := tree.members[name]; found {
				sub = m
			} else {
				sub = tree.others
			}
		}
		end, ok := c.value(at, field, sub)
		if !ok && c.over {
			c.rev = append(c.rev, c.step(name, entry))
		}
		return end, ok
	})
	// A map of fewer than mapGroup entries still takes a whole group of
	// slots (a Go map's smallest table), each half an entry's charge.
	if ok && entry > 0 && !(n != nil && n.children) && count < mapGroup {
		ok = c.take(int64(mapGroup-count) * entry / 2)
	}
	if n != nil && n.kind == costMap {
		// The slow decoder grows a typed map from empty (about its
		// entries again) and, refusing a key given twice, keeps a set of
		// the keys it read beside it (sigs.k8s.io/json's seenKeys): taken
		// only if it runs (takeSlow). A generic object (an unknown member
		// of a struct, which the decoder skips, or an interface) is
		// charged as before.
		c.grown += int64(count) * (entry + seenKeyCost)
	}
	if ok {
		c.s.counts.set(mark, count)
	}
	return end, ok
}

// step is a member's step in a path: .name in a struct, ["key"] in a
// map (entry > 0), whose keys may hold dots.
func (c *coster) step(name string, entry int64) string {
	if entry > 0 {
		return "[" + strconv.Quote(name) + "]"
	}
	return strings.Clone(name)
}

// elements charges the array at i, each element as elem and each more,
// left out as tree says.
func (c *coster) elements(i int, elem *costNode, each int64, tree *pruneNode) (int, bool) {
	if !c.take(arrayCost) {
		return i, false
	}
	n, mark := 0, c.s.counts.add(i, -1)
	end, ok := c.s.elements(i, func(at int) (int, bool) {
		end, ok := at, c.take(each)
		c.grown += each
		if ok {
			end, ok = c.value(at, elem, tree)
		}
		if !ok && c.over {
			c.rev = append(c.rev, "["+strconv.Itoa(n)+"]")
		}
		n++
		return end, ok
	})
	if ok {
		c.s.counts.set(mark, n)
	}
	return end, ok
}

// generic charges the value at i as an interface holds it.
func (c *coster) generic(i int) (int, bool) {
	switch c.s.data[i] {
	case '{':
		return c.members(i, nil, 2*(16+16), nil)
	case '[':
		return c.elements(i, nil, 2*16, nil)
	case '"':
		end, _, ok := c.s.str(i)
		return end, ok && c.take(int64(end-i))
	}
	return c.s.value(i, false)
}

// fieldsOf maps the JSON member names of struct t to their field types, as
// encoding/json resolves them (embedded structs without a name flattened),
// names case-sensitive as sigs.k8s.io/json reads them.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	addFields(t, fields, 0)
	fieldCache.Store(t, fields)
	return fields
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

func addFields(t reflect.Type, fields map[string]reflect.Type, depth int) {
	for k := range t.NumField() {
		f := t.Field(k)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && depth < 8 {
				addFields(ft, fields, depth+1)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := fields[name]; !taken || depth == 0 {
			fields[name] = f.Type
		}
	}
}

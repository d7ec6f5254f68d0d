package composite

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The typed decode. A value is built as the scanner reads it: a decoder
// per Go type, built once by reflection and cached, takes each JSON value
// where it stands in the body, as encoding/json (made case-sensitive, as
// sigs.k8s.io/json is) would, and skips what the value's prune tree leaves
// out, never copying the text; a string with an escape in it is unquoted by
// encoding/json itself (scanner.name). A type whose decoding
// here could differ from encoding/json's is refused, and the request takes
// the slow path and its answer: an interface (the slow decoder keeps a
// whole number in one as an int64), json.Number, an array, a map whose
// keys are not plain strings, a ",string" field, and a type that decodes
// itself but for metav1.Time, IntOrString and a json.Unmarshaler by
// pointer. FuzzDecodeObject holds the rest to sigs.k8s.io/json's answer.

// decoderKind says how a decoder builds its value.
type decoderKind uint8

const (
	decodeRefused     decoderKind = iota // never built here: the caller decodes the slow way
	decodeStruct                         // an object, member by member
	decodePointer                        // null, or the pointee
	decodeString                         // a string kind
	decodeBool                           // a bool kind
	decodeInt                            // a signed integer kind
	decodeUint                           // an unsigned integer kind
	decodeFloat                          // a float kind
	decodeSlice                          // null or an array, element by element
	decodeBytes                          // a []byte: null or base64 in a string
	decodeStringMap                      // map[string]string
	decodeMap                            // null or an object, into a map with plain string keys
	decodeTime                           // metav1.Time
	decodeIntOrString                    // intstr.IntOrString
	decodeUnmarshaler                    // a json.Unmarshaler: its UnmarshalJSON gets the value's text
)

// typeDecoder is the cached decoder of one Go type, cut as one prune tree
// node says: what the node leaves out is read and dropped, never built.
type typeDecoder struct {
	kind decoderKind
	typ  reflect.Type
	node *pruneNode // what of the value is kept (nil: all of it)
	// ordered are a struct's JSON members and the names its node lists
	// (decodeStruct), sorted as Metacontroller writes them (orderedMembers):
	// structMembers looks a name up from the one after the last found.
	// other says what becomes of any other name.
	ordered []orderedMember
	other   decodeMember
	// elem decodes a pointer's pointee, a slice's elements or a map's
	// values.
	elem *typeDecoder
}

// decodeMember is what a struct decoder does with one member name: drop
// it (as prune does), build a field of the struct, or, with neither, read
// the value and ignore it, as encoding/json does a name it has no field for.
type decodeMember struct {
	drop  dropRule
	field *decodeField
}

// orderedMember is a struct member by name, in typeDecoder.ordered.
type orderedMember struct {
	name   string
	member *decodeMember
}

// decodeField is one field of a struct decoder.
type decodeField struct {
	index []int // through embedded structs, as encoding/json resolves it
	// viaPointer: the index goes through an embedded pointer, which is
	// made when the member is set.
	viaPointer bool
	dec        *typeDecoder
}

// decoderKey names a cached decoder: the type and its prune tree node.
type decoderKey struct {
	t    reflect.Type
	node *pruneNode
}

var (
	decoders     sync.Map // decoderKey -> *typeDecoder, complete only
	decodersLock sync.Mutex

	timeType        = reflect.TypeFor[metav1.Time]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	stringMapType   = reflect.TypeFor[map[string]string]()
	jsonNumberType  = reflect.TypeFor[json.Number]()
)

// decoderOf is the decoder of type t cut as node says, built on first use.
func decoderOf(t reflect.Type, node *pruneNode) *typeDecoder {
	if d, ok := decoders.Load(decoderKey{t, node}); ok {
		return d.(*typeDecoder)
	}
	decodersLock.Lock()
	defer decodersLock.Unlock()
	building := map[decoderKey]*typeDecoder{}
	d := buildDecoder(t, node, building)
	for key, d := range building {
		decoders.Store(key, d)
	}
	return d
}

// buildDecoder builds the decoder of t cut as node says; building holds the
// decoders made in this build (a recursive type finds its own, still being
// filled).
func buildDecoder(t reflect.Type, node *pruneNode, building map[decoderKey]*typeDecoder) *typeDecoder {
	key := decoderKey{t, node}
	if d, ok := decoders.Load(key); ok {
		return d.(*typeDecoder)
	}
	if d, ok := building[key]; ok {
		return d
	}
	d := &typeDecoder{typ: t, node: node}
	building[key] = d
	switch {
	case t == jsonNumberType:
		// encoding/json checks a string to be a number and takes a bare
		// number as its text; neither decoder here does.
		d.kind = decodeRefused
		return d
	case t.Name() == "" && t.Kind() != reflect.Pointer && decodesItself(t):
		// Methods promoted into an unnamed type: encoding/json takes a
		// value's address to find pointer methods only on a named type.
		d.kind = decodeRefused
		return d
	case t.Kind() == reflect.Pointer && t.Name() != "" && decodesItself(t.Elem()):
		// A named pointer type has no methods, and encoding/json does not
		// look for its pointee's: it decodes the pointee by kind.
		d.kind = decodeRefused
		return d
	case t.Kind() == reflect.Pointer:
		// null: nil, without a call, as encoding/json; else the pointee's
		// own decoder (a *metav1.Time is a metav1.Time's).
		d.kind = decodePointer
		d.elem = buildDecoder(t.Elem(), node, building)
		return d
	case t.Kind() == reflect.Array:
		d.kind = decodeRefused // jsonv2 takes [N]byte as base64 and wants N elements; encoding/json does neither
		return d
	case t == timeType:
		d.kind = decodeTime
		return d
	case t == intOrStringType:
		d.kind = decodeIntOrString
		return d
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType) && !t.Implements(unmarshalerType):
		// encoding/json hands it the value's text, null included; the
		// JSON v2 decoder would ask it for a method of its own first,
		// which none of these has but the known ones above.
		if !reflect.PointerTo(t).Implements(unmarshalerFromType) {
			d.kind = decodeUnmarshaler
		}
		return d
	case decodesItself(t):
		return d // refused
	}
	var elemNode *pruneNode // the node of a slice's elements or a map's values
	if node != nil {
		if t.Kind() == reflect.Slice {
			elemNode = node.elements
		} else {
			elemNode = node.others
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		members, ok := jsonMembers(t)
		if !ok {
			return d // refused: a ",string" field
		}
		d.kind = decodeStruct
		byName := make(map[string]*decodeMember, len(members))
		if node != nil {
			d.other.drop = node.others.dropRule()
			for name, child := range node.members {
				byName[name] = &decodeMember{drop: child.dropRule()}
			}
		}
		for _, m := range members {
			child := node.memberNode(m.name)
			member := &decodeMember{drop: child.dropRule()}
			byName[m.name] = member
			f := &decodeField{index: m.index}
			st := t
			for _, i := range m.index[:len(m.index)-1] {
				ft := st.Field(i).Type
				if ft.Kind() == reflect.Pointer {
					f.viaPointer = true
					ft = ft.Elem()
				}
				st = ft
			}
			if member.drop == kept || member.drop == dropIfAString || f.viaPointer {
				// A dropped member still makes the embedded pointers on
				// its way, as encoding/json does when it sets it.
				f.dec = buildDecoder(m.typ, child, building)
				member.field = f
			}
		}
		d.ordered = orderedMembers(byName)
	case reflect.Interface:
		d.kind = decodeRefused
	case reflect.String:
		d.kind = decodeString
	case reflect.Bool:
		d.kind = decodeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.kind = decodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		d.kind = decodeUint
	case reflect.Float32, reflect.Float64:
		d.kind = decodeFloat
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if t.Elem() == reflect.TypeFor[byte]() {
				d.kind = decodeBytes
			}
			return d // refused: a named byte type, which encoding/json may read otherwise
		}
		d.kind = decodeSlice
		d.elem = buildDecoder(t.Elem(), elemNode, building)
	case reflect.Map:
		k := t.Key()
		if k.Kind() != reflect.String || reflect.PointerTo(k).Implements(textUnmarshalerType) {
			// encoding/json: UnmarshalText or an integer; jsonv2 may call
			// a key's UnmarshalJSON and keeps numbers in an interface as
			// float64: refused rather than handed on.
			d.kind = decodeRefused
			return d
		}
		if t == stringMapType {
			d.kind = decodeStringMap
			return d
		}
		d.kind = decodeMap
		d.elem = buildDecoder(t.Elem(), elemNode, building)
	}
	return d
}

// decodeTyped decodes the value that begins at i into v (addressable, its
// zero value) as d says, and returns the offset after the value. When it
// fails, v may hold part of the value.
func (s *scanner) decodeTyped(i int, v reflect.Value, d *typeDecoder) (int, bool) {
	data := s.data
	if i >= len(data) {
		return i, false
	}
	c := data[i]
	if c == 'n' && d.kind != decodeUnmarshaler && d.kind != decodeRefused {
		// encoding/json leaves a value as it is for null, and sets a
		// pointer, a slice or a map to nil; Time's and IntOrString's
		// UnmarshalJSON make it the zero value: v is that already.
		return s.literal(i, "null")
	}
	switch d.kind {
	case decodeStruct:
		if c != '{' {
			return i, false
		}
		return s.structMembers(i, v, d)
	case decodePointer:
		p := reflect.New(d.typ.Elem())
		end, ok := s.decodeTyped(i, p.Elem(), d.elem)
		v.Set(p)
		return end, ok
	case decodeString:
		str, end, ok := s.stringAt(i)
		if ok {
			v.SetString(str)
		}
		return end, ok
	case decodeBool:
		switch c {
		case 't':
			v.SetBool(true)
			return s.literal(i, "true")
		case 'f':
			return s.literal(i, "false")
		}
		return i, false
	case decodeInt:
		n, end, ok := s.integer(i)
		if !ok || v.OverflowInt(n) {
			return end, false
		}
		v.SetInt(n)
		return end, true
	case decodeUint:
		if c == '-' {
			return i, false
		}
		end, ok := s.number(i)
		if !ok {
			return end, false
		}
		n, err := strconv.ParseUint(unsafe.String(&data[i], end-i), 10, 64)
		if err != nil || v.OverflowUint(n) {
			return end, false
		}
		v.SetUint(n)
		return end, true
	case decodeFloat:
		if c != '-' && (c < '0' || '9' < c) {
			return i, false
		}
		end, ok := s.number(i)
		if !ok {
			return end, false
		}
		n, err := strconv.ParseFloat(unsafe.String(&data[i], end-i), d.typ.Bits())
		if err != nil || v.OverflowFloat(n) {
			return end, false
		}
		v.SetFloat(n)
		return end, true
	case decodeSlice:
		if c != '[' {
			return i, false
		}
		if n := s.count(i); n > 0 {
			// Made once at its length: grown an element at a time, 1,248
			// Containers took 4,713 Containers' worth (issue 30).
			v.Set(reflect.MakeSlice(d.typ, 0, n))
		}
		end, ok := s.elements(i, func(at int) (int, bool) {
			n := v.Len() // v grows in place: no slice header is made
			if n == v.Cap() {
				v.Grow(1)
			}
			v.SetLen(n + 1)
			return s.decodeTyped(at, v.Index(n), d.elem)
		})
		if v.IsNil() {
			v.Set(reflect.MakeSlice(d.typ, 0, 0)) // [] is an empty slice, not nil
		}
		return end, ok
	case decodeBytes:
		// encoding/json: base64 of the unquoted string (an array of
		// numbers, which it takes too, is refused here).
		end, plain, ok := s.quoted(i)
		if !ok {
			return end, false
		}
		text := data[i+1 : end-1]
		if !plain {
			str, ok := s.name(i, end, false)
			if !ok {
				return end, false
			}
			text = []byte(str)
		}
		b := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
		n, err := base64.StdEncoding.Decode(b, text)
		if err != nil {
			return end, false
		}
		v.SetBytes(b[:n])
		return end, true
	case decodeStringMap:
		if c != '{' {
			return i, false
		}
		m := make(map[string]string, s.count(i))
		v.Set(reflect.ValueOf(m))
		var droppedNames []string
		return s.mapMembers(i, func(name string) bool {
			_, dup := m[name]
			return dup || slices.Contains(droppedNames, name)
		}, func(name string, at int) (int, bool) {
			child := d.node.memberNode(name)
			if end, dropped, ok := s.dropped(at, child.dropRule()); dropped {
				droppedNames = append(droppedNames, strings.Clone(name))
				return end, ok
			}
			if data[at] == 'n' {
				m[strings.Clone(name)] = "" // null leaves the new value as it is: empty
				return s.literal(at, "null")
			}
			str, end, ok := s.stringAt(at)
			if ok {
				m[strings.Clone(name)] = str
			}
			return end, ok
		})
	case decodeMap:
		if c != '{' {
			return i, false
		}
		m := reflect.MakeMapWithSize(d.typ, s.count(i))
		v.Set(m)
		key := reflect.New(d.typ.Key()).Elem()
		var droppedNames []string
		return s.mapMembers(i, func(name string) bool {
			key.SetString(name)
			return m.MapIndex(key).IsValid() || slices.Contains(droppedNames, name)
		}, func(name string, at int) (int, bool) {
			child := d.node.memberNode(name)
			if end, dropped, ok := s.dropped(at, child.dropRule()); dropped {
				droppedNames = append(droppedNames, strings.Clone(name))
				return end, ok
			}
			elem := reflect.New(d.elem.typ).Elem()
			end, ok := s.decodeTyped(at, elem, d.elem)
			if !ok {
				return end, false
			}
			key.SetString(strings.Clone(name))
			m.SetMapIndex(key, elem)
			return end, true
		})
	case decodeTime:
		end, plain, ok := s.quoted(i)
		switch {
		case !ok:
			return end, false
		case !plain:
			return s.decodeUnmarshalJSON(i, end, v)
		}
		t, err := time.Parse(time.RFC3339, unsafe.String(&data[i+1], end-1-(i+1)))
		if err != nil {
			return end, false
		}
		(*metav1.Time)(unsafe.Pointer(v.UnsafeAddr())).Time = t.Local() // as UnmarshalJSON sets it; v is a Time (decodeTime)
		return end, true
	case decodeIntOrString:
		into := (*intstr.IntOrString)(unsafe.Pointer(v.UnsafeAddr())) // v is one (decodeIntOrString)
		if c == '"' {
			end, plain, ok := s.str(i)
			if !ok || !plain {
				return s.decodeUnmarshalJSON(i, end, v)
			}
			into.Type, into.StrVal = intstr.String, string(data[i+1:end-1])
			return end, true
		}
		n, end, ok := s.integer(i)
		if !ok || n != int64(int32(n)) {
			return end, false
		}
		into.Type, into.IntVal = intstr.Int, int32(n)
		return end, true
	case decodeUnmarshaler:
		end, ok := s.value(i, true)
		if !ok {
			return end, false
		}
		if v.Type() == quantityType && !quantityBounded(data[i:end]) {
			return end, false // before ParseQuantity, which 1e-99999999 stalls; the slow path names the field
		}
		return s.decodeUnmarshalJSON(i, end, v)
	}
	return i, false // decodeRefused
}

// structMembers reads the object at i into struct v as d says. A name is
// looked for in d.ordered from the one after the member before it, so an
// object written as Metacontroller writes it finds each soon, and a name
// given twice is refused by its place in d.ordered (a bit each for the
// first 128); a name d does not know goes to a name set, as members does.
func (s *scanner) structMembers(i int, v reflect.Value, d *typeDecoder) (int, bool) {
	set := nameSet{start: len(s.names)}
	var seen [2]uint64
	next := 0
	end, ok := s.eachMember(i, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
		name, ok := s.name(nameAt, nameEnd, plain)
		if !ok {
			return nameAt, false
		}
		k := d.memberAt(name, next)
		m := &d.other
		switch {
		case k >= 0 && k < 128:
			if seen[k/64]&(1<<(k%64)) != 0 {
				return nameAt, false
			}
			seen[k/64] |= 1 << (k % 64)
			m, next = d.ordered[k].member, k+1
		case k >= 0:
			m, next = d.ordered[k].member, k+1
			fallthrough
		default:
			if !set.add(s, name) {
				return nameAt, false
			}
		}
		return s.member(at, v, m)
	})
	if ok {
		s.names = s.names[:set.start]
	}
	return end, ok
}

// memberAt is the place of name in d.ordered, looked for from from on and
// then before it; -1 when d has no member of that name.
func (d *typeDecoder) memberAt(name string, from int) int {
	for k := from; k < len(d.ordered); k++ {
		if d.ordered[k].name == name {
			return k
		}
	}
	for k := range min(from, len(d.ordered)) {
		if d.ordered[k].name == name {
			return k
		}
	}
	return -1
}

// member reads the value at at of struct v's member m: dropped as its
// prune rule says, read and ignored (a name v has no field for, as
// encoding/json ignores it), or decoded into its field.
func (s *scanner) member(at int, v reflect.Value, m *decodeMember) (int, bool) {
	if m.drop != kept && m.field != nil && m.field.viaPointer {
		if _, ok := settableField(v, m.field); !ok {
			return at, false
		}
	}
	if end, dropped, ok := s.dropped(at, m.drop); dropped {
		return end, ok
	}
	if m.field == nil {
		return s.value(at, true) // encoding/json ignores a member it has no field for
	}
	fv, ok := settableField(v, m.field)
	if !ok {
		return at, false
	}
	return s.decodeTyped(at, fv, m.field.dec)
}

// orderedMembers lists a struct decoder's members by name for
// typeDecoder.ordered, in the order Metacontroller writes them: it holds
// objects unstructured, and encoding/json writes a map's keys sorted.
func orderedMembers(byName map[string]*decodeMember) []orderedMember {
	ordered := make([]orderedMember, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		ordered = append(ordered, orderedMember{name, byName[name]})
	}
	return ordered
}

// quoted reads the string at i and returns the offset after it and
// whether it is plain (str); false when the value there is not a string.
func (s *scanner) quoted(i int) (end int, plain, ok bool) {
	if s.data[i] != '"' {
		return i, false, false
	}
	return s.str(i)
}

// stringAt reads the string at i as encoding/json unquotes it, a copy;
// false when the value there is not a string.
func (s *scanner) stringAt(i int) (string, int, bool) {
	end, plain, ok := s.quoted(i)
	if !ok {
		return "", end, false
	}
	if plain {
		return string(s.data[i+1 : end-1]), end, true
	}
	str, ok := s.name(i, end, false) // encoding/json's own unquoting: a new string
	return str, end, ok
}

// integer reads the number at i as encoding/json reads one into an
// integer: digits only, no fraction and no exponent, within int64.
func (s *scanner) integer(i int) (int64, int, bool) {
	data := s.data
	if c := data[i]; c != '-' && (c < '0' || '9' < c) {
		return 0, i, false
	}
	end, ok := s.number(i)
	if !ok {
		return 0, end, false
	}
	n, err := strconv.ParseInt(unsafe.String(&data[i], end-i), 10, 64)
	return n, end, err == nil
}

// decodeUnmarshalJSON hands the value data[i:end] to v's UnmarshalJSON, as
// encoding/json does.
func (s *scanner) decodeUnmarshalJSON(i, end int, v reflect.Value) (int, bool) {
	u := v.Addr().Interface().(json.Unmarshaler)
	return end, u.UnmarshalJSON(s.data[i:end:end]) == nil
}

// settableField is v's field f, through embedded structs; an embedded
// pointer on the way is made, as encoding/json makes it (false: it cannot
// be set, as for an unexported one).
func settableField(v reflect.Value, f *decodeField) (reflect.Value, bool) {
	if !f.viaPointer {
		if len(f.index) == 1 {
			return v.Field(f.index[0]), true
		}
		return v.FieldByIndex(f.index), true
	}
	for n, i := range f.index {
		if n > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return v, false
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v, true
}

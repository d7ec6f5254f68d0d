package composite

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// The encoder's one pass: a plan per Go type, built once by reflection and
// cached, writes a typed value straight into clean apply JSON. It writes
// what encoding/json's output put through cleanJSON gives, byte for byte:
// encoding/json's field names, omitempty and omitzero, escaping (HTML
// included) and number formats; nulls and empty objects dropped, but an
// "emptyDir" member's {}; struct fields and map keys sorted. What a plan
// cannot write itself (a json.Marshaler's output that is not a plain scalar,
// a TextMarshaler, a float, a map with keys that are not plain strings, a
// ",string" field) it writes as encoding/json and cleanJSON would, for that
// value alone (encodeGeneric), so the output never depends on which path
// wrote it.

// outcome is what writing one value left in the output.
type outcome uint8

const (
	written     outcome = iota // the value is in the output
	nullValue                  // nothing written: the value is null
	emptyObject                // nothing written: an object that cleans to nothing
)

// encodeFunc appends the clean form of v to dst. When it writes nothing
// (outcome not written), dst comes back as it was.
type encodeFunc func(dst []byte, v reflect.Value) ([]byte, outcome, error)

// plan is the cached encoder of one Go type.
type plan struct {
	encode encodeFunc
	kind   planKind
	fields []planField // planStruct: the fields, sorted by name
	elem   *plan       // planPointer: the pointee's plan
}

type planKind uint8

const (
	planOther planKind = iota
	planStruct
	planPointer
)

// planField is one JSON member of a struct plan.
type planField struct {
	name      string
	quoted    []byte // `"name":`, escaped as encoding/json escapes it
	index     []int  // encoding/json's field index, through embedded structs
	omitEmpty bool
	isZero    func(reflect.Value) bool // omitzero; nil without the option
	keepEmpty bool                     // an empty object stays {} (keepWhenEmpty)
	plan      *plan
	// A field at a fixed offset in its struct (not behind an embedded
	// pointer) is tested and written from memory where its kind allows.
	offset uintptr
	empty  emptyTest   // omitempty's test of the memory (emptyat.go); noEmptyTest: none
	write  fieldWriter // the writer from memory (fieldat.go); nil: none
	// zeroAt is omitzero's test from memory (knownZeroTests); nil: none,
	// and an omitzero field is then not written from memory.
	zeroAt func(unsafe.Pointer) bool
}

var (
	plans     sync.Map // reflect.Type -> *plan, complete plans only
	plansLock sync.Mutex
)

// planOf returns the plan of t, building it (and the plans of every type it
// reaches) on first use.
func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	plansLock.Lock()
	defer plansLock.Unlock()
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	building := map[reflect.Type]*plan{}
	p := buildPlan(t, building)
	for t, p := range building { // complete now, recursive types included
		plans.Store(t, p)
	}
	return p
}

// buildPlan builds the plan of t; a type met again while its plan is being
// built (a recursive type) gets the same *plan, complete before first use.
func buildPlan(t reflect.Type, building map[reflect.Type]*plan) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := building[t]; ok {
		return p
	}
	p := &plan{}
	building[t] = p
	makePlan(p, t, building)
	return p
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
)

func makePlan(p *plan, t reflect.Type, building map[reflect.Type]*plan) {
	if known, ok := knownTypes[t]; ok {
		p.encode = known.encode
		return
	}
	switch {
	case t.Kind() != reflect.Interface && t.Implements(marshalerType):
		p.encode = encodeMarshaler
		return
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType):
		plain := &plan{}
		makePlainPlan(plain, t, building)
		p.encode = func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			if v.CanAddr() { // encoding/json calls a pointer method only then
				return encodeMarshaler(dst, v.Addr())
			}
			return plain.encode(dst, v)
		}
		return
	case t.Implements(textMarshalerType), t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textMarshalerType):
		p.encode = encodeGeneric
		return
	}
	makePlainPlan(p, t, building)
}

// makePlainPlan is makePlan for t's kind, ignoring marshal methods.
func makePlainPlan(p *plan, t reflect.Type, building map[reflect.Type]*plan) {
	switch t.Kind() {
	case reflect.Bool:
		p.encode = func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			return strconv.AppendBool(dst, v.Bool()), written, nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.encode = func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			return strconv.AppendInt(dst, v.Int(), 10), written, nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		p.encode = func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			return strconv.AppendUint(dst, v.Uint(), 10), written, nil
		}
	case reflect.String:
		p.encode = func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			return appendString(dst, v.String()), written, nil
		}
	case reflect.Interface:
		p.encode = func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			if v.IsNil() {
				return dst, nullValue, nil
			}
			e := v.Elem()
			return planOf(e.Type()).encode(dst, e)
		}
	case reflect.Pointer:
		elem := buildPlan(t.Elem(), building)
		p.kind, p.elem = planPointer, elem
		p.encode = func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			if v.IsNil() {
				return dst, nullValue, nil
			}
			return elem.encode(dst, v.Elem())
		}
	case reflect.Struct:
		fields, ok := structFields(t, building)
		if !ok {
			p.encode = encodeGeneric
			return
		}
		p.kind, p.fields = planStruct, fields
		p.encode = func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			return writeStruct(dst, v, fields, false)
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textMarshalerType) || reflect.PointerTo(t.Key()).Implements(textMarshalerType) {
			p.encode = encodeGeneric
			return
		}
		p.encode = mapEncoder(t, buildPlan(t.Elem(), building))
	case reflect.Slice:
		e := t.Elem()
		if e.Kind() == reflect.Uint8 && !hasMarshalMethod(e) {
			p.encode = encodeBytes
			return
		}
		p.encode = listEncoder(buildPlan(e, building), true)
	case reflect.Array:
		p.encode = listEncoder(buildPlan(t.Elem(), building), false)
	default: // floats, and what encoding/json refuses: as encoding/json does
		p.encode = encodeGeneric
	}
}

// writeStruct writes the members of struct v in name order; dropStatus
// leaves out a member "status" (the top level of a child).
func writeStruct(dst []byte, v reflect.Value, fields []planField, dropStatus bool) ([]byte, outcome, error) {
	var base unsafe.Pointer // the struct's memory, for the fields written from it
	if v.CanAddr() {
		base = unsafe.Pointer(v.UnsafeAddr()) // v.Addr would make the pointer type: a lookup per struct
	}
	return writeStructAt(dst, base, v, v.Type(), fields, dropStatus)
}

// writeStructAt is writeStruct of the struct of type t at base (nil: v is
// not addressable, and every field is read through it). A field with a
// writer is written from memory; one without is read through v, made from
// base when not given (a struct reached by a fieldWriter).
func writeStructAt(dst []byte, base unsafe.Pointer, v reflect.Value, t reflect.Type, fields []planField, dropStatus bool) ([]byte, outcome, error) {
	start := len(dst)
	dst = append(dst, '{')
	members := 0
	for i := range fields {
		f := &fields[i]
		if dropStatus && f.name == "status" {
			continue
		}
		if f.certainlyEmpty(base) {
			continue
		}
		direct := base != nil && f.write != nil
		if direct && f.zeroAt != nil && f.zeroAt(unsafe.Add(base, f.offset)) {
			continue
		}
		var fv reflect.Value
		if !direct {
			if !v.IsValid() {
				v = reflect.NewAt(t, base).Elem()
			}
			var ok bool
			fv, ok = fieldByIndex(v, f.index)
			if !ok || (f.omitEmpty && isEmptyValue(fv)) || (f.isZero != nil && f.isZero(fv)) {
				continue
			}
		}
		mark := len(dst)
		if members > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, f.quoted...)
		var out outcome
		var err error
		if direct {
			dst, out, err = f.write(dst, unsafe.Add(base, f.offset))
		} else {
			dst, out, err = f.plan.encode(dst, fv)
		}
		if err != nil {
			return dst[:start], written, err
		}
		dst, members = endMember(dst, mark, out, f.keepEmpty, members)
	}
	return endObject(dst, start, members)
}

// endMember keeps the member just written from mark on, or takes it back
// when its value was not written (an emptyDir's empty object becomes {}),
// and returns the count of members so far.
func endMember(dst []byte, mark int, out outcome, keepEmpty bool, members int) ([]byte, int) {
	switch {
	case out == written:
		return dst, members + 1
	case out == emptyObject && keepEmpty:
		return append(dst, "{}"...), members + 1
	}
	return dst[:mark], members
}

// endObject closes the object opened at start, or takes it back when it
// has no members.
func endObject(dst []byte, start, members int) ([]byte, outcome, error) {
	if members == 0 {
		return dst[:start], emptyObject, nil
	}
	return append(dst, '}'), written, nil
}

// fieldByIndex is v.FieldByIndex, but reports false where encoding/json
// skips the field: behind a nil embedded pointer.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// mapEncoder writes a map with string keys, members sorted by key. The maps
// of most objects (labels, annotations, selectors, data) are read without
// reflection.
func mapEncoder(t reflect.Type, elem *plan) encodeFunc {
	switch t {
	case reflect.TypeFor[map[string]string]():
		return func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			m, _ := reflect.TypeAssert[map[string]string](v)
			return writeStringMap(dst, m, appendString)
		}
	case reflect.TypeFor[map[string][]byte]():
		return func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			m, _ := reflect.TypeAssert[map[string][]byte](v)
			return writeStringMap(dst, m, appendBytes)
		}
	}
	return func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
		if v.IsNil() {
			return dst, nullValue, nil
		}
		var scratch [16]mapEntry
		entries := scratch[:0]
		var iter reflect.MapIter
		iter.Reset(v)
		key := reflect.New(v.Type().Key()).Elem()
		for iter.Next() {
			key.SetIterKey(&iter)
			if !utf8.ValidString(key.String()) { // cleanJSON would sort it as written, U+FFFD for each bad byte
				return encodeGeneric(dst, v)
			}
			entries = append(entries, mapEntry{key.String(), iter.Value()})
		}
		slices.SortFunc(entries, func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
		start := len(dst)
		dst = append(dst, '{')
		members := 0
		for _, e := range entries {
			mark := len(dst)
			if members > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendString(dst, e.key), ':')
			var out outcome
			var err error
			if dst, out, err = elem.encode(dst, e.value); err != nil {
				return dst[:start], written, err
			}
			dst, members = endMember(dst, mark, out, keepWhenEmpty[e.key], members)
		}
		return endObject(dst, start, members)
	}
}

// writeStringMap writes a map of strings (or of bytes, base64), sorted by
// key. A nil []byte is null to encoding/json, so it is left out, as
// cleanJSON leaves it out.
func writeStringMap[V string | []byte](dst []byte, m map[string]V, value func([]byte, V) []byte) ([]byte, outcome, error) {
	if m == nil {
		return dst, nullValue, nil
	}
	var scratch [16]string
	keys := scratch[:0]
	for k := range m {
		if !utf8.ValidString(k) {
			return encodeGeneric(dst, reflect.ValueOf(m))
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	start := len(dst)
	dst = append(dst, '{')
	members := 0
	for _, k := range keys {
		v := m[k]
		if b, isBytes := any(v).([]byte); isBytes && b == nil {
			continue // null
		}
		if members > 0 {
			dst = append(dst, ',')
		}
		dst = value(append(appendString(dst, k), ':'), v)
		members++
	}
	return endObject(dst, start, members)
}

type mapEntry struct {
	key   string
	value reflect.Value
}

// listEncoder writes a slice or an array (writeList).
func listEncoder(elem *plan, nilable bool) encodeFunc {
	return func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
		if nilable && v.IsNil() {
			return dst, nullValue, nil
		}
		return writeList(dst, v.Len(), func(dst []byte, i int) ([]byte, outcome, error) {
			return elem.encode(dst, v.Index(i))
		})
	}
}

// writeList writes n items, item i by item(dst, i), as an array. Items are
// never dropped: an item that cleans to nothing is {} (an object) or null.
func writeList(dst []byte, n int, item func(dst []byte, i int) ([]byte, outcome, error)) ([]byte, outcome, error) {
	start := len(dst)
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		var out outcome
		var err error
		if dst, out, err = item(dst, i); err != nil {
			return dst[:start], written, err
		}
		switch out {
		case emptyObject:
			dst = append(dst, "{}"...)
		case nullValue:
			dst = append(dst, "null"...)
		}
	}
	return append(dst, ']'), written, nil
}

// encodeBytes writes a []byte as encoding/json does: a base64 string.
func encodeBytes(dst []byte, v reflect.Value) ([]byte, outcome, error) {
	if v.IsNil() {
		return dst, nullValue, nil
	}
	return appendBytes(dst, v.Bytes()), written, nil
}

func appendBytes(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// encodeMarshaler calls v's MarshalJSON. A plain scalar (a quantity, a
// time, an int-or-string) is written as it comes; anything else goes
// through encoding/json's compaction and HTML escaping and cleanJSON.
func encodeMarshaler(dst []byte, v reflect.Value) ([]byte, outcome, error) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return dst, nullValue, nil
	}
	if v.Kind() != reflect.Pointer && v.CanAddr() {
		v = v.Addr() // no copy; the method set of *T holds T's
	}
	m, _ := reflect.TypeAssert[json.Marshaler](v)
	raw, err := m.MarshalJSON()
	if err != nil {
		return encodeGeneric(dst, v) // encoding/json's error
	}
	switch {
	case string(raw) == "null":
		return dst, nullValue, nil
	case plainScalar(raw):
		return append(dst, raw...), written, nil
	}
	return encodeGeneric(dst, v)
}

// plainScalar reports a JSON value that encoding/json's compaction and HTML
// escaping and cleanJSON all leave as it is: true, false, an integer, or a
// string of printable ASCII without escapes or HTML characters.
func plainScalar(raw []byte) bool {
	switch {
	case len(raw) == 0:
		return false
	case string(raw) == "true" || string(raw) == "false":
		return true
	case raw[0] == '"':
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return false
		}
		for _, b := range raw[1 : len(raw)-1] {
			if b < 0x20 || b > 0x7e || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' {
				return false
			}
		}
		return true
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// encodeGeneric writes v as encoding/json marshals it, cleaned by cleanJSON:
// the old two-pass encoder, kept for the values the plans leave to it.
func encodeGeneric(dst []byte, v reflect.Value) ([]byte, outcome, error) {
	var x any
	if v.CanAddr() {
		x = v.Addr().Interface() // encoding/json then calls pointer methods, as it would in place
	} else {
		x = v.Interface()
	}
	buf := marshalBuffers.Get().(*bytes.Buffer)
	defer marshalBuffers.Put(buf)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(x); err != nil {
		return dst, written, err
	}
	return cleanValue(dst, buf.Bytes())
}

// structFields lists the JSON members of struct type t (jsonMembers) with
// their plans, sorted by name. It reports false for a struct with a
// ",string" field, which encodeGeneric writes.
func structFields(t reflect.Type, building map[reflect.Type]*plan) ([]planField, bool) {
	members, ok := jsonMembers(t)
	if !ok {
		return nil, false
	}
	fields := make([]planField, 0, len(members))
	for _, c := range members {
		f := planField{
			name:      c.name,
			quoted:    append(appendString(nil, c.name), ':'),
			index:     c.index,
			omitEmpty: c.omitEmpty,
			keepEmpty: keepWhenEmpty[c.name],
			plan:      buildPlan(c.typ, building),
		}
		if offset, ft, fixed := fieldOffset(t, c.index); fixed {
			f.offset = offset
			if c.omitEmpty {
				f.empty = emptyTestOf(ft)
			}
			if c.omitZero {
				f.zeroAt = knownZeroTests[ft]
			}
			if !c.omitZero || f.zeroAt != nil { // omitzero's test needs the value, or a test from memory
				f.write = writerOf(ft, c.omitEmpty, building)
			}
		}
		if c.omitZero {
			f.isZero = zeroTest(c.typ)
		}
		fields = append(fields, f)
	}
	return fields, true
}

// zeroTest is encoding/json's omitzero test for a field of type t.
func zeroTest(t reflect.Type) func(reflect.Value) bool {
	type isZeroer interface{ IsZero() bool }
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) || v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || v.Interface().(isZeroer).IsZero() }
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				boxed := reflect.New(v.Type()).Elem()
				boxed.Set(v)
				v = boxed
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return reflect.Value.IsZero
}

const hexDigits = "0123456789abcdef"

// htmlSafe holds the ASCII bytes a JSON string holds as they are, with
// encoding/json's HTML escaping.
var htmlSafe = func() (safe [utf8.RuneSelf]bool) {
	for b := range safe {
		safe[b] = b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return safe
}()

// appendString appends s quoted as encoding/json quotes it with HTML
// escaping (json.Marshal's default): <, > and & as \u003c, \u003e, \u0026,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped. A long string (a
// script the hooks embed, the same in every answer) is quoted once and
// then copied from quotedStrings.
func appendString(dst []byte, s string) []byte {
	if len(s) < quotedMinBytes {
		return appendQuoted(dst, s)
	}
	if quoted, ok := quotedStrings.Load(s); ok {
		return append(dst, quoted.([]byte)...)
	}
	start := len(dst)
	dst = appendQuoted(dst, s)
	if quotedBytes.Add(int64(2*len(s)+len(dst)-start)) <= quotedMaxBytes {
		quotedStrings.Store(strings.Clone(s), bytes.Clone(dst[start:]))
	}
	return dst
}

// quotedStrings maps a long string to its quoted form, for appendString.
// It holds at most quotedMaxBytes (strings and their quoted forms, counted
// when stored); once full it takes no more, and strings not in it are quoted
// each time, so only the time, never the output, depends on what it holds.
var (
	quotedStrings sync.Map // string -> []byte
	quotedBytes   atomic.Int64
)

const (
	quotedMinBytes = 1 << 10
	quotedMaxBytes = 4 << 20
)

// appendQuoted is appendString without the cache.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look (the scanner's
		// reading, with <, > and & looked at too).
		for i+8 <= len(s) {
			if mask := specialBytes(load8(unsafe.Slice(unsafe.StringData(s), len(s)), i), true); mask != 0 {
				i += bits.TrailingZeros64(mask) / 8
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

package composite

import (
	"reflect"
	"unsafe"
)

// The encoder's shortcut for empty fields. A typed Kubernetes object is
// mostly fields left empty (a Container has some forty, a child sets a
// handful), and reaching each through reflect.Value.Field only to find it
// empty was a third of the encoder's time (the CPU profile of
// BenchmarkEncodeChild). For an omitempty field of a plain kind at a fixed
// offset in its struct, emptyCheck reads the field's memory and says whether
// it is certainly empty under encoding/json's omitempty rule; false means
// "look at it the usual way" (a non-nil map may still be empty, and so is
// -0.0).

// emptyCheck is a planField's shortcut: the field's offset from its
// struct's start and the test of the memory there; test is nil when the
// field has none (not omitempty, an other kind, or behind an embedded
// pointer).
type emptyCheck struct {
	offset uintptr
	test   func(unsafe.Pointer) bool
}

// newEmptyCheck builds the shortcut of the field at index (encoding/json's
// index through embedded structs) of struct type t.
func newEmptyCheck(t reflect.Type, index []int, omitEmpty bool) emptyCheck {
	if !omitEmpty {
		return emptyCheck{}
	}
	var offset uintptr
	for _, x := range index {
		if t.Kind() != reflect.Struct { // an embedded pointer: not at a fixed offset
			return emptyCheck{}
		}
		f := t.Field(x)
		offset += f.Offset
		t = f.Type
	}
	return emptyCheck{offset: offset, test: emptyTest(t)}
}

// emptyTest is isEmptyValue for a value of type t read from memory, nil for
// kinds it does not cover.
func emptyTest(t reflect.Type) func(unsafe.Pointer) bool {
	switch t.Kind() {
	case reflect.String:
		return func(p unsafe.Pointer) bool { return len(*(*string)(p)) == 0 }
	case reflect.Slice:
		return func(p unsafe.Pointer) bool { return len(*(*[]byte)(p)) == 0 } // every slice header is laid out alike
	case reflect.Map, reflect.Pointer:
		return func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
	case reflect.Interface:
		return func(p unsafe.Pointer) bool { return (*[2]unsafe.Pointer)(p)[0] == nil }
	case reflect.Bool:
		return func(p unsafe.Pointer) bool { return !*(*bool)(p) }
	}
	if !isNumber(t.Kind()) {
		return nil
	}
	switch t.Size() { // certainly empty when every bit is 0 (-0.0 is left to isEmptyValue)
	case 1:
		return func(p unsafe.Pointer) bool { return *(*uint8)(p) == 0 }
	case 2:
		return func(p unsafe.Pointer) bool { return *(*uint16)(p) == 0 }
	case 4:
		return func(p unsafe.Pointer) bool { return *(*uint32)(p) == 0 }
	case 8:
		return func(p unsafe.Pointer) bool { return *(*uint64)(p) == 0 }
	}
	return nil
}

// isNumber is true for the integer and floating-point kinds.
func isNumber(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// certainlyEmpty reports whether the field's memory in the struct at base
// (nil: not addressable) shows it empty.
func (c *emptyCheck) certainlyEmpty(base unsafe.Pointer) bool {
	return base != nil && c.test != nil && c.test(unsafe.Add(base, c.offset))
}

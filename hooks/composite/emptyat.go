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
// offset in its struct, certainlyEmpty reads the field's memory and says whether
// it is certainly empty under encoding/json's omitempty rule; false means
// "look at it the usual way" (a non-nil map may still be empty, and so is
// -0.0).

// emptyTest is how certainlyEmpty reads a field's memory; noEmptyTest when
// the field has none (not omitempty, an other kind, or behind an embedded
// pointer). It is a kind switched on inline, not a function value called
// for each field of each struct (certainlyEmpty and those calls were 5% of
// the CPU profile of BenchmarkEncodeChild).
type emptyTest uint8

const (
	noEmptyTest emptyTest = iota
	emptyString           // length 0
	emptySlice            // length 0; every slice header is laid out alike
	emptyNil              // a nil map or pointer
	emptyIface            // a nil interface
	emptyBool             // false
	emptyZero1            // a number of 1, 2, 4 or 8 bytes with every bit 0
	emptyZero2            // (-0.0 has a bit set: left to isEmptyValue)
	emptyZero4
	emptyZero8
)

// fieldOffset is the offset and type of the field at index (encoding/json's
// index through embedded structs) of struct type t; false when the field is
// behind an embedded pointer, so not at a fixed offset.
func fieldOffset(t reflect.Type, index []int) (uintptr, reflect.Type, bool) {
	var offset uintptr
	for _, x := range index {
		if t.Kind() != reflect.Struct { // an embedded pointer
			return 0, nil, false
		}
		f := t.Field(x)
		offset += f.Offset
		t = f.Type
	}
	return offset, t, true
}

// emptyTestOf is the emptyTest of a value of type t, noEmptyTest for
// kinds it does not cover.
func emptyTestOf(t reflect.Type) emptyTest {
	switch t.Kind() {
	case reflect.String:
		return emptyString
	case reflect.Slice:
		return emptySlice
	case reflect.Map, reflect.Pointer:
		return emptyNil
	case reflect.Interface:
		return emptyIface
	case reflect.Bool:
		return emptyBool
	}
	if !isNumber(t.Kind()) {
		return noEmptyTest
	}
	switch t.Size() {
	case 1:
		return emptyZero1
	case 2:
		return emptyZero2
	case 4:
		return emptyZero4
	case 8:
		return emptyZero8
	}
	return noEmptyTest
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
func (f *planField) certainlyEmpty(base unsafe.Pointer) bool {
	if base == nil || f.empty == noEmptyTest {
		return false
	}
	p := unsafe.Add(base, f.offset)
	switch f.empty {
	case emptyString:
		return len(*(*string)(p)) == 0
	case emptySlice:
		return len(*(*[]byte)(p)) == 0
	case emptyNil:
		return *(*unsafe.Pointer)(p) == nil
	case emptyIface:
		return (*[2]unsafe.Pointer)(p)[0] == nil
	case emptyBool:
		return !*(*bool)(p)
	case emptyZero1:
		return *(*uint8)(p) == 0
	case emptyZero2:
		return *(*uint16)(p) == 0
	case emptyZero4:
		return *(*uint32)(p) == 0
	case emptyZero8:
		return *(*uint64)(p) == 0
	}
	return false
}

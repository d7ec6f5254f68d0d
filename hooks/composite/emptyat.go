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

// emptyTest is where certainlyEmpty reads a field's memory: the width
// bytes from at past the field's offset, all zero when the field is empty
// (a string's or a slice's length, a map's, pointer's or interface's first
// word, a bool, a number's bits); width 0 (noEmptyTest) when the field has
// none (not omitempty, an other kind, or behind an embedded pointer). Its
// read is a load and a compare inline in the encoder's loop over fields: a
// call per field of every struct written was a tenth of the encoder's
// instructions.
type emptyTest struct {
	at    uintptr
	width uint8 // 1, 2, 4 or 8
}

var noEmptyTest = emptyTest{}

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
	const word = uint8(unsafe.Sizeof(uintptr(0)))
	switch t.Kind() {
	case reflect.String, reflect.Slice: // the length, after the data pointer
		return emptyTest{at: uintptr(word), width: word}
	case reflect.Map, reflect.Pointer, reflect.Interface: // the pointer; an interface's type
		return emptyTest{width: word}
	case reflect.Bool:
		return emptyTest{width: 1}
	}
	if !isNumber(t.Kind()) {
		return noEmptyTest
	}
	switch t.Size() {
	case 1, 2, 4, 8:
		return emptyTest{width: uint8(t.Size())}
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
	if base == nil {
		return false
	}
	p := unsafe.Add(base, f.offset+f.empty.at)
	switch f.empty.width {
	case 8:
		return *(*uint64)(p) == 0
	case 4:
		return *(*uint32)(p) == 0
	case 2:
		return *(*uint16)(p) == 0
	case 1:
		return *(*uint8)(p) == 0
	}
	return false
}

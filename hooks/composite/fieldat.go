package composite

import (
	"reflect"
	"strconv"
	"unsafe"
)

// The encoder's shortcut from memory. Most members a child writes are
// strings, integers, booleans, pointers, string maps, structs and lists of
// them (names, images, ports, replicas, labels, containers); reaching each
// through fieldByIndex (reflect.Value.Field) and its plan's encodeFunc was
// the larger part of the encoder's time. For such a field at a fixed offset
// in its struct, fieldWriter writes the value from the field's memory,
// exactly as the type's plan writes it, and a struct or list of them is
// walked by its address the same way down to what has no writer (a
// marshaler, a map of other types, an interface), which its plan writes.

// fieldWriter appends the clean form of the value at p, as encodeFunc does.
type fieldWriter func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error)

// writerOf is the fieldWriter of a value of type t, nil for the types it
// does not cover. An omitempty map that is empty but not nil is left out,
// as isEmptyValue leaves it out. building is buildPlan's: a struct's writer
// uses its plan's fields, complete by the time it is called.
func writerOf(t reflect.Type, omitEmpty bool, building map[reflect.Type]*plan) fieldWriter {
	if known, ok := knownTypes[t]; ok {
		return known.write
	}
	if hasMarshalMethod(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			return appendString(dst, *(*string)(p)), written, nil
		}
	case reflect.Bool:
		return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			return strconv.AppendBool(dst, *(*bool)(p)), written, nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return bySize(t.Size(), numberWriter[int8](), numberWriter[int16](), numberWriter[int32](), numberWriter[int64]())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return bySize(t.Size(), numberWriter[uint8](), numberWriter[uint16](), numberWriter[uint32](), numberWriter[uint64]())
	case reflect.Pointer:
		switch t.Elem().Kind() {
		case reflect.Pointer, reflect.Map:
			return nil
		}
		elem := writerOf(t.Elem(), false, building)
		if elem == nil {
			return nil
		}
		return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			pointee := *(*unsafe.Pointer)(p)
			if pointee == nil {
				return dst, nullValue, nil
			}
			return elem(dst, pointee)
		}
	case reflect.Map:
		switch t {
		case reflect.TypeFor[map[string]string]():
			return mapWriter(omitEmpty, appendString)
		case reflect.TypeFor[map[string][]byte]():
			return mapWriter(omitEmpty, appendBytes)
		}
	case reflect.Struct:
		p := buildPlan(t, building)
		return func(dst []byte, ptr unsafe.Pointer) ([]byte, outcome, error) {
			if p.kind != planStruct { // a struct encoding/json writes (a ",string" field)
				return p.encode(dst, reflect.NewAt(t, ptr).Elem())
			}
			return writeStructAt(dst, ptr, reflect.Value{}, t, p.fields, false)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if hasMarshalMethod(t.Elem()) {
				return nil
			}
			return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
				if b := *(*[]byte)(p); b != nil {
					return appendBytes(dst, b), written, nil
				}
				return dst, nullValue, nil
			}
		}
		elem, size := writerOf(t.Elem(), false, building), t.Elem().Size()
		if elem == nil {
			return nil
		}
		return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			header := *(*[]byte)(p) // a slice's header, whatever its element: data, length, capacity
			if header == nil {
				return dst, nullValue, nil
			}
			data := unsafe.Pointer(unsafe.SliceData(header))
			return writeList(dst, len(header), func(dst []byte, i int) ([]byte, outcome, error) {
				return elem(dst, unsafe.Add(data, uintptr(i)*size))
			})
		}
	}
	return nil
}

// mapWriter writes a map of strings (or of bytes) at p, as writeStringMap.
func mapWriter[V string | []byte](omitEmpty bool, value func([]byte, V) []byte) fieldWriter {
	return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
		m := *(*map[string]V)(p)
		if omitEmpty && len(m) == 0 {
			return dst, nullValue, nil
		}
		return writeStringMap(dst, m, value)
	}
}

// hasMarshalMethod reports a type whose plan is not its kind's: it (or its
// pointer) is a json.Marshaler or an encoding.TextMarshaler.
func hasMarshalMethod(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || pt.Implements(marshalerType) ||
		t.Implements(textMarshalerType) || pt.Implements(textMarshalerType)
}

// numberWriter writes the integer of type T at p, as strconv writes it.
func numberWriter[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64]() fieldWriter {
	var zero T
	if zero-1 > 0 { // unsigned
		return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			return strconv.AppendUint(dst, uint64(*(*T)(p)), 10), written, nil
		}
	}
	return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
		return strconv.AppendInt(dst, int64(*(*T)(p)), 10), written, nil
	}
}

// bySize picks the writer for an integer of size bytes.
func bySize(size uintptr, one, two, four, eight fieldWriter) fieldWriter {
	switch size {
	case 1:
		return one
	case 2:
		return two
	case 4:
		return four
	case 8:
		return eight
	}
	return nil
}

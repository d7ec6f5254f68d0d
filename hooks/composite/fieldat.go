package composite

import (
	"reflect"
	"strconv"
	"unsafe"
)

// The encoder's shortcut for plain fields. Most members a child writes are
// strings, integers, booleans, pointers to them and string maps (names,
// images, ports, replicas, labels); reaching each through fieldByIndex
// (reflect.Value.Field) was 6% of the CPU profile of BenchmarkEncodeChild,
// and each took a call through its plan's encodeFunc. For such a field at a
// fixed offset in its struct, and of a type with no marshal method,
// fieldWriter writes the value from the field's memory, exactly as the
// type's plan writes it.

// fieldWriter appends the clean form of the value at p, as encodeFunc does.
type fieldWriter func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error)

// writerOf is the fieldWriter of a value of type t, nil for the types it
// does not cover. An omitempty map that is empty but not nil is left out,
// as isEmptyValue leaves it out.
func writerOf(t reflect.Type, omitEmpty bool) fieldWriter {
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
		elem := writerOf(t.Elem(), false)
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
		if t != reflect.TypeFor[map[string]string]() {
			return nil
		}
		return func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			m := *(*map[string]string)(p)
			if omitEmpty && len(m) == 0 {
				return dst, nullValue, nil
			}
			return writeStringMap(dst, m, appendString)
		}
	}
	return nil
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

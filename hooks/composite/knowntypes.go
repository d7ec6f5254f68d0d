package composite

import (
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Three Kubernetes types the hooks write in every child, written without
// their MarshalJSON, which allocates its answer each time (and, for an
// IntOrString, runs encoding/json's reflection): each encoder writes what
// the method writes, byte for byte (TestKnownTypesWriteAsTheirMethods), from
// a reflect.Value (knownEncoders) or from memory (knownWriters).
var (
	knownEncoders = map[reflect.Type]encodeFunc{
		reflect.TypeFor[intstr.IntOrString](): func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			x, _ := reflect.TypeAssert[intstr.IntOrString](v)
			if out, ok := appendIntOrString(dst, x); ok {
				return out, written, nil
			}
			return encodeMarshaler(dst, v) // its own error
		},
		reflect.TypeFor[resource.Quantity](): func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			q, _ := reflect.TypeAssert[resource.Quantity](v) // a copy: String may keep the form it computes
			return appendQuantity(dst, q)
		},
		reflect.TypeFor[metav1.Time](): func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			t, _ := reflect.TypeAssert[metav1.Time](v)
			return appendTime(dst, t)
		},
	}
	knownWriters = map[reflect.Type]fieldWriter{
		reflect.TypeFor[intstr.IntOrString](): func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			if out, ok := appendIntOrString(dst, *(*intstr.IntOrString)(p)); ok {
				return out, written, nil
			}
			return encodeMarshaler(dst, reflect.NewAt(reflect.TypeFor[intstr.IntOrString](), p).Elem())
		},
		reflect.TypeFor[resource.Quantity](): func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			return appendQuantity(dst, *(*resource.Quantity)(p)) // a copy, as above
		},
		reflect.TypeFor[metav1.Time](): func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			return appendTime(dst, *(*metav1.Time)(p))
		},
	}
)

// knownZeroTests are omitzero's tests from memory of the types a hook
// writes with the option (an object's creationTimestamp): each calls the
// IsZero method encoding/json calls.
var knownZeroTests = map[reflect.Type]func(unsafe.Pointer) bool{
	reflect.TypeFor[metav1.Time](): func(p unsafe.Pointer) bool { return (*metav1.Time)(p).IsZero() },
}

// appendIntOrString writes an IntOrString as its MarshalJSON does: the
// number or the string, as encoding/json writes it; false for one of
// neither type, which is left to MarshalJSON, for its error.
func appendIntOrString(dst []byte, x intstr.IntOrString) ([]byte, bool) {
	switch x.Type {
	case intstr.Int:
		return strconv.AppendInt(dst, int64(x.IntVal), 10), true
	case intstr.String:
		return appendString(dst, x.StrVal), true
	}
	return dst, false
}

// appendQuantity writes a Quantity as its MarshalJSON does: its string
// form (digits, a point, a sign, an exponent or suffix letter), quoted.
func appendQuantity(dst []byte, q resource.Quantity) ([]byte, outcome, error) {
	dst = append(dst, '"')
	dst = append(dst, q.String()...)
	return append(dst, '"'), written, nil
}

// appendTime writes a Time as its MarshalJSON does: null when it is zero,
// else RFC 3339 in UTC, quoted.
func appendTime(dst []byte, t metav1.Time) ([]byte, outcome, error) {
	if t.IsZero() {
		return dst, nullValue, nil
	}
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, time.RFC3339)
	return append(dst, '"'), written, nil
}

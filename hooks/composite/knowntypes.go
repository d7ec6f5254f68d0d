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
// IntOrString, runs encoding/json's reflection): each append function
// writes what the method writes, byte for byte
// (TestKnownTypesWriteAsTheirMethods), and known makes from it the
// encoder from a reflect.Value and the writer from memory.
var knownTypes = map[reflect.Type]knownType{
	reflect.TypeFor[intstr.IntOrString](): known(appendIntOrString),
	reflect.TypeFor[resource.Quantity]():  known(appendQuantity),
	reflect.TypeFor[metav1.Time]():        known(appendTime),
}

// knownType is how a known type is written: from a reflect.Value (a plan's
// encodeFunc) and from memory (a fieldWriter).
type knownType struct {
	encode encodeFunc
	write  fieldWriter
}

// known is the knownType of T written by appendT, which gets a copy (a
// Quantity's String may keep the form it computes).
func known[T any](appendT func(dst []byte, x T) ([]byte, outcome, error)) knownType {
	return knownType{
		encode: func(dst []byte, v reflect.Value) ([]byte, outcome, error) {
			x, _ := reflect.TypeAssert[T](v)
			return appendT(dst, x)
		},
		write: func(dst []byte, p unsafe.Pointer) ([]byte, outcome, error) {
			return appendT(dst, *(*T)(p))
		},
	}
}

// knownZeroTests are omitzero's tests from memory of the types a hook
// writes with the option (an object's creationTimestamp): each calls the
// IsZero method encoding/json calls.
var knownZeroTests = map[reflect.Type]func(unsafe.Pointer) bool{
	reflect.TypeFor[metav1.Time](): func(p unsafe.Pointer) bool { return (*metav1.Time)(p).IsZero() },
}

// appendIntOrString writes an IntOrString as its MarshalJSON does: the
// number or the string, as encoding/json writes it; one of neither type
// goes to MarshalJSON, for its error.
func appendIntOrString(dst []byte, x intstr.IntOrString) ([]byte, outcome, error) {
	switch x.Type {
	case intstr.Int:
		return strconv.AppendInt(dst, int64(x.IntVal), 10), written, nil
	case intstr.String:
		return appendString(dst, x.StrVal), written, nil
	}
	return encodeMarshaler(dst, reflect.ValueOf(x))
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

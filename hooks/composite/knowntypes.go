package composite

import (
	"reflect"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Three Kubernetes types the hooks write in every child, written without
// their MarshalJSON, which allocates its answer each time (and, for an
// IntOrString, runs encoding/json's reflection): each encoder writes what
// the method writes, byte for byte (TestKnownTypesWriteAsTheirMethods).
var knownEncoders = map[reflect.Type]encodeFunc{
	reflect.TypeFor[intstr.IntOrString](): encodeIntOrString,
	reflect.TypeFor[resource.Quantity]():  encodeQuantity,
	reflect.TypeFor[metav1.Time]():        encodeTime,
}

// encodeIntOrString writes an IntOrString as its MarshalJSON does: the
// number or the string, as encoding/json writes it.
func encodeIntOrString(dst []byte, v reflect.Value) ([]byte, outcome, error) {
	x, _ := reflect.TypeAssert[intstr.IntOrString](v)
	switch x.Type {
	case intstr.Int:
		return strconv.AppendInt(dst, int64(x.IntVal), 10), written, nil
	case intstr.String:
		return appendString(dst, x.StrVal), written, nil
	}
	return encodeMarshaler(dst, v) // its own error
}

// encodeQuantity writes a Quantity as its MarshalJSON does: its string
// form (digits, a point, a sign, an exponent or suffix letter), quoted.
func encodeQuantity(dst []byte, v reflect.Value) ([]byte, outcome, error) {
	q, _ := reflect.TypeAssert[resource.Quantity](v) // a copy: String may keep the form it computes
	dst = append(dst, '"')
	dst = append(dst, q.String()...)
	return append(dst, '"'), written, nil
}

// encodeTime writes a Time as its MarshalJSON does: null when it is zero,
// else RFC 3339 in UTC, quoted.
func encodeTime(dst []byte, v reflect.Value) ([]byte, outcome, error) {
	t, _ := reflect.TypeAssert[metav1.Time](v)
	if t.IsZero() {
		return dst, nullValue, nil
	}
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, time.RFC3339)
	return append(dst, '"'), written, nil
}

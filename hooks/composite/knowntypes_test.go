package composite

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestKnownTypesWriteAsTheirMethods(t *testing.T) {
	cases := []struct {
		reason string
		value  json.Marshaler
	}{
		{"a port number", intstr.FromInt32(8080)},
		{"a negative number", intstr.FromInt32(-5)},
		{"a port name", intstr.FromString("http")},
		{"a percentage", intstr.FromString("25%")},
		{"a string with HTML characters", intstr.FromString("<a&b>")},
		{"a string with invalid UTF-8", intstr.FromString("\xff")},
		{"an invalid type", intstr.IntOrString{Type: 7}},
		{"a parsed binary quantity", resource.MustParse("1Gi")},
		{"a quantity that is not canonical as written", resource.MustParse("1024Mi")},
		{"a milli quantity", resource.MustParse("250m")},
		{"an exponent", resource.MustParse("2e3")},
		{"a decimal fraction", resource.MustParse("1.5")},
		{"a built quantity", *resource.NewQuantity(5, resource.BinarySI)},
		{"a zero quantity", resource.Quantity{}},
		{"a time", metav1.NewTime(time.Date(2026, 12, 2, 8, 0, 0, 5, time.FixedZone("x", 3600)))},
		{"the zero time", metav1.Time{}},
	}
	for _, tc := range cases {
		want, wantErr := tc.value.MarshalJSON()
		known := knownTypes[reflect.TypeOf(tc.value)]
		addressable := reflect.New(reflect.TypeOf(tc.value)).Elem()
		addressable.Set(reflect.ValueOf(tc.value))
		for _, way := range []struct {
			name  string
			write func() ([]byte, outcome, error)
		}{
			{"from a reflect.Value", func() ([]byte, outcome, error) { return known.encode(nil, reflect.ValueOf(tc.value)) }},
			{"from memory", func() ([]byte, outcome, error) { return known.write(nil, addressable.Addr().UnsafePointer()) }},
		} {
			got, out, gotErr := way.write()
			if (wantErr != nil) != (gotErr != nil) {
				t.Errorf("%s, %s: error %v, MarshalJSON's %v", tc.reason, way.name, gotErr, wantErr)
				continue
			}
			if wantErr != nil {
				continue
			}
			if out == nullValue {
				got = []byte("null")
			}
			if string(got) != string(want) {
				t.Errorf("%s, %s: wrote %s, MarshalJSON writes %s", tc.reason, way.name, got, want)
			}
		}
	}
}

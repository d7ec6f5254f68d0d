package composite

import (
	"math"
	"reflect"
	"testing"
)

type emptyAtInner struct {
	S string `json:"s,omitempty"`
}

type emptyAtOuter struct {
	emptyAtInner                      // embedded by value: at a fixed offset
	*emptyAtPointed                   // embedded by pointer: no shortcut
	S8              int8              `json:"s8,omitempty"`
	U16             uint16            `json:"u16,omitempty"`
	I32             int32             `json:"i32,omitempty"`
	F64             float64           `json:"f64,omitempty"`
	B               bool              `json:"b,omitempty"`
	Str             string            `json:"str,omitempty"`
	Slice           []int             `json:"slice,omitempty"`
	Map             map[string]string `json:"map,omitempty"`
	Ptr             *int              `json:"ptr,omitempty"`
	Iface           any               `json:"iface,omitempty"`
	Arr             [2]int            `json:"arr,omitempty"`
	Struct          emptyAtInner      `json:"struct,omitempty"`
	Plain           string            `json:"plain"`
}

type emptyAtPointed struct {
	P string `json:"p,omitempty"`
}

func TestEmptyCheck(t *testing.T) {
	one := 1
	cases := map[string]struct {
		reason string
		value  emptyAtOuter
	}{
		"Zero":    {reason: "every field at its zero value"},
		"Set":     {reason: "every field set", value: emptyAtOuter{emptyAtInner: emptyAtInner{S: "x"}, emptyAtPointed: &emptyAtPointed{P: "y"}, S8: -1, U16: 1, I32: 7, F64: 0.5, B: true, Str: "s", Slice: []int{1}, Map: map[string]string{"a": "b"}, Ptr: &one, Iface: 0, Arr: [2]int{1}, Struct: emptyAtInner{S: "z"}, Plain: "p"}},
		"Edges":   {reason: "empty but not nil: an empty map and slice, a nil pointer in an interface", value: emptyAtOuter{Slice: []int{}, Map: map[string]string{}, Iface: (*int)(nil)}},
		"NegZero": {reason: "-0.0 has a bit set: not zero for reflect.Value.IsZero, which isEmptyValue uses", value: emptyAtOuter{F64: math.Copysign(0, -1)}},
		"NaN":     {reason: "a NaN is not empty", value: emptyAtOuter{F64: math.NaN()}},
	}
	fields, ok := structFields(reflect.TypeFor[emptyAtOuter](), map[reflect.Type]*plan{})
	if !ok {
		t.Fatal("no plan for the test struct")
	}
	shortcuts := 0
	for _, f := range fields {
		if f.empty != noEmptyTest {
			shortcuts++
		}
	}
	if want := 11; shortcuts != want { // s, s8, u16, i32, f64, b, str, slice, map, ptr, iface; not p, arr, struct, plain
		t.Errorf("%d fields have the shortcut, want %d", shortcuts, want)
	}
	for name, tc := range cases {
		v := reflect.ValueOf(&tc.value).Elem()
		base := v.Addr().UnsafePointer()
		for _, f := range fields {
			fv, reachable := fieldByIndex(v, f.index)
			got := f.certainlyEmpty(base)
			if !reachable {
				if got {
					t.Errorf("%s (%s): %s behind a nil pointer called certainly empty", name, tc.reason, f.name)
				}
				continue
			}
			want := f.omitEmpty && isEmptyValue(fv)
			if got && !want {
				t.Errorf("%s (%s): %s called certainly empty, isEmptyValue says %v", name, tc.reason, f.name, isEmptyValue(fv))
			}
			leftToReflection := fv.Kind() == reflect.Map || (fv.Kind() == reflect.Float64 && math.Signbit(fv.Float())) // a non-nil empty map, -0.0
			if !got && want && f.empty != noEmptyTest && !leftToReflection {
				t.Errorf("%s (%s): %s is empty but its shortcut missed it", name, tc.reason, f.name)
			}
		}
		if fields[0].certainlyEmpty(nil) {
			t.Errorf("%s: a value that is not addressable (nil base) called certainly empty", name)
		}
	}
}

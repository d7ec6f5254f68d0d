package composite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// decodeProbe has a field of every kind the typed decoder builds itself or
// hands on.
type decodeProbe struct {
	decodeProbeEmbedded
	*DecodeProbePointer
	S          string                                    `json:"s"`
	Named      corev1.Protocol                           `json:"named"`
	B          bool                                      `json:"b"`
	I8         int8                                      `json:"i8"`
	I          int                                       `json:"i"`
	U16        uint16                                    `json:"u16"`
	F32        float32                                   `json:"f32"`
	F64        float64                                   `json:"f64"`
	P          *int32                                    `json:"p"`
	Bytes      []byte                                    `json:"bytes"`
	List       []string                                  `json:"list"`
	Structs    []decodeProbeItem                         `json:"structs"`
	Labels     map[string]string                         `json:"labels"`
	Quantities map[corev1.ResourceName]resource.Quantity `json:"quantities"`
	Items      map[string]*decodeProbeItem               `json:"items"`
	Q          resource.Quantity                         `json:"q"`
	QP         *resource.Quantity                        `json:"qp"`
	T          metav1.Time                               `json:"t"`
	TP         *metav1.Time                              `json:"tp"`
	MT         metav1.MicroTime                          `json:"mt"`
	IOS        intstr.IntOrString                        `json:"ios"`
	IOSP       *intstr.IntOrString                       `json:"iosp"`
	Raw        runtime.RawExtension                      `json:"raw"`
	Any        any                                       `json:"any"`
	Arr        [2]int                                    `json:"arr"`
	IntKeys    map[int]string                            `json:"intKeys"`
	Dur        metav1.Duration                           `json:"dur"`
	Tree       *decodeProbeTree                          `json:"tree"`
	Ignored    string                                    `json:"-"`
	Untagged   string
}

type decodeProbeEmbedded struct {
	Promoted string `json:"promoted"`
}

type DecodeProbePointer struct {
	ViaPointer string `json:"viaPointer"`
}

// decodeProbeTree is a recursive type: its decoder is its own elements'.
type decodeProbeTree struct {
	Name     string            `json:"name"`
	Children []decodeProbeTree `json:"children"`
}

type decodeProbeItem struct {
	Name string `json:"name"`
	N    *int64 `json:"n,omitempty"`
}

// TestDecodeTypedAgreesWithSlow: a document the typed decoder takes decodes
// to what sigs.k8s.io/json decodes it to; one it refuses, the slow decoder
// refuses too (the request then takes the slow path and its error).
func TestDecodeTypedAgreesWithSlow(t *testing.T) {
	cases := []struct {
		reason, raw string
		taken       bool // the typed decoder takes it
	}{
		{"strings, named strings, bools", `{"s":"a","named":"TCP","b":true}`, true},
		{"a string with escapes, unquoted as encoding/json unquotes it", `{"s":"a\"b\u00e9\n"}`, true},
		{"integers within range", `{"i8":-128,"i":-0,"u16":65535}`, true},
		{"an int8 out of range", `{"i8":128}`, false},
		{"a uint below zero", `{"u16":-1}`, false},
		{"an integer with a fraction", `{"i":1.0}`, false},
		{"an integer with an exponent", `{"i":1e2}`, false},
		{"floats", `{"f32":1.5e3,"f64":-0.25}`, true},
		{"a float32 out of range", `{"f32":1e39}`, false},
		{"a string for an int", `{"i":"1"}`, false},
		{"a number for a bool", `{"b":1}`, false},
		{"a pointer set and nulls everywhere", `{"p":7,"s":null,"b":null,"i":null,"labels":null,"list":null,"qp":null,"tp":null,"iosp":null,"t":null,"ios":null,"q":null}`, true},
		{"base64 bytes, empty bytes", `{"bytes":"aGk="}`, true},
		{"empty base64", `{"bytes":""}`, true},
		{"base64 without padding", `{"bytes":"aGk"}`, false},
		{"base64 with an escaped line break", `{"bytes":"aGk=\n"}`, true},
		{"base64 with an escaped character", `{"bytes":"aGk\u003d"}`, true},
		{"base64 as an array of numbers: refused", `{"bytes":[104,105]}`, false},
		{"a map value with escapes", `{"labels":{"a":"\u00e9\"","b":"\ud800"}}`, true},
		{"invalid UTF-8 in an escaped string becomes U+FFFD as encoding/json makes it", "{\"s\":\"\\n\xff\"}", true},
		{"an empty list is not nil", `{"list":[],"structs":[]}`, true},
		{"lists of strings and structs", `{"list":["a","b"],"structs":[{"name":"x","n":1},{"name":"y"}]}`, true},
		{"a list element of the wrong type", `{"list":["a",1]}`, false},
		{"maps: string values with a null, named keys, pointers", `{"labels":{"a":"1","b":null},"quantities":{"cpu":"250m","memory":"1Gi"},"items":{"a":{"name":"a"},"b":null}}`, true},
		{"a map value of the wrong type", `{"labels":{"a":1}}`, false},
		{"a malformed quantity", `{"q":"ten"}`, false},
		{"quantities as numbers and strings", `{"q":1.5,"qp":"2Gi"}`, true},
		{"times", `{"t":"2026-12-01T02:00:00Z","tp":"2026-12-01T02:00:00+01:00","mt":"2026-12-01T02:00:00.123456Z"}`, true},
		{"a time with an escape", `{"t":"2026-12-01T02:00:00\u005a"}`, true},
		{"a time that does not parse", `{"t":"yesterday"}`, false},
		{"a time as a number", `{"t":1}`, false},
		{"an empty time string", `{"t":""}`, false},
		{"int-or-strings", `{"ios":"50%","iosp":3}`, true},
		{"an int-or-string out of int32", `{"ios":2147483648}`, false},
		{"an int-or-string as a bool", `{"ios":true}`, false},
		{"a raw extension", `{"raw":{"a":[1,2,{"b":null}]}}`, true},
		{"an array: refused (go-json-experiment/json reads [N]byte as base64)", `{"arr":[1,2]}`, false},
		{"an interface: refused, as the slow decoder keeps integers in one", `{"any":{"a":1,"b":[1.5,"x",null]}}`, false},
		{"a null interface is nil already", `{"any":null}`, false},
		{"integer map keys: refused", `{"intKeys":{"1":"a"}}`, false},
		{"a duration", `{"dur":"1m30s"}`, true},
		{"promoted fields, through a pointer too", `{"promoted":"a","viaPointer":"b"}`, true},
		{"names match case-sensitively; unknown ones are read and ignored", `{"S":"x","Untagged":"u","untagged":"v","Ignored":"i","-":"j","other":{"deep":[1,{"x":null}]}}`, true},
		{"a recursive type", `{"tree":{"name":"a","children":[{"name":"b","children":[{"name":"c"}]},{"name":"d","children":null}]}}`, true},
		{"a repeated name", `{"s":"a","s":"b"}`, false},
		{"members out of the sorted order Metacontroller writes them in", `{"b":true,"labels":{"a":"1"},"s":"a","named":"TCP","i":-3}`, true},
		{"a name repeated after others, out of order", `{"s":"a","b":true,"i":1,"s":"b"}`, false},
		{"an unknown name repeated", `{"zz":1,"s":"a","zz":2}`, false},
		{"a known name and one differing only in case", `{"S":"x","s":"y","b":false,"B":true}`, true},
		{"a repeated name inside an unknown member", `{"other":{"a":1,"a":2}}`, false},
		{"an object for a string", `{"s":{}}`, false},
		{"a list for an object", `{"structs":[[]]}`, false},
		{"not an object", `[]`, false},
	}
	for _, tc := range cases {
		var fast, slow decodeProbe
		taken := decodePruned([]byte(tc.raw), &fast, false)
		slowErr := decodeSlow([]byte(tc.raw), &slow)
		if taken != tc.taken {
			t.Errorf("%s: %s: typed decoder took it: %v, want %v (slow decoder: %v)", tc.reason, tc.raw, taken, tc.taken, slowErr)
		}
		if !taken {
			if diff := cmp.Diff(decodeProbe{}, fast, probeOptions); diff != "" {
				t.Errorf("%s: refused, but left a value behind: %s", tc.reason, diff)
			}
			if slowErr == nil {
				// Refusing what the slow decoder takes costs time, not a
				// wrong answer; the cases say where it is meant.
				t.Logf("%s: refused; the slow decoder takes it", tc.reason)
			}
			continue
		}
		if slowErr != nil {
			t.Errorf("%s: %s: typed decoder took it, the slow decoder refuses it: %v", tc.reason, tc.raw, slowErr)
			continue
		}
		if diff := cmp.Diff(slow, fast, probeOptions); diff != "" {
			t.Errorf("%s: %s: -slow +typed:\n%s", tc.reason, tc.raw, diff)
		}
	}
}

var probeOptions = cmp.Options{
	cmp.AllowUnexported(decodeProbe{}),
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 && a.Format == b.Format }),
}

// agreesWithSlow decodes raw into a new T both ways and reports whether
// the typed decoder took it, and any disagreement: a value left behind by
// a refusal, a document only it takes, or another value (but in what no
// hook reads, withoutUnread).
func agreesWithSlow[T any](raw string) (taken bool, problem string) {
	var fast, slow T
	taken = decodePruned([]byte(raw), &fast, false)
	slowErr := decodeSlow([]byte(raw), &slow)
	switch {
	case !taken && !reflect.ValueOf(&fast).Elem().IsZero():
		return taken, fmt.Sprintf("refused, but left %+v behind", fast)
	case !taken:
		return taken, ""
	case slowErr != nil:
		return taken, fmt.Sprintf("taken as %+v, the slow decoder refuses it: %v", fast, slowErr)
	}
	return taken, cmp.Diff(withoutUnread(&slow), withoutUnread(&fast), cmp.Exporter(func(reflect.Type) bool { return true }))
}

// Types where encoding/json's rules are easy to get wrong (found in review).
type (
	probeNumber struct {
		N json.Number `json:"n"`
	}
	probeAnonTime struct {
		X struct{ metav1.Time } `json:"x"`
	}
	probeTimePtr  *metav1.Time
	probeNamedPtr struct {
		T probeTimePtr `json:"t"`
	}
	probeByteArray struct {
		A [4]byte `json:"a"`
	}
	probeJSONKey string
	probeKeys    struct {
		M map[probeJSONKey]string `json:"m"`
	}
	probeAnyInside struct {
		A [1]any      `json:"a"`
		M map[int]any `json:"m"`
	}
	probeByte       uint8
	probeNamedBytes struct {
		B []probeByte `json:"b"`
	}
	probeStringly struct {
		I int `json:"i,string"`
	}
	probeStringlyOuter struct {
		X probeStringly `json:"x"`
	}
	probeEmbeddedMeta struct{ *metav1.ObjectMeta }
)

// UnmarshalJSON is never called for a map key: encoding/json reads a
// string-kind key as it is.
func (k *probeJSONKey) UnmarshalJSON(b []byte) error {
	*k = probeJSONKey("called:" + string(b))
	return nil
}

// TestDecodeTypedWideStruct: in a struct of more members than
// structMembers has bits for, a name repeated past them is refused by the
// name set, one before them by its bit (the request then takes the slow
// path), and the rest decodes as sigs.k8s.io/json decodes it.
func TestDecodeTypedWideStruct(t *testing.T) {
	fields := make([]reflect.StructField, 150)
	for n := range fields {
		fields[n] = reflect.StructField{Name: fmt.Sprintf("F%d", n), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(fmt.Sprintf(`json:"f%d"`, n))}
	}
	wide := reflect.StructOf(fields)
	cases := []struct {
		reason, raw string
		taken       bool
	}{
		{"members on both sides of the bits, in and out of order", `{"f149":"z","f0":"a","f127":"b","f128":"c","f140":"d"}`, true},
		{"a member past the bits repeated", `{"f140":"a","f1":"b","f140":"c"}`, false},
		{"a member within the bits repeated", `{"f127":"a","f140":"b","f127":"c"}`, false},
		{"an unknown name among them repeated", `{"x":1,"f140":"b","x":2}`, false},
	}
	for _, tc := range cases {
		fast, slow := reflect.New(wide), reflect.New(wide)
		taken := decodePruned([]byte(tc.raw), fast.Interface(), false)
		slowErr := decodeSlow([]byte(tc.raw), slow.Interface())
		if taken != tc.taken {
			t.Errorf("%s: %s: typed decoder took it: %v, want %v (slow decoder: %v)", tc.reason, tc.raw, taken, tc.taken, slowErr)
			continue
		}
		if taken && !reflect.DeepEqual(fast.Interface(), slow.Interface()) {
			t.Errorf("%s: typed decoder gave %+v, slow decoder %+v", tc.reason, fast.Elem(), slow.Elem())
		}
	}
}

// TestDecodeTypedEdgeTypes: on these types the typed decoder refuses, or
// decodes what sigs.k8s.io/json decodes.
func TestDecodeTypedEdgeTypes(t *testing.T) {
	cases := []struct {
		reason string
		decode func() (bool, string)
		taken  bool
	}{
		{"json.Number: encoding/json checks the string to be a number", func() (bool, string) { return agreesWithSlow[probeNumber](`{"n":"abc"}`) }, false},
		{"an unnamed struct embedding a Time: encoding/json calls no promoted method", func() (bool, string) { return agreesWithSlow[probeAnonTime](`{"x":"2020-01-01T00:00:00Z"}`) }, false},
		{"a named pointer type has no methods", func() (bool, string) { return agreesWithSlow[probeNamedPtr](`{"t":"2020-01-01T00:00:00Z"}`) }, false},
		{"a byte array is not base64 to encoding/json", func() (bool, string) { return agreesWithSlow[probeByteArray](`{"a":"AQIDBA=="}`) }, false},
		{"a map key's UnmarshalJSON is not called", func() (bool, string) { return agreesWithSlow[probeKeys](`{"m":{"a":"b"}}`) }, true},
		{"an interface in an array", func() (bool, string) { return agreesWithSlow[probeAnyInside](`{"a":[1]}`) }, false},
		{"an interface in a map with integer keys", func() (bool, string) { return agreesWithSlow[probeAnyInside](`{"m":{"1":2}}`) }, false},
		{"a slice of a named byte type", func() (bool, string) { return agreesWithSlow[probeNamedBytes](`{"b":"aGk="}`) }, false},
		{"a ,string field", func() (bool, string) { return agreesWithSlow[probeStringlyOuter](`{"x":{"i":"12"}}`) }, false},
		{"a dropped member still makes the embedded pointer on its way", func() (bool, string) {
			return agreesWithSlow[probeEmbeddedMeta](`{"managedFields":[]}`)
		}, true},
	}
	for _, tc := range cases {
		taken, problem := tc.decode()
		if problem != "" {
			t.Errorf("%s: %s", tc.reason, problem)
		}
		if taken != tc.taken {
			t.Errorf("%s: taken %v, want %v", tc.reason, taken, tc.taken)
		}
	}
}

// TestDecodeTypedRefusesFilledValues: encoding/json merges into what a
// value holds (appends to no slice, adds to a map, fills a pointer's
// pointee); the typed decoder builds from zero, so it refuses a value that
// is not zero and the slow decoder does it.
func TestDecodeTypedRefusesFilledValues(t *testing.T) {
	type filled struct {
		L []string          `json:"l"`
		M map[string]string `json:"m"`
		P *decodeProbeItem  `json:"p"`
	}
	raw := []byte(`{"l":["new"],"m":{"b":"2"},"p":{}}`)
	into := filled{L: []string{"old"}, M: map[string]string{"a": "1"}, P: &decodeProbeItem{Name: "kept"}}
	if decodePruned(raw, &into, false) {
		t.Fatalf("decodePruned took a filled value: %+v", into)
	}
	want := filled{L: []string{"new"}, M: map[string]string{"a": "1", "b": "2"}, P: &decodeProbeItem{Name: "kept"}}
	if err := DecodeObject(raw, &into); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, into); diff != "" {
		t.Errorf("DecodeObject into a filled value: -want +got:\n%s", diff)
	}
}

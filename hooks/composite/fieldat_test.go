package composite

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type fieldAtMarshaler int

func (fieldAtMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"m"`), nil }

type fieldAtText string

func (t fieldAtText) MarshalText() ([]byte, error) { return []byte(strings.ToUpper(string(t))), nil }

type fieldAtName string

type fieldAtPointed struct {
	P string `json:"p"`
}

type fieldAtStruct struct {
	*fieldAtPointed                    // embedded by pointer: no shortcut for p
	I               int                `json:"i"`
	I8              int8               `json:"i8"`
	I16             int16              `json:"i16,omitempty"`
	I32             int32              `json:"i32"`
	I64             int64              `json:"i64,omitempty"`
	U               uint               `json:"u"`
	U8              uint8              `json:"u8"`
	U16             uint16             `json:"u16"`
	U32             uint32             `json:"u32,omitempty"`
	U64             uint64             `json:"u64"`
	UP              uintptr            `json:"up"`
	B               bool               `json:"b"`
	S               string             `json:"s"`
	Named           fieldAtName        `json:"named,omitempty"`
	PI32            *int32             `json:"pi32,omitempty"`
	PS              *string            `json:"ps"`
	PB              *bool              `json:"pb,omitempty"`
	M               map[string]string  `json:"m"`
	MO              map[string]string  `json:"mo,omitempty"`
	EmptyDir        map[string]string  `json:"emptyDir"`
	Marshal         fieldAtMarshaler   `json:"marshal"`
	Text            fieldAtText        `json:"text"`
	PP              **int              `json:"pp"`
	PM              *map[string]string `json:"pm"`
	Zero            int                `json:"zero,omitzero"`
	F               float64            `json:"f"`
	Inner           fieldAtPointed     `json:"inner"`
	Items           []fieldAtPointed   `json:"items,omitempty"`
	PItems          []*fieldAtPointed  `json:"pitems"`
	Strs            []string           `json:"strs"`
	Bytes           []byte             `json:"bytes"`
	Data            map[string][]byte  `json:"data,omitempty"`
	Q               resource.Quantity  `json:"q"`
	T               metav1.Time        `json:"t,omitzero"`
	IOS             intstr.IntOrString `json:"ios"`
	Ifaces          []any              `json:"ifaces"`
}

// fieldAtOmitEmptyDir: an omitempty map named emptyDir, which encoding/json
// leaves out when empty, so cleanJSON has no {} to keep.
type fieldAtOmitEmptyDir struct {
	EmptyDir map[string]string `json:"emptyDir,omitempty"`
	S        string            `json:"s"`
}

// TestFieldShortcutCoversPlainFields: the fields that get a writer from
// memory are the plain ones at a fixed offset, structs and lists of them,
// and the known types (an omitzero Time too); marshalers, TextMarshalers,
// pointers to pointers or maps, other omitzero fields, floats, lists of
// interfaces and fields behind an embedded pointer keep the reflective
// path.
func TestFieldShortcutCoversPlainFields(t *testing.T) {
	fields, ok := structFields(reflect.TypeFor[fieldAtStruct](), map[reflect.Type]*plan{})
	if !ok {
		t.Fatal("no plan for the test struct")
	}
	var got []string
	for _, f := range fields {
		if f.write != nil {
			got = append(got, f.name)
		}
	}
	want := []string{"b", "bytes", "data", "emptyDir", "i", "i16", "i32", "i64", "i8", "inner", "ios", "items", "m", "mo", "named", "pb", "pi32", "pitems", "ps", "q", "s", "strs", "t", "u", "u16", "u32", "u64", "u8", "up"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields with a shortcut (-want +got):\n%s", diff)
	}
}

// TestFieldShortcutWritesAsEncodingJSON: values at the edges of each kind
// encode, through the shortcut, as encoding/json and cleanJSON write them.
func TestFieldShortcutWritesAsEncodingJSON(t *testing.T) {
	i32, s, b, one := int32(-5), "<x>", false, 1
	pone := &one
	cases := map[string]struct {
		reason string
		value  fieldAtStruct
	}{
		"Zero": {reason: "every field at its zero value: omitempty ones left out, nil pointers and maps dropped as null, zeros written"},
		"Extremes": {reason: "the largest and smallest value of each integer size, and a sign bit set",
			value: fieldAtStruct{I: math.MinInt, I8: math.MinInt8, I16: math.MaxInt16, I32: math.MinInt32, I64: math.MaxInt64,
				U: math.MaxUint, U8: math.MaxUint8, U16: math.MaxUint16, U32: math.MaxUint32, U64: math.MaxUint64, UP: 7}},
		"Strings": {reason: "HTML characters, invalid UTF-8, U+2028 and quotes are escaped as encoding/json escapes them",
			value: fieldAtStruct{S: "<a & b>\xff\u2028\"", Named: "n\\m", B: true}},
		"Pointers": {reason: "pointers to a negative number, an HTML string and false are written; a pointer to a pointer and to a map take the reflective path",
			value: fieldAtStruct{PI32: &i32, PS: &s, PB: &b, PP: &pone, PM: &map[string]string{"k": "v"}}},
		"Maps": {reason: "maps sorted by key; an empty map is dropped, omitempty or not, but for emptyDir's {}",
			value: fieldAtStruct{M: map[string]string{"z": "1", "a": "<2>"}, MO: map[string]string{}, EmptyDir: map[string]string{}}},
		"Methods": {reason: "a marshaler and a TextMarshaler are written by their methods",
			value: fieldAtStruct{Marshal: 3, Text: "t", Zero: 2, F: 0.5, fieldAtPointed: &fieldAtPointed{P: "p"}}},
		"Nested": {reason: "a struct, lists of structs (an empty one {}, a nil pointer null), strings and interfaces, bytes, a map of bytes (a nil value left out), the known types",
			value: fieldAtStruct{Inner: fieldAtPointed{P: "<i>"}, Items: []fieldAtPointed{{P: "a"}, {}}, PItems: []*fieldAtPointed{nil, {P: "b"}},
				Strs: []string{"x", ""}, Bytes: []byte("hi"), Data: map[string][]byte{"k": []byte("v"), "nil": nil, "empty": {}},
				Q: resource.MustParse("1.5Gi"), T: metav1.NewTime(time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)), IOS: intstr.FromString("50%"),
				Ifaces: []any{nil, 1, "<s>", map[string]any{}}}},
		"EmptyLists": {reason: "empty lists are [], empty bytes \"\", an empty omitempty list and map left out, a zero int-or-string 0",
			value: fieldAtStruct{Items: []fieldAtPointed{}, PItems: []*fieldAtPointed{}, Strs: []string{}, Bytes: []byte{}, Data: map[string][]byte{}, Ifaces: []any{}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkSameAsTwoPass(t, name+" ("+tc.reason+")", &tc.value, false)
		})
	}
	checkSameAsTwoPass(t, "an empty omitempty emptyDir map is left out", &fieldAtOmitEmptyDir{EmptyDir: map[string]string{}}, false)
	checkSameAsTwoPass(t, "a set omitempty emptyDir map is written", &fieldAtOmitEmptyDir{EmptyDir: map[string]string{"a": ""}}, false)
}

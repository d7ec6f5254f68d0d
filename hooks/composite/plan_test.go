package composite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"
)

// checkSameAsTwoPass fails unless encodeTyped writes v as the two-pass
// encoder (encoding/json, then cleanJSON) does, errors included.
func checkSameAsTwoPass(t *testing.T, what string, v any, dropStatus bool) {
	t.Helper()
	want, wantErr := encodeClean(v, dropStatus)
	got, gotErr := encodeTyped(v, dropStatus)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("%s: encodeTyped error = %v, two-pass error = %v", what, gotErr, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s (dropStatus %v): encodeTyped differs from the two-pass encoder\n got %s\nwant %s", what, dropStatus, got, want)
	}
}

// randomStrings are what the filler writes into strings (and map keys): the
// names the cleaner treats specially, HTML characters, escapes, invalid
// UTF-8, U+2028.
var randomStrings = []string{"", "a", "b", "emptyDir", "status", "metadata", "<&>", "x\u2028y", "\xff\xfe", "é", "tab\there", "\x01", `quote"back\slash`, "Z", "zz"}

func newFiller(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 2).MaxDepth(12).Funcs(
		func(s *string, c randfill.Continue) { *s = randomStrings[c.Intn(len(randomStrings))] },
		func(q *resource.Quantity, c randfill.Continue) {
			*q = resource.MustParse([]string{"0", "1", "1000m", "250m", "1Gi", "1024Mi", "1.5", "2e3", "100M"}[c.Intn(9)])
		},
		func(tm *metav1.Time, c randfill.Continue) {
			if c.Intn(3) > 0 {
				*tm = metav1.NewTime(time.Unix(c.Int63n(4e9), 0))
			}
		},
		func(tm *metav1.MicroTime, c randfill.Continue) {
			if c.Intn(3) > 0 {
				*tm = metav1.NewMicroTime(time.Unix(c.Int63n(4e9), c.Int63n(1e9)))
			}
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Intn(2) == 0 {
				*v = intstr.FromInt32(c.Int31n(200) - 100)
			} else {
				*v = intstr.FromString(randomStrings[c.Intn(len(randomStrings))])
			}
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			r.Raw = []byte([]string{"", `{"a":null,"b":{},"c":[{}],"emptyDir":{}}`, `[1,{"x":{}}]`, `"<s>"`}[c.Intn(4)])
			if len(r.Raw) == 0 {
				r.Raw = nil
			}
		},
		func(f *metav1.FieldsV1, c randfill.Continue) { f.Raw = []byte(`{"f:spec":{"f:x":{}}}`) },
	)
}

// TestEncodeTypedMatchesTwoPassOnRandomObjects: objects of every kind the
// hooks write, filled at random (specials, nils, empty maps, quantities,
// times, int-or-strings), encode as the two-pass encoder encodes them.
func TestEncodeTypedMatchesTwoPassOnRandomObjects(t *testing.T) {
	kinds := []func() any{
		func() any { return &appsv1.StatefulSet{} },
		func() any { return &corev1.Service{} },
		func() any { return &corev1.ConfigMap{} },
		func() any { return &corev1.Secret{} },
		func() any { return &corev1.Pod{} },
		func() any { return &corev1.PersistentVolumeClaim{} },
		func() any { return &batchv1.CronJob{} },
		func() any { return &batchv1.Job{} },
		func() any { return &policyv1.PodDisruptionBudget{} },
		func() any { return &metav1.Condition{} },
	}
	rounds := 300
	if testing.Short() {
		rounds = 30
	}
	for seed := range int64(rounds) {
		for _, kind := range kinds {
			obj := kind()
			newFiller(seed).Fill(obj)
			what := fmt.Sprintf("%T seed %d", obj, seed)
			checkSameAsTwoPass(t, what, obj, true)
			checkSameAsTwoPass(t, what, obj, false)
		}
	}
}

// Types with the encoding/json rules a Kubernetes object rarely uses.
type (
	embeddedA struct {
		Shared string
		OnlyA  string `json:"onlyA,omitempty"`
	}
	embeddedB struct {
		Shared string
		Tagged string `json:"tagged"`
	}
	embeddedC struct {
		Tagged string
	}
	pointerMarshaler struct{ N int }
	textKey          string
	zeroer           struct{ N int }
	edgeCases        struct {
		edgeCasesNoString
		Renamed string `json:"z-renamed"`
		Skipped string `json:"-"`
		Dash    string `json:"-,"`
		Quoted  int    `json:"quoted,string"`
	}
	withoutString struct {
		edgeCasesNoString
	}
	edgeCasesNoString struct {
		embeddedA
		embeddedB
		*embeddedC
		Untagged  int
		Float     float64           `json:"float,omitempty"`
		Any       any               `json:"any"`
		ByPointer pointerMarshaler  `json:"byPointer"`
		TextKeys  map[textKey]int   `json:"textKeys"`
		IntKeys   map[int]string    `json:"intKeys"`
		Zero      zeroer            `json:"zero,omitzero"`
		Bytes     []byte            `json:"bytes"`
		Array     [2]map[string]int `json:"array"`
		EmptyDir  *struct{}         `json:"emptyDir"`
		Nested    []*edgeCasesNoString
	}
)

func (p *pointerMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`{"n": %d, "null": null, "html": "<b>"}`, p.N)), nil
}
func (k textKey) MarshalText() ([]byte, error) { return []byte(strings.ToUpper(string(k))), nil }
func (z zeroer) IsZero() bool                  { return z.N == 7 }

// TestEncodeTypedMatchesTwoPassOnEdgeCases: embedded fields that collide,
// "-" tags, ",string", floats, interfaces, pointer-receiver marshalers
// (addressable or not), TextMarshaler and int map keys, omitzero with an
// IsZero method, bytes, arrays, recursion: as encoding/json and cleanJSON.
func TestEncodeTypedMatchesTwoPassOnEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := range 300 {
		var v edgeCasesNoString
		newFiller(int64(i)).Funcs(func(a *any, c randfill.Continue) {
			*a = []any{nil, 1.5, "s", map[string]any{"emptyDir": map[string]any{}, "n": nil}, []any{nil, map[string]any{}}}[c.Intn(5)]
		}).Fill(&v)
		v.Zero.N = rng.Intn(2) * 7
		checkSameAsTwoPass(t, fmt.Sprintf("edgeCasesNoString %d", i), &v, false)
		checkSameAsTwoPass(t, fmt.Sprintf("edgeCasesNoString %d by value", i), v, false)
		checkSameAsTwoPass(t, fmt.Sprintf("withoutString %d", i), &withoutString{v}, true)
		checkSameAsTwoPass(t, fmt.Sprintf("map of them %d", i), map[string]edgeCasesNoString{"emptyDir": v, "x": {}}, false)
		e := edgeCases{edgeCasesNoString: v, Quoted: i, Dash: "d", Renamed: "r"}
		checkSameAsTwoPass(t, fmt.Sprintf("edgeCases %d", i), &e, true)
	}
	checkSameAsTwoPass(t, "nil", nil, false)
	checkSameAsTwoPass(t, "nil pointer", (*corev1.Pod)(nil), true)
	checkSameAsTwoPass(t, "a string", "<x>", false)
	checkSameAsTwoPass(t, "unsupported", map[string]any{"f": func() {}}, false)
}

// TestAppendStringCachesLongStringsExactly: a long string comes out as
// encoding/json quotes it, the first time (quoted and stored) and every
// time after (copied from the cache), and two long strings that differ in
// one byte get their own quoted forms.
func TestAppendStringCachesLongStringsExactly(t *testing.T) {
	base := strings.Repeat("set -e && echo \"<x>\"\n\u2028\xff", 200)
	for _, s := range []string{base, base[:len(base)-1] + "y", base} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			if got := appendString([]byte("prefix"), s); !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Fatalf("round %d: appendString(%d bytes) differs from encoding/json", round, len(s))
			}
		}
		if _, cached := quotedStrings.Load(s); !cached {
			t.Errorf("a %d-byte string was not cached", len(s))
		}
	}
}

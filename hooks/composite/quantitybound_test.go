package composite

import (
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"metahooks/api"
	dbv1 "metahooks/api/v1"
	"metahooks/api/v1alpha1"
)

// TestQuantityBounded: the hand-written check and api.QuantityPattern (with
// api.MaxQuantityLength) agree, value by value.
func TestQuantityBounded(t *testing.T) {
	pattern := regexp.MustCompile(api.QuantityPattern)
	cases := []struct {
		value, reason string
		want          bool
	}{
		{"100m", "milli suffix", true},
		{"1.5Gi", "binary suffix with a fraction", true},
		{"1e3", "an exponent", true},
		{"1E2", "an upper-case exponent", true},
		{"1E", "E alone is exa", true},
		{"0.5", "a fraction", true},
		{".5", "a fraction without its integer", true},
		{"1.", "a trailing dot, as ParseQuantity takes", true},
		{"+1", "a sign", true},
		{"-1e-99", "two exponent digits, the bound", true},
		{"1e-999", "three exponent digits", false},
		{"1e-99999999", "issue 30's stall", false},
		{strings.Repeat("1", 64), "64 bytes, the bound", true},
		{strings.Repeat("1", 65), "65 bytes", false},
		{"1e", "an exponent without digits", false},
		{"1e1.5", "a fractional exponent, which ParseQuantity refuses", false},
		{".", "no digits", false},
		{"1Ki", "Ki", true},
		{"1K", "K alone is no suffix", false},
	}
	for _, c := range cases {
		t.Run(c.value[:min(len(c.value), 16)], func(t *testing.T) {
			got := quantityTextBounded([]byte(c.value))
			if got != c.want {
				t.Errorf("%s: quantityTextBounded(%.20q) = %v, want %v", c.reason, c.value, got, c.want)
			}
			if regexpGot := len(c.value) <= api.MaxQuantityLength && pattern.MatchString(c.value); regexpGot != got {
				t.Errorf("%s: api.QuantityPattern says %v, the check %v", c.reason, regexpGot, got)
			}
		})
	}
}

// TestUnboundedQuantityRefused: issue 30's pathological quantity gets a 422
// naming the field on both decode paths (before: ~50 s of CPU, then 200).
func TestUnboundedQuantityRefused(t *testing.T) {
	parent := `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"n"},"spec":{"image":"x","resources":{"limits":{"cpu":"1e-99999999"}}}}`
	answer, _ := checkPathsAgree(t, "MyApp", []byte(`{"parent":`+parent+`}`))
	if answer.Code != 422 || !strings.Contains(answer.Reads[0], `spec.resources.limits["cpu"]: `+unboundedQuantity) {
		t.Errorf("answer %+v, want 422 naming spec.resources.limits[\"cpu\"]", answer)
	}
}

// TestEveryQuantityFieldBounded: every resource.Quantity reachable from
// either parent (spec and status, found by reflection, so a field added later is
// covered too) refuses a value past the bound with a 422 that names it, on
// both decode paths (checkPathsAgree), and so does a quantity of an
// observed child the hooks read, with a 400. Refusing allocates little:
// before the bound, one such MyApp value cost 50.2 s of CPU and 307 MB.
func TestEveryQuantityFieldBounded(t *testing.T) {
	values := map[string]string{
		"exponent":       `"1e-99999999"`,
		"long mantissa":  `"` + strings.Repeat("1", api.MaxQuantityLength+1) + `"`,
		"bare number":    `1e-99999999`,
		"three digits":   `"1e100"`,
		"suffix alone":   `"Ki"`,
		"sign alone":     `"+"`,
		"negative scale": `"-1e-999"`,
	}
	parents := []struct {
		kind, base string
		typ        reflect.Type
	}{
		{"MyApp", `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"n"},%s}`, reflect.TypeFor[v1alpha1.MyApp]()},
		{"Database", `{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","namespace":"n"},%s}`, reflect.TypeFor[dbv1.Database]()},
	}
	for _, p := range parents {
		fields := quantityFields(p.typ, nil)
		if len(fields) == 0 {
			t.Fatalf("%s: no quantity field found: the walk checks nothing", p.kind)
		}
		for _, path := range fields {
			for name, value := range values {
				t.Run(p.kind+"/"+strings.Join(path, ".")+"/"+name, func(t *testing.T) {
					member := nestedMember(path, value)
					if !strings.HasPrefix(member, `"spec":`) && !strings.HasPrefix(member, `"status":`) {
						t.Fatalf("%s: a quantity outside spec and status", member)
					}
					body := []byte(`{"parent":` + fmt.Sprintf(p.base, member) + `}`)
					answer, _ := checkPathsAgree(t, p.kind, body)
					last := path[len(path)-1] + ": "
					if last == "{}: " {
						last = path[len(path)-2] + `["cpu"]: ` // nestedMember's key
					}
					if answer.Code != 422 || len(answer.Reads) == 0 || !strings.Contains(answer.Reads[0], last+"malformed quantity") {
						t.Errorf("%s = %s: answer %+v, want 422 naming %s", strings.Join(path, "."), value, answer, last)
					}
				})
			}
		}
	}
	// An observed StatefulSet's volume claim size, which both hooks read, is
	// a malformed child (400); its containers' resources, which both
	// Prefetches drop unread, are never parsed and cost nothing (200).
	const claim = `"StatefulSet.apps/v1":{"s":{"metadata":{"name":"s"},"spec":{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":%s}}}}]}}}`
	const container = `"StatefulSet.apps/v1":{"s":{"metadata":{"name":"s"},"spec":{"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":%s}}}]}}}}}`
	const database = `{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","namespace":"n"},"spec":{"size":"small"}}`
	for name, value := range values {
		for _, c := range []struct {
			kind, parent, child string
			want                int
		}{
			{"Database", database, claim, 400},
			{"MyApp", pathsParent, claim, 400},
			{"Database", database, container, 200},
			{"MyApp", pathsParent, container, 200},
		} {
			t.Run("ObservedStatefulSet/"+c.kind+"/"+strconv.Itoa(c.want)+"/"+name, func(t *testing.T) {
				body := []byte(`{"parent":` + c.parent + `,"children":{` + fmt.Sprintf(c.child, value) + `}}`)
				answer, _ := checkPathsAgree(t, c.kind, body)
				if answer.Code != c.want {
					t.Errorf("%s, observed StatefulSet %s with %s: answer %+v, want %d", c.kind, c.child, value, answer, c.want)
				}
			})
		}
	}
	t.Run("Allocations", func(t *testing.T) {
		body := []byte(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"n"},"spec":{"image":"x","resources":{"limits":{"cpu":"1e-99999999"}}}}}`)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 10 {
			for _, decode := range []func([]byte, *Prefetch) (*Request, error){DecodeRequestPrefetching, fallbackPath} {
				req, err := decode(body, pathPrefetches["MyApp"])
				if err == nil {
					err = req.DecodeParent(&v1alpha1.MyApp{}, myAppKind)
				}
				if statusOf(err) != 422 {
					t.Fatalf("answer %v, want 422", err)
				}
			}
		}
		runtime.ReadMemStats(&after)
		const bound = 4 << 20 // 20 refusals; a parse of the value allocates hundreds of MB
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("20 refusals allocated %d bytes", got)
		if got > bound {
			t.Errorf("20 refusals of limits.cpu 1e-99999999 allocated %d bytes, want at most %d", got, bound)
		}
	})
}

// quantityFields is the JSON path of every resource.Quantity in typ:
// struct members by their JSON names, "{}" a map's values (the key "cpu"),
// "[]" a list's items.
func quantityFields(typ reflect.Type, path []string) [][]string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == reflect.TypeFor[resource.Quantity]() {
		return [][]string{slices.Clone(path)}
	}
	if len(path) > 12 {
		return nil
	}
	var found [][]string
	switch typ.Kind() {
	case reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" && f.Anonymous {
				found = append(found, quantityFields(f.Type, path)...)
				continue
			}
			if name == "" {
				name = f.Name
			}
			found = append(found, quantityFields(f.Type, append(path, name))...)
		}
	case reflect.Map:
		found = append(found, quantityFields(typ.Elem(), append(path, "{}"))...)
	case reflect.Slice, reflect.Array:
		found = append(found, quantityFields(typ.Elem(), append(path, "[]"))...)
	}
	return found
}

// nestedMember is the JSON member that sets path to value: `"a":{"b":v}`.
func nestedMember(path []string, value string) string {
	inner := value
	for i := len(path) - 1; i > 0; i-- {
		switch path[i] {
		case "{}":
			inner = `{"cpu":` + inner + `}`
		case "[]":
			inner = `[` + inner + `]`
		default:
			inner = `{"` + path[i] + `":` + inner + `}`
		}
	}
	return `"` + path[0] + `":` + inner
}

package composite

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"

	"metahooks/api"
)

var quantityType = reflect.TypeOf(resource.Quantity{})

// quantityErrorPath finds the JSON path of a quantity that does not parse.
// The decoders return resource.Quantity's own error ("quantities must match
// the regular expression ...") with no path, so on that error path the raw
// object is walked alongside the Go type of into: the first quantity field,
// in the text's order, whose value fails resource.ParseQuantity is the
// one. "" if none is found.
func quantityErrorPath(raw []byte, into reflect.Type) string {
	path, _ := findQuantity(raw, into, func(text []byte) bool {
		value, ok := quantityValue(text)
		return ok && quantityParses(value)
	})
	return path
}

// unboundedQuantityPath finds the JSON path of the first quantity, in the
// text's order, that quantityBounded refuses; false if none (or raw is not
// JSON: the decoder says so). Nothing is parsed as a quantity on the way.
func unboundedQuantityPath(raw []byte, into reflect.Type) (path, reason string, found bool) {
	reason = malformedQuantity
	path, found = findQuantity(raw, into, func(text []byte) bool {
		value, ok := quantityValue(text)
		if !ok {
			return true // the wrong type: the decoder's error names it
		}
		var quantity string
		switch v := value.(type) {
		case json.Number:
			quantity = string(v)
		case string:
			quantity = strings.TrimSpace(v) // as UnmarshalJSON trims; the quotes are gone
		default:
			return true // null
		}
		if quantityTextBounded([]byte(quantity)) {
			return true
		}
		if len(quantity) > api.MaxQuantityLength || strings.ContainsAny(quantity, "eE") {
			reason = unboundedQuantity
		}
		return false
	})
	return path, reason, found
}

// quantityValue is a quantity's JSON text as a string, a json.Number or
// nil (null); false for another type. Only a string with an escape is
// decoded.
func quantityValue(text []byte) (any, bool) {
	switch {
	case len(text) == 0:
		return nil, false
	case text[0] == '"':
		if bytes.IndexByte(text, '\\') < 0 {
			return string(text[1 : len(text)-1]), true
		}
		var v string
		return v, json.Unmarshal(text, &v) == nil
	case text[0] == 'n':
		return nil, true
	case text[0] == '-' || text[0] >= '0' && text[0] <= '9':
		return json.Number(text), true
	}
	return nil, false
}

// findQuantity walks raw as a value of type t (issue 30: it decoded raw
// whole into an interface first, twice the typed estimate for 3,900
// labels on a Database, which hold no quantity) and returns the path of
// the first quantity whose JSON text good refuses. Only members and
// elements whose type can hold a quantity are walked into; the path is
// built only for the one found.
func findQuantity(raw []byte, t reflect.Type, good func(text []byte) bool) (string, bool) {
	if !hasQuantityCached(t) {
		return "", false // a Request, a type with no quantity: no second reading
	}
	s := newScanner(raw)
	defer s.release()
	q := quantityWalk{s: s, good: good}
	q.walk(s.ws(0), t)
	if !q.found {
		return "", false
	}
	return reversedPath(q.rev), true
}

// quantityWalk is findQuantity's walk: rev is the path of the quantity
// found, innermost first.
type quantityWalk struct {
	s     *scanner
	good  func(text []byte) bool
	found bool
	rev   []string
}

// walk reads the value at i as a t and returns the offset after it; false
// once a quantity is found or the text is not JSON.
func (q *quantityWalk) walk(i int, t reflect.Type) (int, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	data := q.s.data
	if i >= len(data) {
		return i, false
	}
	if t == quantityType {
		end, ok := q.s.value(i, false)
		if ok && !q.good(data[i:end]) {
			q.found = true
			return end, false
		}
		return end, ok
	}
	if !hasQuantityCached(t) {
		return q.s.value(i, false)
	}
	switch {
	case t.Kind() == reflect.Struct && data[i] == '{':
		fields := fieldsOf(t)
		return q.s.eachMember(i, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
			name, ok := q.s.name(nameAt, nameEnd, plain)
			if !ok {
				return nameAt, false
			}
			ft, known := fields[name]
			if !known {
				return q.s.value(at, false)
			}
			end, ok := q.walk(at, ft)
			if q.found {
				q.rev = append(q.rev, strings.Clone(name))
			}
			return end, ok
		})
	case t.Kind() == reflect.Map && data[i] == '{':
		return q.s.eachMember(i, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
			name, ok := q.s.name(nameAt, nameEnd, plain)
			if !ok {
				return nameAt, false
			}
			end, ok := q.walk(at, t.Elem())
			if q.found {
				q.rev = append(q.rev, "["+strconv.Quote(name)+"]")
			}
			return end, ok
		})
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && data[i] == '[':
		n := 0
		return q.s.elements(i, func(at int) (int, bool) {
			end, ok := q.walk(at, t.Elem())
			if q.found {
				q.rev = append(q.rev, "["+strconv.Itoa(n)+"]")
			}
			n++
			return end, ok
		})
	}
	return q.s.value(i, false)
}

// hasQuantityCached is hasQuantity, worked out once per type.
func hasQuantityCached(t reflect.Type) bool {
	if v, ok := hasQuantities.Load(t); ok {
		return v.(bool)
	}
	v := hasQuantity(t, map[reflect.Type]bool{})
	hasQuantities.Store(t, v)
	return v
}

var hasQuantities sync.Map // reflect.Type -> bool

// hasQuantity reports whether a value of type t can hold a quantity.
func hasQuantity(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if hasQuantity(t.Field(i).Type, seen) {
				return true
			}
		}
	case reflect.Map, reflect.Slice, reflect.Array:
		return hasQuantity(t.Elem(), seen)
	}
	return false
}

func quantityParses(value any) bool {
	switch v := value.(type) {
	case nil, float64, json.Number:
		return true
	case string:
		_, err := resource.ParseQuantity(v)
		return err == nil
	default:
		return false
	}
}

package composite

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"metahooks/api"
)

var quantityType = reflect.TypeOf(resource.Quantity{})

// quantityErrorPath finds the JSON path of a quantity that does not parse.
// The decoders return resource.Quantity's own error ("quantities must match
// the regular expression ...") with no path, so on that error path the raw
// object is walked alongside the Go type of into: the first quantity field
// whose value fails resource.ParseQuantity is the one. "" if none is found.
func quantityErrorPath(raw []byte, into reflect.Type) string {
	value, ok := decodeAny(raw)
	if !ok {
		return ""
	}
	return findBadQuantity(value, into, "", quantityParses)
}

// unboundedQuantityPath finds the JSON path of the first quantity, in the
// order quantityErrorPath walks, that quantityBounded refuses; false if
// none (or raw is not JSON: the decoder says so). Nothing is parsed as a
// quantity on the way.
func unboundedQuantityPath(raw []byte, into reflect.Type) (path, reason string, found bool) {
	if !hasQuantity(into, map[reflect.Type]bool{}) {
		return "", "", false // a Request, a type with no quantity: no second reading
	}
	value, ok := decodeAny(raw)
	if !ok {
		return "", "", false
	}
	reason = malformedQuantity
	path = findBadQuantity(value, into, "", func(v any) bool {
		var text string
		switch v := v.(type) {
		case json.Number:
			text = string(v)
		case string:
			text = strings.TrimSpace(v) // as UnmarshalJSON trims; the quotes are gone
		default:
			return true // null, or the wrong type: the decoder's error names it
		}
		if quantityTextBounded([]byte(text)) {
			return true
		}
		if len(text) > api.MaxQuantityLength || strings.ContainsAny(text, "eE") {
			reason = unboundedQuantity
		}
		return false
	})
	return path, reason, path != ""
}

// decodeAny reads raw into an interface, numbers kept as their text.
func decodeAny(raw []byte) (any, bool) {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var value any
	if decoder.Decode(&value) != nil {
		return nil, false
	}
	return value, true
}

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

func findBadQuantity(value any, t reflect.Type, path string, good func(any) bool) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		if !good(value) {
			return path
		}
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		object, ok := value.(map[string]any)
		if !ok {
			return ""
		}
		return findInStruct(object, t, path, good)
	case reflect.Map:
		object, ok := value.(map[string]any)
		if !ok {
			return ""
		}
		keys := make([]string, 0, len(object))
		for key := range object {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			if found := findBadQuantity(object[key], t.Elem(), path+"["+strconv.Quote(key)+"]", good); found != "" {
				return found
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := value.([]any)
		if !ok {
			return ""
		}
		for i, item := range list {
			if found := findBadQuantity(item, t.Elem(), path+"["+strconv.Itoa(i)+"]", good); found != "" {
				return found
			}
		}
	}
	return ""
}

func findInStruct(object map[string]any, t reflect.Type, path string, good func(any) bool) string {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			if found := findBadQuantity(object, f.Type, path, good); found != "" {
				return found
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if value, ok := object[name]; ok {
			if found := findBadQuantity(value, f.Type, join(path, name), good); found != "" {
				return found
			}
		}
	}
	return ""
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

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

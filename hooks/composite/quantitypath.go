package composite

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

var quantityType = reflect.TypeOf(resource.Quantity{})

// quantityErrorPath finds the JSON path of a quantity that does not parse.
// The decoders return resource.Quantity's own error ("quantities must match
// the regular expression ...") with no path, so on that error path the raw
// object is walked alongside the Go type of into: the first quantity field
// whose value fails resource.ParseQuantity is the one. "" if none is found.
func quantityErrorPath(raw []byte, into reflect.Type) string {
	var value any
	if json.Unmarshal(raw, &value) != nil {
		return ""
	}
	return findBadQuantity(value, into, "")
}

func findBadQuantity(value any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		if !quantityParses(value) {
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
		return findInStruct(object, t, path)
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
			if found := findBadQuantity(object[key], t.Elem(), path+"["+strconv.Quote(key)+"]"); found != "" {
				return found
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := value.([]any)
		if !ok {
			return ""
		}
		for i, item := range list {
			if found := findBadQuantity(item, t.Elem(), path+"["+strconv.Itoa(i)+"]"); found != "" {
				return found
			}
		}
	}
	return ""
}

func findInStruct(object map[string]any, t reflect.Type, path string) string {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			if found := findBadQuantity(object, f.Type, path); found != "" {
				return found
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if value, ok := object[name]; ok {
			if found := findBadQuantity(value, f.Type, join(path, name)); found != "" {
				return found
			}
		}
	}
	return ""
}

func quantityParses(value any) bool {
	switch v := value.(type) {
	case nil, float64:
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

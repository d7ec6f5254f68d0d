package api_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"metahooks/api"
)

// quantityFields is every quantity (int-or-string) node of each CRD.
var quantityFields = map[string][]string{
	"example.com_databases.yaml": {"spec.storage", "status.storage"},
	"example.com_myapps.yaml":    {"spec.backup.volumeSize", "spec.resources.limits{}", "spec.resources.requests{}", "spec.storage.size"},
}

// TestCRDQuantityBound: every quantity node of both CRDs the API server gets
// has api.QuantityPattern (the grammar hooks/composite checks before any
// parse, TestQuantityBounded holds the two to each other) and maxLength
// api.MaxQuantityLength, and every CEL rule that parses a field with
// quantity() checks that field's length and pattern first: a pattern
// error does not stop the API server from running the rules
// (apiextensions-apiserver's hasBlockingErr skips them only after a
// TooLong, TooMany, Required, NotSupported or TypeInvalid error), and an
// unguarded rule took 0.007 s for "1e-99999" and 0.081 s for "1e-999999".
func TestCRDQuantityBound(t *testing.T) {
	call := regexp.MustCompile(`quantity\(string\(([^()]+)\)\)`)
	for file, want := range quantityFields {
		t.Run(file, func(t *testing.T) {
			for _, schema := range crdSchemas(t, file) {
				var got []string
				var rules []string
				walkSchema(schema, "", func(path string, node map[string]any) {
					if node["x-kubernetes-int-or-string"] == true {
						got = append(got, path)
						if pattern, _ := node["pattern"].(string); pattern != api.QuantityPattern {
							t.Errorf("%s: pattern %q, want api.QuantityPattern %q", path, pattern, api.QuantityPattern)
						}
						if n, _ := node["maxLength"].(float64); n != api.MaxQuantityLength {
							t.Errorf("%s: maxLength %v, want %d", path, node["maxLength"], api.MaxQuantityLength)
						}
					}
					list, _ := node["x-kubernetes-validations"].([]any)
					for _, v := range list {
						if m, ok := v.(map[string]any); ok {
							rule, _ := m["rule"].(string)
							rules = append(rules, rule)
						}
					}
				})
				slices.Sort(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("quantity nodes (-want +got):\n%s", diff)
				}
				calls := 0
				for _, rule := range rules {
					for _, m := range call.FindAllStringSubmatchIndex(rule, -1) {
						calls++
						field := rule[m[2]:m[3]]
						guard := "string(" + field + ").size() <= 64 && string(" + field + ").matches('" + api.QuantityPattern + "')"
						if at := strings.Index(rule, guard); at < 0 || at > m[0] {
							t.Errorf("rule %q parses %s with quantity() without checking %s first", rule, field, guard)
						}
					}
				}
				if calls == 0 {
					t.Error("no rule parses a field with quantity(): the check above checks nothing")
				}
			}
		})
	}
}

// walkSchema calls visit for every node of schema, with its path as
// TestCRDLimits writes it ("spec.a", "spec.list[]", "spec.map{}").
func walkSchema(schema map[string]any, path string, visit func(string, map[string]any)) {
	visit(path, schema)
	if props, ok := schema["properties"].(map[string]any); ok {
		for name, sub := range props {
			if m, ok := sub.(map[string]any); ok {
				walkSchema(m, strings.TrimPrefix(path+"."+name, "."), visit)
			}
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		walkSchema(items, path+"[]", visit)
	}
	if extra, ok := schema["additionalProperties"].(map[string]any); ok {
		walkSchema(extra, path+"{}", visit)
	}
}

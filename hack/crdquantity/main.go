// Command crdquantity bounds the quantities of controller-gen's CRDs
// (hack/generate.sh runs it on every generated file). controller-gen gives
// every resource.Quantity field the pattern of resource.Quantity's grammar,
// whose exponent has any number of digits: the API server then takes
// "1e-99999999", and resource.ParseQuantity (the hook, CEL's quantity())
// builds a number of 10^99,999,999 from it (issue 30: 100 s of CPU and
// 225 MB for a 2 KB Database). crdquantity replaces that pattern with
// api.QuantityPattern and adds maxLength api.MaxQuantityLength beside it,
// the bounds the hook checks (hooks/composite/quantitybound.go).
//
//	go run ./hack/crdquantity FILE...
//
// Each file is rewritten in place, line by line, so the rest stays byte for
// byte what controller-gen wrote. It fails, writing nothing, when a quantity
// has a pattern it does not know (a controller-gen that changed its
// pattern), when no file holds the known pattern at all, or when the result,
// parsed, has a quantity without both bounds.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"metahooks/api"
)

// controllerGenPattern is what controller-gen (sigs.k8s.io/controller-tools,
// markers for resource.Quantity) writes for every quantity.
const controllerGenPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

const intOrString = "x-kubernetes-int-or-string: true"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crdquantity FILE...")
		os.Exit(2)
	}
	out := map[string][]byte{}
	total := 0
	for _, file := range os.Args[1:] {
		raw, err := os.ReadFile(file)
		if err != nil {
			fail(err.Error())
		}
		rewritten, n, err := rewrite(raw)
		if err != nil {
			fail(file + ": " + err.Error())
		}
		if err := verify(rewritten); err != nil {
			fail(file + ": after the rewrite: " + err.Error())
		}
		out[file] = rewritten
		total += n
	}
	if total == 0 {
		fail("no quantity with controller-gen's pattern " + controllerGenPattern + " in " + strings.Join(os.Args[1:], ", ") +
			": did controller-gen change how it writes resource.Quantity? Update hack/crdquantity")
	}
	for _, file := range os.Args[1:] {
		if err := os.WriteFile(file, out[file], 0o644); err != nil {
			fail(err.Error())
		}
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "crdquantity: "+msg)
	os.Exit(1)
}

// quotedPattern is api.QuantityPattern as a YAML scalar, single-quoted.
func quotedPattern() string {
	return "'" + strings.ReplaceAll(api.QuantityPattern, "'", "''") + "'"
}

// rewrite replaces, in every mapping that holds x-kubernetes-int-or-string
// true, controller-gen's pattern line with maxLength and api.QuantityPattern.
// It returns the new text and how many quantities it bounded.
func rewrite(raw []byte) ([]byte, int, error) {
	lines := strings.Split(string(raw), "\n")
	out := make([]string, 0, len(lines)+16)
	n := 0
	for i, line := range lines {
		key, value, indent, ok := keyAt(line)
		if !ok || key != "pattern" {
			out = append(out, line)
			continue
		}
		keys := mappingKeys(lines, i, indent)
		if !keys[intOrString] {
			out = append(out, line) // a string's own pattern
			continue
		}
		switch {
		case value == controllerGenPattern:
		case value == quotedPattern():
			return nil, 0, fmt.Errorf("line %d: already bounded (run on controller-gen's output only)", i+1)
		default:
			return nil, 0, fmt.Errorf("line %d: a quantity with pattern %s, not controller-gen's %s: update hack/crdquantity", i+1, value, controllerGenPattern)
		}
		if keys["maxLength"] {
			return nil, 0, fmt.Errorf("line %d: the quantity has a maxLength already", i+1)
		}
		pad := strings.Repeat(" ", indent)
		// Keys stay sorted as controller-gen writes them: maxLength sorts
		// right before pattern among a quantity's keys (anyOf, default,
		// description, pattern, x-kubernetes-...).
		out = append(out, pad+"maxLength: "+strconv.Itoa(api.MaxQuantityLength), pad+"pattern: "+quotedPattern())
		n++
	}
	return []byte(strings.Join(out, "\n")), n, nil
}

// keyAt splits a "  key: value" line of a block mapping; list items
// ("- key: value") and other lines are not keys.
func keyAt(line string) (key, value string, indent int, ok bool) {
	trimmed := strings.TrimLeft(line, " ")
	indent = len(line) - len(trimmed)
	if trimmed == "" || strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "#") {
		return "", "", 0, false
	}
	key, value, found := strings.Cut(trimmed, ":")
	if !found || strings.ContainsAny(key, " '\"") {
		return "", "", 0, false
	}
	return key, strings.TrimPrefix(value, " "), indent, true
}

// mappingKeys is the set of keys (and "key: value" lines) of the block
// mapping whose line at is one, at indent: the lines of that indent around
// it, up to a line of smaller indent. Deeper lines (a description's
// continuation, a list's items) are skipped.
func mappingKeys(lines []string, at, indent int) map[string]bool {
	keys := map[string]bool{}
	add := func(line string) bool {
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" {
			return true
		}
		switch d := len(line) - len(trimmed); {
		case d < indent:
			return false
		case d > indent, strings.HasPrefix(trimmed, "- "):
			return true // deeper, or an item of a list the mapping holds
		}
		key, _, _ := strings.Cut(trimmed, ":")
		keys[key] = true
		keys[trimmed] = true
		return true
	}
	for i := at; i >= 0 && add(lines[i]); i-- {
	}
	for i := at + 1; i < len(lines) && add(lines[i]); i++ {
	}
	return keys
}

// verify parses the rewritten CRD: every int-or-string schema with a
// pattern has api.QuantityPattern and maxLength api.MaxQuantityLength, and
// controller-gen's pattern is nowhere.
func verify(raw []byte) error {
	if bytes.Contains(raw, []byte(controllerGenPattern)) {
		return fmt.Errorf("controller-gen's quantity pattern is left")
	}
	var doc any
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		return err
	}
	return walk(doc, "")
}

func walk(node any, path string) error {
	switch node := node.(type) {
	case map[string]any:
		if node["x-kubernetes-int-or-string"] == true && node["pattern"] != nil {
			if node["pattern"] != api.QuantityPattern {
				return fmt.Errorf("%s: pattern %v, want %s", path, node["pattern"], api.QuantityPattern)
			}
			if node["maxLength"] != float64(api.MaxQuantityLength) {
				return fmt.Errorf("%s: maxLength %v, want %d", path, node["maxLength"], api.MaxQuantityLength)
			}
		}
		for key, child := range node {
			if err := walk(child, path+"."+key); err != nil {
				return err
			}
		}
	case []any:
		for i, child := range node {
			if err := walk(child, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	return nil
}

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
// controller-gen writes "---" and then what sigs.k8s.io/yaml marshals, so a
// file parsed and marshalled again is the same text but for the bounds; a
// file for which that does not hold is refused rather than reformatted. It
// fails, writing nothing, also when a quantity has a pattern it does not
// know (a controller-gen that changed its pattern) or a maxLength already,
// and when no file holds a quantity at all. api/crdquantity_test.go checks
// the result.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"metahooks/api"
)

// controllerGenPattern is what controller-gen (sigs.k8s.io/controller-tools,
// markers for resource.Quantity) writes for every quantity.
const controllerGenPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

const header = "---\n"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crdquantity FILE...")
		os.Exit(2)
	}
	out := map[string][]byte{}
	total := 0
	for _, file := range os.Args[1:] {
		rewritten, n, err := rewrite(file)
		if err != nil {
			fail(file + ": " + err.Error())
		}
		out[file] = rewritten
		total += n
	}
	if total == 0 {
		fail("no quantity in " + strings.Join(os.Args[1:], ", ") + ": did controller-gen change how it writes resource.Quantity? Update hack/crdquantity")
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

// rewrite is file with every quantity bounded, and how many it bounded.
func rewrite(file string) ([]byte, int, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, 0, err
	}
	body, ok := bytes.CutPrefix(raw, []byte(header))
	if !ok {
		return nil, 0, fmt.Errorf("does not begin with %q, as controller-gen writes", header)
	}
	var doc map[string]any
	if err := yaml.UnmarshalStrict(body, &doc); err != nil {
		return nil, 0, err
	}
	if again, err := yaml.Marshal(doc); err != nil || !bytes.Equal(again, body) {
		return nil, 0, fmt.Errorf("is not what sigs.k8s.io/yaml writes (%v): rewriting it would reformat it", err)
	}
	n, err := bound(doc, "")
	if err != nil {
		return nil, 0, err
	}
	rewritten, err := yaml.Marshal(doc)
	if err != nil {
		return nil, 0, err
	}
	return append([]byte(header), rewritten...), n, nil
}

// bound sets api.QuantityPattern and api.MaxQuantityLength on every schema
// under node that is a quantity (int-or-string with controller-gen's
// pattern), and returns how many it set.
func bound(node any, path string) (int, error) {
	n := 0
	switch node := node.(type) {
	case map[string]any:
		if pattern, ok := node["pattern"]; ok && node["x-kubernetes-int-or-string"] == true {
			switch {
			case pattern != controllerGenPattern:
				return 0, fmt.Errorf("%s: a quantity with pattern %v, not controller-gen's %s: update hack/crdquantity", path, pattern, controllerGenPattern)
			case node["maxLength"] != nil:
				return 0, fmt.Errorf("%s: the quantity has a maxLength already", path)
			}
			node["pattern"] = api.QuantityPattern
			node["maxLength"] = api.MaxQuantityLength
			n++
		}
		for key, child := range node {
			k, err := bound(child, path+"."+key)
			if err != nil {
				return 0, err
			}
			n += k
		}
	case []any:
		for i, child := range node {
			k, err := bound(child, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return 0, err
			}
			n += k
		}
	}
	return n, nil
}

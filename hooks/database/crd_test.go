package database

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	dbv1 "metahooks/api/v1"
)

// presetTernary is how the CRD's CEL rules spell the preset storage sizes.
var presetTernary = regexp.MustCompile(`(?:self|oldSelf)\.size == 'small' \? '([^']+)' : (?:self|oldSelf)\.size == 'medium' \? '([^']+)' : '([^']+)'`)

// TestCRDPresetStorageMatchesSizes: the CEL rules of the Database CRD (below
// the preset; the effective storage never decreases) carry the preset storage
// sizes as literals. They must be those of sizes.go, or the API server and the
// hook would disagree about what a size means.
func TestCRDPresetStorageMatchesSizes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "crds", "example.com_databases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	var rules, messages []string
	collectValidations(crd, &rules, &messages)
	want := []string{presets[dbv1.SizeSmall].storage, presets[dbv1.SizeMedium].storage, presets[dbv1.SizeLarge].storage}
	found := 0
	for _, rule := range rules {
		for _, m := range presetTernary.FindAllStringSubmatch(rule, -1) {
			found++
			if got := m[1:]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("CEL rule %q uses storage small/medium/large %v, sizes.go says %v", rule, got, want)
			}
		}
	}
	if found < 3 {
		t.Errorf("found %d preset storage ternaries in the CRD's CEL rules, want at least 3 (below the preset; effective storage now and before)", found)
	}
	wantMessage := fmt.Sprintf("(small %s, medium %s, large %s)", want[0], want[1], want[2])
	if !containsSubstring(messages, wantMessage) {
		t.Errorf("no CEL message names the presets as %q", wantMessage)
	}
}

func collectValidations(v any, rules, messages *[]string) {
	switch v := v.(type) {
	case map[string]any:
		if list, ok := v["x-kubernetes-validations"].([]any); ok {
			for _, item := range list {
				rule, _ := item.(map[string]any)
				if r, ok := rule["rule"].(string); ok {
					*rules = append(*rules, r)
				}
				if m, ok := rule["message"].(string); ok {
					*messages = append(*messages, m)
				}
			}
		}
		for _, child := range v {
			collectValidations(child, rules, messages)
		}
	case []any:
		for _, child := range v {
			collectValidations(child, rules, messages)
		}
	}
}

func containsSubstring(list []string, want string) bool {
	for _, s := range list {
		if strings.Contains(s, want) {
			return true
		}
	}
	return false
}

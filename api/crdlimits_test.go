package api_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	dbv1 "metahooks/api/v1"
	"metahooks/api/v1alpha1"
	"metahooks/hooks/kube"
)

// Limits of metav1.Condition's fields, which its own markers set.
const (
	conditionMessage = 32768
	conditionReason  = 1024
	conditionType    = 316
)

// crdLimits is every string, list and map of each CRD's schema and its
// limit: "maxLength 1024", "maxItems 256", "maxProperties 1024", or, for
// what has none of its own, why it is bounded anyway. Quantities
// (int-or-string) are left out: their bound is a pattern (issue 30).
var crdLimits = map[string]map[string]string{
	"example.com_databases.yaml": {
		"spec.image":                             maxLength(dbv1.MaxImageLength),
		"spec.backup.schedule":                   maxLength(kube.MaxCronLength),
		"spec.storageClassName":                  maxLength(dbv1.MaxStorageClassNameLength),
		"spec.restoreFrom.database":              maxLength(dbv1.MaxRestoreDatabaseLength),
		"spec.restoreFrom.backup":                maxLength(dbv1.MaxRestoreBackupLength),
		"spec.primary":                           maxLength(dbv1.MaxPrimaryLength),
		"spec.size":                              enum,
		"spec.deletionPolicy":                    enum,
		"status.size":                            enum,
		"status.endpoint":                        maxLength(dbv1.MaxEndpointLength),
		"status.credentialsSecretName":           maxLength(dbv1.MaxObjectNameLength),
		"status.currentPrimary":                  maxLength(dbv1.MaxInstanceNameLength),
		"status.targetPrimary":                   maxLength(dbv1.MaxInstanceNameLength),
		"status.lastBackupTime":                  dateTime,
		"status.onDemandBackup.request":          maxLength(dbv1.MaxBackupRequestLength),
		"status.onDemandBackup.job":              maxLength(dbv1.MaxObjectNameLength),
		"status.onDemandBackup.state":            enum,
		"status.onDemandBackup.message":          maxLength(dbv1.MaxMessageLength),
		"status.onDemandBackup.completionTime":   dateTime,
		"status.instances":                       maxItems(dbv1.MaxStatusInstances),
		"status.instances[].name":                maxLength(dbv1.MaxInstanceNameLength),
		"status.instances[].role":                maxLength(dbv1.MaxRoleLength),
		"status.instances[].state":               maxLength(dbv1.MaxInstanceStateLength),
		"status.lastPrimaryChange.from":          maxLength(dbv1.MaxInstanceNameLength),
		"status.lastPrimaryChange.to":            maxLength(dbv1.MaxInstanceNameLength),
		"status.lastPrimaryChange.reason":        maxLength(dbv1.MaxRoleLength),
		"status.lastPrimaryChange.time":          dateTime,
		"status.conditions":                      maxItems(dbv1.MaxConditions),
		"status.conditions[].type":               maxLength(conditionType),
		"status.conditions[].status":             enum,
		"status.conditions[].reason":             maxLength(conditionReason),
		"status.conditions[].message":            maxLength(conditionMessage),
		"status.conditions[].lastTransitionTime": dateTime,
	},
	"example.com_myapps.yaml": {
		"spec.image":                    maxLength(v1alpha1.MaxImageLength),
		"spec.backupSchedule":           maxLength(kube.MaxCronLength),
		"spec.restoreFrom":              maxLength(v1alpha1.MaxRestoreFromLength),
		"spec.config":                   maxProperties(v1alpha1.MaxConfigEntries),
		"spec.config{}":                 "the values share the ConfigMap's 1 MiB with the keys, which the hook checks (kube.ValidateConfigMapData): no one value has a maximum of its own",
		"spec.backup.command":           maxItems(v1alpha1.MaxBackupCommandItems),
		"spec.backup.command[]":         maxLength(v1alpha1.MaxBackupCommandItemLength),
		"spec.backup.image":             maxLength(v1alpha1.MaxImageLength),
		"spec.storage.storageClassName": maxLength(v1alpha1.MaxStorageClassNameLength),
		"spec.storage.mountPath":        maxLength(v1alpha1.MaxMountPathLength),
		// corev1.ResourceRequirements takes no markers of ours: its maps are
		// bounded by the rule at spec.resources, its claims refused by
		// another, and the hook checks both.
		"spec.resources.limits":                  resourcesRule,
		"spec.resources.requests":                resourcesRule,
		"spec.resources.claims":                  claimsRule,
		"spec.resources.claims[].name":           claimsRule,
		"spec.resources.claims[].request":        claimsRule,
		"status.selector":                        maxLength(v1alpha1.MaxSelectorLength),
		"status.lastBackupName":                  maxLength(v1alpha1.MaxBackupNameLength),
		"status.lastBackupTime":                  dateTime,
		"status.conditions":                      maxItems(v1alpha1.MaxConditions),
		"status.conditions[].type":               maxLength(conditionType),
		"status.conditions[].status":             enum,
		"status.conditions[].reason":             maxLength(conditionReason),
		"status.conditions[].message":            maxLength(conditionMessage),
		"status.conditions[].lastTransitionTime": dateTime,
	},
}

const (
	enum          = "an enum"
	dateTime      = "a date-time"
	resourcesRule = "at most 32 entries (the rule at spec.resources)"
	claimsRule    = "refused (the rule at spec.resources)"
)

func maxLength(n int) string     { return fmt.Sprintf("maxLength %d", n) }
func maxItems(n int) string      { return fmt.Sprintf("maxItems %d", n) }
func maxProperties(n int) string { return fmt.Sprintf("maxProperties %d", n) }

// TestCRDLimits: every string of each generated CRD's schema has a
// maxLength (or is an enum or a date-time), every list a maxItems, every
// map a maxProperties, each the constant the hook checks (api/v1/limits.go,
// api/v1alpha1/limits.go). A field added without a limit, or a marker that
// drifted from its constant, fails here.
func TestCRDLimits(t *testing.T) {
	for file, want := range crdLimits {
		t.Run(file, func(t *testing.T) {
			for _, schema := range crdSchemas(t, file) {
				got := map[string]string{}
				schemaLimits(schema, "", got)
				delete(got, "apiVersion") // the API server's own
				delete(got, "kind")
				// A field the schema gives no limit passes with the reason
				// the table gives why it is bounded all the same.
				for path, limit := range got {
					if reason, ok := want[path]; limit == "" && ok && !isLimit(reason) {
						got[path] = reason
					} else if limit == "" {
						got[path] = "no limit"
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("limits of the schema (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// crdSchemas are the openAPIV3Schema of every version of the checked-in
// CRD deploy/crds/file, what the API server gets.
func crdSchemas(t *testing.T, file string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "crds", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) == 0 {
		t.Fatal("no versions")
	}
	var schemas []map[string]any
	for _, version := range crd.Spec.Versions {
		schemas = append(schemas, version.Schema.OpenAPIV3Schema)
	}
	return schemas
}

// isLimit reports whether want is one the schema says itself.
func isLimit(want string) bool {
	for _, prefix := range []string{"maxLength ", "maxItems ", "maxProperties ", enum, dateTime} {
		if strings.HasPrefix(want, prefix) {
			return true
		}
	}
	return false
}

// schemaLimits records, for every string, list and map under schema at
// path, its limit ("" for none): spec.backup.command[] is the items of a
// list, spec.config{} the values of a map.
func schemaLimits(schema map[string]any, path string, limits map[string]string) {
	if schema["x-kubernetes-int-or-string"] == true {
		return // a quantity
	}
	switch schema["type"] {
	case "string":
		switch {
		case schema["maxLength"] != nil:
			limits[path] = fmt.Sprintf("maxLength %v", schema["maxLength"])
		case schema["enum"] != nil:
			limits[path] = enum
		case schema["format"] == "date-time":
			limits[path] = dateTime
		default:
			limits[path] = ""
		}
	case "array":
		limits[path] = ""
		if schema["maxItems"] != nil {
			limits[path] = fmt.Sprintf("maxItems %v", schema["maxItems"])
		}
		if items, ok := schema["items"].(map[string]any); ok {
			schemaLimits(items, path+"[]", limits)
		}
	case "object":
		if values, ok := schema["additionalProperties"].(map[string]any); ok {
			limits[path] = ""
			if schema["maxProperties"] != nil {
				limits[path] = fmt.Sprintf("maxProperties %v", schema["maxProperties"])
			}
			schemaLimits(values, path+"{}", limits)
		}
		properties, _ := schema["properties"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(properties)) {
			child, _ := properties[name].(map[string]any)
			next := name
			if path != "" {
				next = path + "." + name
			}
			schemaLimits(child, next, limits)
		}
	}
}

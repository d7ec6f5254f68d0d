package composite

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// ManagedBy is the app.kubernetes.io/managed-by value on every child.
const ManagedBy = "metahooks"

// Labels returns the recommended app.kubernetes.io labels for a child of the
// parent instance: name (what runs), instance (the parent's name) and managed-by.
// SelectorLabels is the stable subset used in selectors, which never changes for
// the life of the parent.
func Labels(appName, instance string) map[string]string {
	labels := SelectorLabels(appName, instance)
	labels["app.kubernetes.io/managed-by"] = ManagedBy
	return labels
}

// SelectorLabels returns the labels that select the parent's pods: name and instance.
func SelectorLabels(appName, instance string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     appName,
		"app.kubernetes.io/instance": instance,
	}
}

// HashStrings returns a hex sha256 of data. Keys are hashed in sorted order, so
// equal data always hashes the same, in any process.
func HashStrings(data map[string]string) string {
	raw, _ := json.Marshal(data) // a map[string]string always marshals
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

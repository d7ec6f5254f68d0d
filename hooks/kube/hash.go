package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// ConfigHashAnnotation on a pod template holds HashStrings of the data of the
// ConfigMap its pods read.
const ConfigHashAnnotation = "example.com/config-hash"

// HashStrings returns a hex sha256 of data. Keys are hashed in sorted order, so
// equal data always hashes the same, in any process. A pod template carries the
// hash of its ConfigMap's data, so a change of the data rolls the pods.
func HashStrings(data map[string]string) string {
	raw, _ := json.Marshal(data) // a map[string]string always marshals
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

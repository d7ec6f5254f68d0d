package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// HashStrings returns a hex sha256 of data. Keys are hashed in sorted order, so
// equal data always hashes the same, in any process. A pod template carries the
// hash of its ConfigMap's data, so a change of the data rolls the pods.
func HashStrings(data map[string]string) string {
	return HashJSON(data)
}

// HashJSON returns a hex sha256 of v's JSON encoding: struct fields in
// declaration order and map keys sorted, so the same in any process. v must
// marshal (typed Kubernetes objects and maps of strings always do).
func HashJSON(v any) string {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

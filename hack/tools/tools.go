//go:build tools

// Package tools pins the code generators used by hack/generate.sh. It is a
// module of its own so the generators' dependencies stay out of the main
// go.mod; nothing here is built into metahooks.
package tools

import (
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)

//go:build tools

// Package tools pins the kube-apiserver command so that `go mod tidy` keeps
// everything needed to `go build k8s.io/kubernetes/cmd/kube-apiserver` from
// this module. It is never compiled (build tag "tools").
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)

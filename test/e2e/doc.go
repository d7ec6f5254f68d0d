// Package e2e proves the hooks and the manifests against a real
// kube-apiserver and etcd, built from the Kubernetes Go modules by
// hack/kube-binaries and started with controller-runtime's envtest.
//
// The test plays Metacontroller's part, as its source describes it: it builds
// sync requests from objects read back from the API server (children keyed the
// way Metacontroller keys them), posts them to a real metahooks process, creates
// the children it answers (with the controller-uid label, the owner reference
// and the last-applied annotation Metacontroller adds) and writes the status
// through the status subresource. So the API server judges every child and
// every status the hooks produce. A second sync on the read-back state must
// then be a fixed point: Metacontroller's three-way merge of the answer into
// the observed children changes nothing, a server-side apply of the answer
// (dry run) changes nothing, and the status equals the stored one.
//
// KUBEBUILDER_ASSETS names the folder with kube-apiserver and etcd (make test
// sets it); when it is unset, TestMain runs hack/kube-binaries/build.sh.
package e2e

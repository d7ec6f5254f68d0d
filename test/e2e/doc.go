// Package e2e proves the hooks and the manifests against a real
// kube-apiserver and etcd, built from the Kubernetes Go modules by
// hack/kube-binaries and started with controller-runtime's envtest.
//
// The test plays Metacontroller's part, as its source describes it: it builds
// sync requests from objects read back from the API server (children keyed the
// way Metacontroller keys them), posts them to a real metahooks process, creates
// the children it answers (with the controller-uid label, the owner reference
// and the last-applied annotation Metacontroller adds) and writes the status
// through the status subresource. Sync and finalize calls go through
// Metacontroller's ETag cache, enabled for them in
// deploy/compositecontroller.yaml (callCached): a 412 replays the cached
// answer. So the API server judges every child and
// every status the hooks produce. A second sync on the read-back state must
// then be a fixed point: Metacontroller's three-way merge of the answer into
// the observed children changes nothing, a server-side apply of the answer
// (dry run) changes nothing, and the status equals the stored one.
//
// The full-loop tests (loop_*_test.go) run on a second control plane, a whole
// cluster (cluster_test.go): kube-controller-manager's StatefulSet, Job,
// CronJob, garbage-collector, PVC-protection and PersistentVolume controllers,
// kube-scheduler, kwok running the pods of fake nodes, and a provisioner for a
// WaitForFirstConsumer StorageClass (provisioner_test.go). There the test
// still plays Metacontroller (in hook version v1 and v2, with its three-way
// merge and with server-side apply), but every other status comes from the
// real controllers, and each scenario logs its figures naming the Kubernetes
// version.
//
// KUBEBUILDER_ASSETS names the folder with the binaries of one Kubernetes
// minor (hack/e2e.sh sets it for each minor in turn); when it is unset,
// TestMain runs hack/kube-binaries/build.sh (the newest minor).
package e2e

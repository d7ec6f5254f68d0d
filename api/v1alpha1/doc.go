// Package v1alpha1 holds the MyApp API (example.com/v1alpha1): the Go types the
// hooks decode parents into and that controller-gen turns into the CRD in
// deploy/crds. Markers on the types carry the OpenAPI validation, defaults,
// printer columns and subresources; the hook checks the same rules again, so a
// parent that slipped past admission gets a 422 instead of a wrong child.
//
// +kubebuilder:object:generate=true
// +groupName=example.com
package v1alpha1

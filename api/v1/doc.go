// Package v1 holds the Database API (example.com/v1): the Go types the database
// hook decodes parents into and that controller-gen turns into the CRD. Markers
// on the types carry the OpenAPI validation, defaults, CEL rules, printer
// columns and subresources; the hook checks the same rules again, so a parent
// that slipped past admission gets a 422 instead of a wrong child.
//
// +kubebuilder:object:generate=true
// +groupName=example.com
package v1

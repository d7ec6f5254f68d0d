package database

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

// TestInstanceIdentity: the ServiceAccount, Role and RoleBinding exist
// exactly at instances >= 2, and the Role allows patching the status of the
// Database's nine pod names, nothing more.
func TestInstanceIdentity(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		instances    int32
		want         bool
	}{
		{"Single", "one server needs no API access", 1, false},
		{"Two", "the smallest HA Database", 2, true},
		{"Nine", "the largest", 9, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := mustSync(t, newRequest(t, newDatabase(withInstances(tc.instances)), false))
			sa := responseChild[map[string]any](t, resp, "ServiceAccount", testName+"-instance")
			role := responseChild[rbacv1.Role](t, resp, "Role", testName+"-instance")
			binding := responseChild[rbacv1.RoleBinding](t, resp, "RoleBinding", testName+"-instance")
			if got := sa != nil && role != nil && binding != nil; got != tc.want || (!tc.want && (sa != nil || role != nil || binding != nil)) {
				t.Fatalf("%s\nServiceAccount %v, Role %v, RoleBinding %v; want all %v", tc.reason, sa != nil, role != nil, binding != nil, tc.want)
			}
			if !tc.want {
				return
			}
			wantRules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch"},
				ResourceNames: []string{"orders-0", "orders-1", "orders-2", "orders-3", "orders-4", "orders-5", "orders-6", "orders-7", "orders-8"}}}
			if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
				t.Errorf("%s\nRole rules (-want +got):\n%s", tc.reason, diff)
			}
			wantRef := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: testName + "-instance"}
			wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: testName + "-instance", Namespace: testNamespace}}
			if diff := cmp.Diff(wantRef, binding.RoleRef); diff != "" {
				t.Errorf("%s\nRoleBinding roleRef (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(wantSubjects, binding.Subjects); diff != "" {
				t.Errorf("%s\nRoleBinding subjects (-want +got):\n%s", tc.reason, diff)
			}
			if (*sa)["automountServiceAccountToken"] != false {
				t.Errorf("%s\nServiceAccount automountServiceAccountToken = %v, want false", tc.reason, (*sa)["automountServiceAccountToken"])
			}
		})
	}
}

package database

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The instances' identity (instances >= 2): ServiceAccount, Role and
// RoleBinding <name>-instance. The Role allows exactly what the reporter
// container does: patch the status subresource of the Database's own pods
// <name>-0 … <name>-8 (labels and annotations can be set through it, the
// pod's spec cannot). Nothing else: no reads, no Secrets, no other pod.

func (d *database) instanceAccountName() string { return d.name + "-instance" }

// instanceServiceAccount is ServiceAccount <name>-instance. Its token is not
// mounted by default: the pod projects one into the reporter container only.
func instanceServiceAccount(d *database, t *topology) *corev1.ServiceAccount {
	if t == nil {
		return nil
	}
	return &corev1.ServiceAccount{
		TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta:                   metav1.ObjectMeta{Name: d.instanceAccountName(), Namespace: d.namespace, Labels: d.objectLabels()},
		AutomountServiceAccountToken: ptr.To(false),
	}
}

// instanceRole is Role <name>-instance: patch pods/status of the
// Database's pods, by name (all nine ordinals, so scaling never changes it).
func instanceRole(d *database, t *topology) *rbacv1.Role {
	if t == nil {
		return nil
	}
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: d.instanceAccountName(), Namespace: d.namespace, Labels: d.objectLabels()},
		Rules: []rbacv1.PolicyRule{{
			APIGroups:     []string{""},
			Resources:     []string{"pods/status"},
			Verbs:         []string{"patch"},
			ResourceNames: d.podNames(),
		}},
	}
}

// instanceRoleBinding binds Role <name>-instance to ServiceAccount
// <name>-instance. roleRef is immutable; it never changes here.
func instanceRoleBinding(d *database, t *topology) *rbacv1.RoleBinding {
	if t == nil {
		return nil
	}
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: d.instanceAccountName(), Namespace: d.namespace, Labels: d.objectLabels()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: d.instanceAccountName()},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: d.instanceAccountName(), Namespace: d.namespace}},
	}
}

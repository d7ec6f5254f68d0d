package kube

import corev1 "k8s.io/api/core/v1"

// FieldEnv is an environment variable set from a field of the container's
// own pod (the downward API), such as metadata.name: what a pod's scripts
// and agents use to know which pod of a StatefulSet they are.
func FieldEnv(name, fieldPath string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: fieldPath},
	}}
}

package myapp

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/kube"
)

// configMap is ConfigMap <name>-config holding spec.config.
func configMap(a *app) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      a.configMapName(),
			Namespace: a.namespace,
			Labels:    a.objectLabels(),
		},
		Data: a.config,
	}
}

// configHash is the hash of the ConfigMap data that the pod template carries,
// so a config change rolls the pods.
func configHash(a *app) string {
	return kube.HashStrings(a.config)
}

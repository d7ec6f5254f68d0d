package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestFieldEnv(t *testing.T) {
	want := corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}
	if diff := cmp.Diff(want, FieldEnv("POD_NAME", "metadata.name")); diff != "" {
		t.Errorf("FieldEnv (-want +got):\n%s", diff)
	}
}

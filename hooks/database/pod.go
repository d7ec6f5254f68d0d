package database

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The pod toolkit of the Database's pods, the server's and the backup and
// restore Jobs': who they run as, and how they read the credentials Secret.

// secretEnv is environment variable name set from key of Secret secret.
func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret},
		Key:                  key,
	}}}
}

// podSecurityContext runs every pod as the image's postgres user (999), with
// the volumes group-owned by it so the server and the backup jobs can write.
func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:        ptr.To(true),
		RunAsUser:           ptr.To[int64](postgresUID),
		RunAsGroup:          ptr.To[int64](postgresUID),
		FSGroup:             ptr.To[int64](postgresUID),
		FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

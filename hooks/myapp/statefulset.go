package myapp

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"metahooks/hooks/kube"
)

// statefulSet is StatefulSet <name> with the given number of replicas (the
// spec's on sync, 0 while finalizing), selecting its pods by selector.
func statefulSet(a *app, o *observed, selector map[string]string, replicas int32) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      a.name,
			Namespace: a.namespace,
			Labels:    a.objectLabels(),
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: a.name,
			Selector:    &metav1.LabelSelector{MatchLabels: selector},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType,
			},
			// Data outlives the app: neither deleting the StatefulSet nor
			// scaling it down deletes a volume.
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      a.podLabels(kube.ComponentServer, selector), // the pods must keep matching the kept selector
					Annotations: map[string]string{kube.ConfigHashAnnotation: configHash(a)},
				},
				Spec: podSpec(a, selector),
			},
			VolumeClaimTemplates: volumeClaims(a, o),
		},
	}
	addRestore(a, o, sts)
	return sts
}

func podSpec(a *app, selector map[string]string) corev1.PodSpec {
	probe := &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(portName)}},
	}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:  containerName,
			Image: a.image,
			Ports: []corev1.ContainerPort{{Name: portName, ContainerPort: a.port, Protocol: corev1.ProtocolTCP}},
			EnvFrom: []corev1.EnvFromSource{{
				ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: a.configMapName()}},
			}},
			Resources: a.resources,
			VolumeMounts: []corev1.VolumeMount{
				{Name: dataVolume, MountPath: a.mountPath},
				{Name: configVolume, MountPath: configMountPath, ReadOnly: true},
			},
			ReadinessProbe: probe,
			LivenessProbe:  probe,
		}},
		Volumes: []corev1.Volume{{
			Name: configVolume,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: a.configMapName()},
			}},
		}},
	}
	if a.highAvailability {
		spec.Affinity, spec.TopologySpreadConstraints = kube.SpreadAcrossNodesAndZones(selector)
	}
	return spec
}

// volumeClaims are the data volume template and, when there is one, the
// backups volume template.
func volumeClaims(a *app, o *observed) []corev1.PersistentVolumeClaim {
	claims := []corev1.PersistentVolumeClaim{kube.ClaimTemplate(dataVolume, a.storageSize, a.storageClass)}
	if o.backupsTemplate != nil {
		claims = append(claims, *o.backupsTemplate)
	}
	return claims
}

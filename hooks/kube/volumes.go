package kube

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ClaimTemplate is a StatefulSet volumeClaimTemplate written in exactly the
// form the API server stores (apiVersion, kind, volumeMode and status.phase
// filled in): one ReadWriteOnce filesystem volume of size, of storageClass (nil
// for the cluster's default). Metacontroller replaces this list as a whole when
// it merges, so any difference from the stored form would be an update on
// every sync.
func ClaimTemplate(name string, size resource.Quantity, storageClass *string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: storageClass,
			VolumeMode:       ptr.To(corev1.PersistentVolumeFilesystem),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

// PodName is the name of pod ordinal of the StatefulSet named statefulSet.
func PodName(statefulSet string, ordinal int) string {
	return statefulSet + "-" + strconv.Itoa(ordinal)
}

// ClaimName is the PVC the StatefulSet controller makes from volumeClaimTemplate
// template for pod ordinal of the StatefulSet named statefulSet.
func ClaimName(template, statefulSet string, ordinal int) string {
	return template + "-" + PodName(statefulSet, ordinal)
}

// ClaimVolume is a pod volume named name of the PVC claim, mounted read-only
// when readOnly (a Job reading a StatefulSet pod's data volume beside it).
func ClaimVolume(name, claim string, readOnly bool) corev1.Volume {
	return corev1.Volume{
		Name: name,
		VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: claim,
			ReadOnly:  readOnly,
		}},
	}
}

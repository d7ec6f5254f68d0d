package e2e

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The cluster's volumes: a default StorageClass with WaitForFirstConsumer
// binding, and provisionVolumes, the external provisioner of that class. The
// scheduler picks a node for a pod whose claims are unbound and writes it on
// each claim (volume.kubernetes.io/selected-node); the provisioner creates a
// hostPath PersistentVolume on that node, pre-bound to the claim; the
// PersistentVolume controller of kube-controller-manager binds the claim, and
// the scheduler binds the pod. A Released volume (its claim deleted) is
// deleted, as its reclaim policy says. kwok's own volume stages bind claims at
// once (Immediate), before the scheduler has chosen a node; the scheduler
// then keeps the pod unschedulable for minutes, so they are not used.
const (
	storageClassName = "e2e-hostpath"
	provisionerName  = "e2e.metahooks.example/hostpath"
	selectedNodeKey  = "volume.kubernetes.io/selected-node"
)

func defaultStorageClass() *storagev1.StorageClass {
	waitForFirstConsumer := storagev1.VolumeBindingWaitForFirstConsumer
	reclaim := corev1.PersistentVolumeReclaimDelete
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: storageClassName, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       provisionerName,
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &waitForFirstConsumer,
	}
}

// provisionVolumes runs until ctx ends, every 100 ms: a volume for each claim
// of the class with a selected node and none yet, and the deletion of Released
// volumes of the class. Errors go to stderr; the tests see their effect.
func provisionVolumes(ctx context.Context, c client.Client) {
	for {
		if err := provisionOnce(ctx, c); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "e2e: provisioner:", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func provisionOnce(ctx context.Context, c client.Client) error {
	claims := &corev1.PersistentVolumeClaimList{}
	if err := c.List(ctx, claims); err != nil {
		return err
	}
	for _, claim := range claims.Items {
		node := claim.Annotations[selectedNodeKey]
		if node == "" || claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil ||
			claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName != storageClassName {
			continue
		}
		if err := c.Create(ctx, volumeFor(&claim, node)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create the volume of PVC %s/%s: %w", claim.Namespace, claim.Name, err)
		}
	}
	volumes := &corev1.PersistentVolumeList{}
	if err := c.List(ctx, volumes); err != nil {
		return err
	}
	for _, pv := range volumes.Items {
		if pv.Spec.StorageClassName == storageClassName && pv.Status.Phase == corev1.VolumeReleased &&
			pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
			if err := c.Delete(ctx, &pv); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("cannot delete the released volume %s: %w", pv.Name, err)
			}
		}
	}
	return nil
}

// volumeFor is a hostPath volume on the node, pre-bound to the claim.
func volumeFor(claim *corev1.PersistentVolumeClaim, node string) *corev1.PersistentVolume {
	name := "pvc-" + string(claim.UID)
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": provisionerName}},
		Spec: corev1.PersistentVolumeSpec{
			AccessModes:                   claim.Spec.AccessModes,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              storageClassName,
			VolumeMode:                    claim.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/e2e-volumes/" + name}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
}

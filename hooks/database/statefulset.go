package database

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/kube"
)

// statefulSet is StatefulSet <name>: one PostgreSQL server (replicas is 1, or
// 0 while hibernating), its data and backups volumes from volumeClaimTemplates,
// and the restore machinery while a restore is under way.
//
// Immutable fields are kept as observed: the selector, and the
// volumeClaimTemplates, which are copied verbatim from the observed
// StatefulSet, so a change of spec.storage never reaches them (the API server
// would reject the whole update).
func statefulSet(d *database, o *observed, replicas int32, restoring bool) *appsv1.StatefulSet {
	selector := d.selector(o)
	podLabels := d.podLabels(kube.ComponentServer, selector) // the pod must keep matching the kept selector
	sts := &appsv1.StatefulSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      d.name,
			Namespace: d.namespace,
			Labels:    d.objectLabels(),
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: d.headlessServiceName(),
			Selector:    &metav1.LabelSelector{MatchLabels: selector},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType,
			},
			PersistentVolumeClaimRetentionPolicy: retentionPolicy(d.deletionPolicy),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      podLabels,
					Annotations: map[string]string{kube.ConfigHashAnnotation: configHash(d), sizeAnnotation: string(d.size)},
				},
				Spec: serverPodSpec(d),
			},
			VolumeClaimTemplates: volumeClaimTemplates(d, o),
		},
	}
	if restoring {
		addRestore(d, sts)
	} else if d.restore != nil {
		sts.Annotations = map[string]string{restoredAnnotation: restoreSource(d)}
	}
	return sts
}

// retentionPolicy makes the volumes follow spec.deletionPolicy at the moment
// the StatefulSet is deleted: under Delete the StatefulSet controller makes
// the StatefulSet own its PVCs, so garbage collection removes them with it;
// otherwise they stay. Scaling to 0 (hibernation) never deletes a volume.
func retentionPolicy(policy dbv1.DeletionPolicy) *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	whenDeleted := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if policy == dbv1.DeletionDelete {
		whenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	return &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: whenDeleted,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
}

// Startup probe budget, in probe periods of 10 s: ten minutes. Crash
// recovery and restores run in the init container (initContainer), which has
// no probe, so the server container only has to open its socket.
const (
	startupFailureThreshold = 60
	probePeriodSeconds      = 10
)

func serverPodSpec(d *database) corev1.PodSpec {
	p := d.preset
	isReady := func(failureThreshold int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
				Command: []string{"pg_isready", "--host=127.0.0.1", "--port=5432", "--username=" + username, "--dbname=" + databaseName},
			}},
			PeriodSeconds:    probePeriodSeconds,
			TimeoutSeconds:   5,
			FailureThreshold: failureThreshold,
		}
	}
	return corev1.PodSpec{
		SecurityContext:               podSecurityContext(),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](60),
		InitContainers:                []corev1.Container{initContainer(d)},
		Containers: []corev1.Container{{
			Name:    containerName,
			Image:   d.image,
			Command: shellCommand(serverScript, "server"),
			Env:     serverEnv(),
			Ports:   []corev1.ContainerPort{{Name: portName, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse(p.cpuRequest),
					corev1.ResourceMemory: resource.MustParse(p.memory),
				},
				Limits: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse(p.cpuLimit),
					corev1.ResourceMemory: resource.MustParse(p.memory),
				},
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: dataVolume, MountPath: dataMountPath},
				{Name: configVolume, MountPath: configMountPath, ReadOnly: true},
				{Name: runVolume, MountPath: runMountPath},
				{Name: shmVolume, MountPath: "/dev/shm"},
			},
			// Startup allows ten minutes for the socket to open; only then
			// does liveness start counting.
			StartupProbe:   isReady(startupFailureThreshold),
			ReadinessProbe: isReady(3),
			LivenessProbe:  isReady(6),
			Lifecycle: &corev1.Lifecycle{
				// A fast shutdown (clients disconnected, checkpoint written),
				// waited for, well within the grace period.
				PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: shellCommand(preStopScript, "prestop")}},
			},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			SecurityContext:          containerSecurityContext(),
		}},
		Volumes: []corev1.Volume{
			{Name: configVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: d.configMapName()},
			}}},
			{Name: runVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: shmVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				Medium:    corev1.StorageMediumMemory,
				SizeLimit: ptr.To(resource.MustParse(p.sharedMemory)),
			}}},
		},
	}
}

// volumeClaimTemplates are the observed StatefulSet's, verbatim, when there is
// one: they are immutable. Otherwise the data and backups templates, both sized
// at the requested storage.
func volumeClaimTemplates(d *database, o *observed) []corev1.PersistentVolumeClaim {
	if o.statefulSet != nil && len(o.statefulSet.Spec.VolumeClaimTemplates) > 0 {
		return o.statefulSet.Spec.VolumeClaimTemplates
	}
	return []corev1.PersistentVolumeClaim{
		kube.ClaimTemplate(dataVolume, d.storage, d.storageClass),
		kube.ClaimTemplate(backupsVolume, d.storage, d.storageClass),
	}
}

package database

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"metahooks/hooks/kube"
)

// addInstances makes the single-server StatefulSet the instances' one
// (instances >= 2), in the parts that do not depend on who is the primary,
// so a failover never changes the pod template (it would restart every
// instance):
//
//   - the pods prefer distinct nodes and spread across zones;
//   - the init and server containers mount ConfigMap <name>-topology at
//     /etc/topology (TOPOLOGY_DIR) and know their own name (POD_NAME), the
//     instances' DNS domain (PEER_DOMAIN) and the replication role of Secret
//     <name>-replication: scripts/instance.sh clones, follows, promotes and
//     rejoins as that record says;
//   - the reporter container publishes each instance's report on its pod
//     (reporter.go), with the only API token in the pod;
//   - the template carries its own hash (templateHashKey): the hook knows a
//     template about to roll from the observed one, and updates the primary
//     last (partition).
//
// It returns that hash.
func addInstances(d *database, o *observed, sts *appsv1.StatefulSet, agentImage string) string {
	pod := &sts.Spec.Template.Spec
	pod.Affinity, pod.TopologySpreadConstraints = kube.SpreadAcrossNodesAndZones(d.selector(o))
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: topologyVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: d.topologyName()}},
	}})
	for _, list := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for i := range list {
			c := &list[i]
			if c.Name != containerName && c.Name != initContainerName {
				continue
			}
			c.Env = append(c.Env, instanceEnv(d, c.Name == containerName)...)
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: topologyVolume, MountPath: topologyMountPath, ReadOnly: true})
		}
	}
	addReporter(d, pod, agentImage)
	hash := kube.HashJSON(sts.Spec.Template)[:16]
	sts.Spec.Template.Annotations[templateHashKey] = hash
	return hash
}

// instanceEnv is what scripts/instance.sh reads, in the init container and,
// with the superuser's name (it connects over the pod's socket, trusted, so
// it needs no password), in the server container.
func instanceEnv(d *database, server bool) []corev1.EnvVar {
	env := []corev1.EnvVar{
		kube.FieldEnv("POD_NAME", "metadata.name"),
		{Name: "TOPOLOGY_DIR", Value: topologyMountPath},
		{Name: "PEER_DOMAIN", Value: d.instanceDomain()},
		secretEnv("REPLICATION_USER", d.replicationSecretName(), "username"),
		secretEnv("REPLICATION_PASSWORD", d.replicationSecretName(), "password"),
	}
	if server {
		env = append(env, secretEnv("SUPERUSER", d.superuserSecretName(), "username"))
	}
	return env
}

// applyTopology gives the StatefulSet the topology's replicas (unless
// hibernating) and partition, and Parallel pod management when it is
// created: a standby is recreated even while the primary is not ready, which
// OrderedReady would forbid. podManagementPolicy is immutable, so an existing
// StatefulSet keeps its own.
func applyTopology(o *observed, sts *appsv1.StatefulSet, t *topology) {
	if *sts.Spec.Replicas > 0 {
		sts.Spec.Replicas = ptr.To(t.replicas)
	}
	sts.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(t.partition)}
	sts.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	if o.statefulSet != nil {
		sts.Spec.PodManagementPolicy = o.statefulSet.Spec.PodManagementPolicy
	}
}

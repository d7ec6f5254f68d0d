package database

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// desiredStatefulSet is the Database's StatefulSet. With instances >= 2 (t
// not nil) it runs them all with the topology's replicas and partition.
func desiredStatefulSet(d *database, o *observed, s settings, p plan, t *topology) *appsv1.StatefulSet {
	sts := statefulSet(d, o, p.replicas, p.restoring)
	if t != nil {
		addInstances(d, o, sts, s.agentImage)
		applyTopology(o, sts, t)
		if p.restoring && *sts.Spec.Replicas > 1 {
			// The restore source is a ReadWriteOnce volume every pod of the
			// template mounts: a standby on another node holding it while it
			// waits to clone would keep the primary from restoring. Pod 0
			// restores alone; the standbys follow once it is done.
			sts.Spec.Replicas = ptr.To[int32](1)
		}
	}
	return sts
}

// desiredChildren lists every child of the Database but the final backup Job,
// sts (desiredStatefulSet) first; builders return nil for children the spec
// does not ask for.
//
// With instances >= 2 (t not nil) the topology ConfigMap, Services
// <name>-ro and <name>-r, the PodDisruptionBudget and the instances'
// ServiceAccount, Role and RoleBinding are added, and the Event of the last
// change of primary.
func desiredChildren(d *database, o *observed, s settings, p plan, t *topology, sts *appsv1.StatefulSet, suspendBackups bool) []runtime.Object {
	selector := d.selector(o)
	return []runtime.Object{
		sts,
		clientService(d, selector, t),
		headlessService(d, selector),
		readOnlyService(d, selector, t),
		anyService(d, selector, t),
		credentialsSecret(d, s.key, o.secret),
		superuserSecret(d, s.key, o.superuser),
		replicationSecret(d, s.key, o.replication),
		configMap(d),
		topologyConfigMap(d, t),
		instanceServiceAccount(d, t),
		instanceRole(d, t),
		instanceRoleBinding(d, t),
		primaryChangeEvent(d, t),
		podDisruptionBudget(d, selector, t),
		backupCronJob(d, suspendBackups, t.backupHost(d)),
	}
}

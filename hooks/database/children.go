package database

import "k8s.io/apimachinery/pkg/runtime"

// desiredChildren lists every child of the Database but the final backup Job;
// builders return nil for children the spec does not ask for.
//
// With instances >= 2 (t not nil) the StatefulSet runs them all with the
// topology's replicas and partition, and the topology ConfigMap, Services
// <name>-ro and <name>-r, the PodDisruptionBudget and the instances'
// ServiceAccount, Role and RoleBinding are added, and the Event of the last
// change of primary.
func desiredChildren(d *database, o *observed, s settings, p plan, t *topology, suspendBackups bool) []runtime.Object {
	selector := d.selector(o)
	sts := statefulSet(d, o, p.replicas, p.restoring)
	if t != nil {
		addInstances(d, o, sts, s.agentImage)
		applyTopology(o, sts, t)
	}
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

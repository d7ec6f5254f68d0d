package database

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// clientService is Service <name>: ClusterIP on port 5432, the endpoint
// clients use (<name>.<namespace>.svc:5432). With instances >= 2 it is the
// read-write Service: its selector names the primary's pod, so it never
// selects anything else, whatever labels the instances set.
func clientService(d *database, selector map[string]string, t *topology) *corev1.Service {
	if t != nil {
		selector = maps.Clone(selector)
		selector[appsv1.StatefulSetPodNameLabel] = t.record.primary
	}
	return service(d, d.name, corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector})
}

// readOnlyService is Service <name>-ro (instances >= 2): the ready standbys,
// the pods whose instance labels itself a standby (see instances.go).
func readOnlyService(d *database, selector map[string]string, t *topology) *corev1.Service {
	if t == nil {
		return nil
	}
	selector = maps.Clone(selector)
	selector[roleLabel] = roleStandby
	return service(d, d.readOnlyServiceName(), corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector})
}

// anyService is Service <name>-r (instances >= 2): any ready instance.
func anyService(d *database, selector map[string]string, t *topology) *corev1.Service {
	if t == nil {
		return nil
	}
	return service(d, d.anyServiceName(), corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector})
}

// headlessService is Service <name>-headless, the StatefulSet's governing
// service, giving the pod the DNS name <name>-0.<name>-headless.
func headlessService(d *database, selector map[string]string) *corev1.Service {
	return service(d, d.headlessServiceName(), corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: selector})
}

func service(d *database, name string, spec corev1.ServiceSpec) *corev1.Service {
	spec.Ports = []corev1.ServicePort{{
		Name:       portName,
		Port:       port,
		TargetPort: intstr.FromString(portName),
		Protocol:   corev1.ProtocolTCP,
	}}
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: d.namespace,
			Labels:    d.objectLabels(),
		},
		Spec: spec,
	}
}

package database

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// clientService is Service <name>: ClusterIP on port 5432, the endpoint
// clients use (<name>.<namespace>.svc:5432).
func clientService(d *database, selector map[string]string) *corev1.Service {
	return service(d, d.name, corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector})
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

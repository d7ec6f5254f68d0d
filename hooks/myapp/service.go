package myapp

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// headlessService is Service <name> with clusterIP None: the StatefulSet's
// governing service, giving each pod the DNS name <pod>.<name>.
func headlessService(a *app, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      a.name,
			Namespace: a.namespace,
			Labels:    a.objectLabels(),
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  selector,
			// Peers find each other before they are ready (cluster bootstrap).
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{
				Name:       portName,
				Port:       a.port,
				TargetPort: intstr.FromString(portName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

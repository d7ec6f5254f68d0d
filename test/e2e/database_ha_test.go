package e2e

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// haDatabaseController is database-controller with every child kind the
// compositecontroller.yaml declares, the PodDisruptionBudget and the
// instances' ServiceAccount, Role and RoleBinding and the Event of the last
// primary change of instances >= 2 among them.
var haDatabaseController = func() controller {
	c := databaseController
	c.children = append(append(c.children[:0:0], c.children...),
		policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
		corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
		rbacv1.SchemeGroupVersion.WithKind("Role"),
		rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
		eventsv1.SchemeGroupVersion.WithKind("Event"))
	return c
}()

// TestDatabaseInstances: at instances 3 the API server accepts every child
// and the status (no field pruned), and an idle sync writes nothing; the CRD
// refuses a spec.primary that names no instance.
func TestDatabaseInstances(t *testing.T) {
	ns := createNamespace(t, "database-instances")
	parent := createParent(t, haDatabaseController, ns, readExample(t, "database-ha.yaml"))
	name := parent.GetName()
	_, w := haDatabaseController.sync(t, ns, name, false)
	for _, want := range []string{
		"StatefulSet.apps/v1 " + name, "Service.v1 " + name, "Service.v1 " + name + "-ro", "Service.v1 " + name + "-r",
		"ConfigMap.v1 " + name + "-topology", "PodDisruptionBudget.policy/v1 " + name,
		"ServiceAccount.v1 " + name + "-instance", "Role.rbac.authorization.k8s.io/v1 " + name + "-instance",
		"RoleBinding.rbac.authorization.k8s.io/v1 " + name + "-instance",
	} {
		if !strings.Contains(strings.Join(w.created, "\n"), want) {
			t.Errorf("first sync created %v; want %s among them", w.created, want)
		}
	}
	settle(t, haDatabaseController, ns, name, "instances 3")

	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
		t.Fatal(err)
	}
	if *sts.Spec.Replicas != 3 || sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("StatefulSet: replicas %d, podManagementPolicy %s; want 3, Parallel", *sts.Spec.Replicas, sts.Spec.PodManagementPolicy)
	}
	svc := &corev1.Service{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		t.Fatal(err)
	}
	if got := svc.Spec.Selector[appsv1.StatefulSetPodNameLabel]; got != name+"-0" {
		t.Errorf("read-write Service selects pod %q, want %s-0", got, name)
	}
	status := haDatabaseController.get(t, ns, name).Object["status"].(map[string]any)
	if status["targetPrimary"] != name+"-0" || len(status["instances"].([]any)) != 3 {
		t.Errorf("status: targetPrimary %v, instances %v; want %s-0 and three", status["targetPrimary"], status["instances"], name)
	}

	for _, bad := range []string{name + "-3", "other-0"} {
		db := haDatabaseController.get(t, ns, name)
		if err := unstructured.SetNestedField(db.Object, bad, "spec", "primary"); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Update(testContext(t), db); err == nil {
			t.Errorf("the API server accepted spec.primary %q at instances 3", bad)
		}
	}
}

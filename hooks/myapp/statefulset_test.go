package myapp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func parse(t *testing.T, spec map[string]any) *app {
	t.Helper()
	a, err := parseParent(parentJSON(t, spec, nil))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestStatefulSetRollsOnConfigAndImage(t *testing.T) {
	base := build(parse(t, baseSpec()), 2)
	cases := map[string]struct {
		reason   string
		spec     map[string]any
		wantRoll bool
		wantSame bool // selector and volume templates unchanged
	}{
		"ConfigChange":  {reason: "a config change changes the pod template (hash annotation)", spec: withSpec(map[string]any{"config": map[string]any{"A": "1"}}), wantRoll: true, wantSame: true},
		"ImageChange":   {reason: "a new image rolls the pods", spec: withSpec(map[string]any{"image": "registry.example/demo:2.0"}), wantRoll: true, wantSame: true},
		"ScaleOnly":     {reason: "scaling does not touch the pod template", spec: withSpec(map[string]any{"replicaCount": 5}), wantRoll: false, wantSame: true},
		"HighAvailable": {reason: "HA adds scheduling rules to the template", spec: withSpec(map[string]any{"highAvailability": true}), wantRoll: true, wantSame: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := build(parse(t, tc.spec), 2)
			rolled := cmp.Diff(base.Spec.Template, got.Spec.Template) != ""
			if rolled != tc.wantRoll {
				t.Errorf("%s\npod template changed = %v, want %v", tc.reason, rolled, tc.wantRoll)
			}
			if diff := cmp.Diff(base.Spec.Selector, got.Spec.Selector); diff != "" {
				t.Errorf("%s\nthe selector changed (the API server forbids it): -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(base.Spec.VolumeClaimTemplates, got.Spec.VolumeClaimTemplates); tc.wantSame && diff != "" {
				t.Errorf("%s\nvolume templates changed (immutable): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestStatefulSetShape(t *testing.T) {
	a := parse(t, withSpec(map[string]any{"highAvailability": true, "storage": map[string]any{"size": "5Gi", "storageClassName": "fast"}}))
	sts := build(a, 3)
	if *sts.Spec.Replicas != 3 || sts.Spec.ServiceName != "demo" {
		t.Errorf("replicas %d serviceName %q, want 3 and demo", *sts.Spec.Replicas, sts.Spec.ServiceName)
	}
	policy := sts.Spec.PersistentVolumeClaimRetentionPolicy
	if policy == nil || policy.WhenDeleted != "Retain" || policy.WhenScaled != "Retain" {
		t.Errorf("PVC retention %v, want Retain/Retain: data volumes outlive the app", policy)
	}
	vct := sts.Spec.VolumeClaimTemplates[0]
	if vct.APIVersion != "v1" || vct.Kind != "PersistentVolumeClaim" || vct.Spec.VolumeMode == nil || vct.Status.Phase != corev1.ClaimPending {
		t.Errorf("volume template %+v is not in the server-defaulted form (a hot loop under dynamic apply)", vct)
	}
	if got := vct.Spec.Resources.Requests.Storage().String(); got != "5Gi" || *vct.Spec.StorageClassName != "fast" {
		t.Errorf("volume template storage %s class %v, want 5Gi fast", got, vct.Spec.StorageClassName)
	}
	pod := sts.Spec.Template.Spec
	if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil || len(pod.TopologySpreadConstraints) != 1 {
		t.Errorf("HA pod spec lacks anti-affinity or topology spread: %+v", pod)
	}
	for key, value := range freshSelector(a) {
		if sts.Spec.Template.Labels[key] != value {
			t.Errorf("pod template label %s=%q, want %q: the selector must match the pods", key, sts.Spec.Template.Labels[key], value)
		}
	}
}

func TestStatefulSetKeepsObservedSelector(t *testing.T) {
	a := parse(t, baseSpec())
	old := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "demo"}}}}
	selector := a.selector(&observed{statefulSet: old})
	sts := statefulSet(a, &observed{statefulSet: old}, selector, 2)
	if diff := cmp.Diff(map[string]string{"app": "demo"}, sts.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector of an existing StatefulSet was not kept: -want +got:\n%s", diff)
	}
	if sts.Spec.Template.Labels["app"] != "demo" {
		t.Errorf("pod labels %v no longer match the kept selector", sts.Spec.Template.Labels)
	}
	if service := headlessService(a, selector); service.Spec.Selector["app"] != "demo" || len(service.Spec.Selector) != 1 {
		t.Errorf("Service selector %v, want the kept selector", service.Spec.Selector)
	}
}

package kube

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRolloutProgress(t *testing.T) {
	three := int32(3)
	settled := appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, CurrentRevision: "r2", UpdateRevision: "r2"}
	sts := func(status appsv1.StatefulSetStatus) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: &three}, Status: status}
	}
	with := func(change func(*appsv1.StatefulSetStatus)) appsv1.StatefulSetStatus {
		s := settled
		change(&s)
		return s
	}
	cases := map[string]struct {
		reason      string
		sts         *appsv1.StatefulSet
		desired     int32
		wantSettled bool
	}{
		"Settled":       {reason: "latest spec seen, all replicas on one revision", sts: sts(settled), desired: 3, wantSettled: true},
		"StaleStatus":   {reason: "the controller has not seen generation 2", sts: sts(with(func(s *appsv1.StatefulSetStatus) { s.ObservedGeneration = 1 })), desired: 3},
		"SpecBehind":    {reason: "the hook wants 4, the StatefulSet still asks for 3", sts: sts(settled), desired: 4},
		"PodsMissing":   {reason: "2 of 3 pods exist", sts: sts(with(func(s *appsv1.StatefulSetStatus) { s.Replicas = 2 })), desired: 3},
		"RollingOut":    {reason: "revisions differ", sts: sts(with(func(s *appsv1.StatefulSetStatus) { s.UpdateRevision = "r3" })), desired: 3},
		"UpdatesBehind": {reason: "updated replicas lag", sts: sts(with(func(s *appsv1.StatefulSetStatus) { s.UpdatedReplicas = 1 })), desired: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			progress := RolloutProgress(tc.sts, tc.desired)
			if (progress == "") != tc.wantSettled {
				t.Errorf("%s\nRolloutProgress = %q, want settled %v", tc.reason, progress, tc.wantSettled)
			}
		})
	}
}

func TestTemplateChange(t *testing.T) {
	template := func() corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ConfigHashAnnotation: "a1"}},
			Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Image: "img:1"}},
				Containers:     []corev1.Container{{Name: "app", Image: "img:1"}, {Name: "side", Image: "side:1"}},
			},
		}
	}
	observed := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: template()}}
	// What the API server adds to an observed template changes nothing.
	observed.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = "2026-12-01T10:00:00Z"
	observed.Spec.Template.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	for _, tc := range []struct {
		name, reason string
		change       func(*corev1.PodTemplateSpec)
		observed     *appsv1.StatefulSet
		want         string
	}{
		{"Same", "defaults and annotations the hook does not set are not changes", nil, observed, ""},
		{"NothingObserved", "no StatefulSet yet is not a template change", nil, nil, ""},
		{"Image", "a new image", func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "img:2" }, observed, "container app image img:2 instead of img:1"},
		{"InitImage", "init containers count too", func(p *corev1.PodTemplateSpec) { p.Spec.InitContainers[0].Image = "img:2" }, observed, "init container init image img:2 instead of img:1"},
		{"InitRemoved", "the init container gone (a restore over) rolls the pods", func(p *corev1.PodTemplateSpec) { p.Spec.InitContainers = nil }, observed, "0 init containers instead of 1"},
		{"Added", "a container more", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "extra", Image: "x"})
		}, observed, "3 containers instead of 2"},
		{"Renamed", "a container under another name", func(p *corev1.PodTemplateSpec) { p.Spec.Containers[1].Name = "other" }, observed, "container other added"},
		{"Annotation", "the config hash", func(p *corev1.PodTemplateSpec) { p.Annotations[ConfigHashAnnotation] = "b2" }, observed, "annotation " + ConfigHashAnnotation},
		{"OwnAnnotationRemoved", "a hook's annotation the desired template no longer carries (a restore over)", func(p *corev1.PodTemplateSpec) { delete(p.Annotations, ConfigHashAnnotation) }, observed, "annotation " + ConfigHashAnnotation + " removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desired := template()
			if tc.change != nil {
				tc.change(&desired)
			}
			got := TemplateChange(tc.observed, &desired)
			if (tc.want == "") != (got == "") || !strings.HasSuffix(got, tc.want) {
				t.Errorf("%s\nTemplateChange = %q, want one ending in %q", tc.reason, got, tc.want)
			}
		})
	}
}

package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKeptSelector(t *testing.T) {
	fresh := map[string]string{"app.kubernetes.io/name": "myapp", "app.kubernetes.io/instance": "demo"}
	withSelector := func(selector *metav1.LabelSelector) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: selector}}
	}
	cases := map[string]struct {
		reason   string
		observed *appsv1.StatefulSet
		want     map[string]string
	}{
		"NoStatefulSet": {reason: "nothing observed: the fresh selector", observed: nil, want: fresh},
		"NoSelector":    {reason: "an observed StatefulSet without a selector", observed: withSelector(nil), want: fresh},
		"Kept": {
			reason:   "a StatefulSet selector is immutable: an older labelling scheme is kept",
			observed: withSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "demo"}}),
			want:     map[string]string{"app": "demo"},
		},
		"Expressions": {
			reason: "matchExpressions are not what the hooks write: the fresh selector",
			observed: withSelector(&metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "demo"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}},
			}),
			want: fresh,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := KeptSelector(tc.observed, fresh)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nKeptSelector: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestKeptSelectorIsACopy(t *testing.T) {
	observed := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "demo"}}}}
	KeptSelector(observed, nil)["app"] = "changed"
	if got := observed.Spec.Selector.MatchLabels["app"]; got != "demo" {
		t.Errorf("changing the kept selector changed the observed StatefulSet: app = %q, want demo", got)
	}
}

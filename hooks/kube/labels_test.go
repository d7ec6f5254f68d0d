package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLabels(t *testing.T) {
	want := map[string]string{
		"app.kubernetes.io/name":       "myapp",
		"app.kubernetes.io/instance":   "demo",
		"app.kubernetes.io/managed-by": "metahooks",
	}
	if diff := cmp.Diff(want, Labels("myapp", "demo")); diff != "" {
		t.Errorf("Labels: -want +got:\n%s", diff)
	}
	selector := SelectorLabels("myapp", "demo")
	if _, ok := selector["app.kubernetes.io/managed-by"]; ok || len(selector) != 2 {
		t.Errorf("SelectorLabels = %v, want name and instance only", selector)
	}
}

func TestComponentLabels(t *testing.T) {
	cases := map[string]struct {
		reason string
		got    map[string]string
		want   map[string]string
	}{
		"Selector": {
			reason: "a component selector is name, instance and component, never managed-by",
			got:    ComponentSelector("database", "orders", "server"),
			want:   map[string]string{"app.kubernetes.io/name": "database", "app.kubernetes.io/instance": "orders", "app.kubernetes.io/component": "server"},
		},
		"PodLabels": {
			reason: "pod labels are the object labels and the component",
			got:    PodLabels("myapp", "demo", "backup", nil),
			want: map[string]string{
				"app.kubernetes.io/name": "myapp", "app.kubernetes.io/instance": "demo",
				"app.kubernetes.io/managed-by": "metahooks", "app.kubernetes.io/component": "backup",
			},
		},
		"PodLabelsKeepSelector": {
			reason: "server pods carry every label of a kept selector, so they keep matching it",
			got:    PodLabels("myapp", "demo", "server", map[string]string{"app": "demo"}),
			want: map[string]string{
				"app.kubernetes.io/name": "myapp", "app.kubernetes.io/instance": "demo",
				"app.kubernetes.io/managed-by": "metahooks", "app.kubernetes.io/component": "server", "app": "demo",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

package kube

import (
	"fmt"
	"maps"
	"strings"
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

func TestCheckKeptSelector(t *testing.T) {
	withLabels := func(labels map[string]string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	}
	many := map[string]string{}
	for i := range MaxKeptSelectorLabels + 1 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	most := maps.Clone(many)
	delete(most, "k0")
	cases := map[string]struct {
		reason   string
		observed *appsv1.StatefulSet
		want     string // "" for no error
	}{
		"None":       {reason: "no observed StatefulSet", observed: nil},
		"NoSelector": {reason: "a StatefulSet without a selector", observed: &appsv1.StatefulSet{}},
		"Ours":       {reason: "the three labels the hooks write", observed: withLabels(ComponentSelector("myapp", "demo", ComponentServer))},
		"AtTheBound": {reason: "MaxKeptSelectorLabels labels", observed: withLabels(most)},
		"TooMany": {reason: "one over the bound: the answer would copy them everywhere", observed: withLabels(many),
			want: `children["StatefulSet.apps/v1"]["demo"].spec.selector.matchLabels: 17 labels; a selector the hooks write has at most 16`},
		"BadKey": {reason: "a key no API server holds", observed: withLabels(map[string]string{"a b": "v"}),
			want: `children["StatefulSet.apps/v1"]["demo"].spec.selector.matchLabels: a key that is no label key`},
		"BadValue": {reason: "a value longer than 63", observed: withLabels(map[string]string{"a": strings.Repeat("v", 64)}),
			want: `children["StatefulSet.apps/v1"]["demo"].spec.selector.matchLabels: a value that is no label value`},
	}
	for name, tc := range cases {
		err := CheckKeptSelector(tc.observed)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s (%s): %v, want none", name, tc.reason, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s (%s): %v, want %q", name, tc.reason, err, tc.want)
		}
	}
}

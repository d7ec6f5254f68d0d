package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConditions(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 11, 30, 5, 0, 0, 123, time.UTC)
	nowSeconds := metav1.NewTime(now.Truncate(time.Second))
	ready := func(status metav1.ConditionStatus, reason string, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: reason, ObservedGeneration: 2, LastTransitionTime: at}
	}
	cases := map[string]struct {
		reason   string
		previous []metav1.Condition
		desired  []metav1.Condition
		want     []metav1.Condition
	}{
		"New": {
			reason:  "a condition seen for the first time transitions now (to the second)",
			desired: []metav1.Condition{ready(metav1.ConditionFalse, "Creating", metav1.Time{})},
			want:    []metav1.Condition{ready(metav1.ConditionFalse, "Creating", nowSeconds)},
		},
		"Unchanged": {
			reason:   "same status keeps the previous time, so an idle sync writes nothing",
			previous: []metav1.Condition{ready(metav1.ConditionTrue, "Available", earlier)},
			desired:  []metav1.Condition{ready(metav1.ConditionTrue, "Available", metav1.Time{})},
			want:     []metav1.Condition{ready(metav1.ConditionTrue, "Available", earlier)},
		},
		"ReasonChangedStatusNot": {
			reason:   "a new reason with the same status is not a transition",
			previous: []metav1.Condition{ready(metav1.ConditionFalse, "Creating", earlier)},
			desired:  []metav1.Condition{ready(metav1.ConditionFalse, "Unavailable", metav1.Time{})},
			want:     []metav1.Condition{ready(metav1.ConditionFalse, "Unavailable", earlier)},
		},
		"Flipped": {
			reason:   "a status change is a transition",
			previous: []metav1.Condition{ready(metav1.ConditionFalse, "Creating", earlier)},
			desired:  []metav1.Condition{ready(metav1.ConditionTrue, "Available", metav1.Time{})},
			want:     []metav1.Condition{ready(metav1.ConditionTrue, "Available", nowSeconds)},
		},
		"DropsUnmanaged": {
			reason:   "conditions the hook does not compute are not carried (status is replaced wholesale)",
			previous: []metav1.Condition{{Type: "Other", Status: metav1.ConditionTrue, LastTransitionTime: earlier}},
			desired:  []metav1.Condition{ready(metav1.ConditionTrue, "Available", metav1.Time{})},
			want:     []metav1.Condition{ready(metav1.ConditionTrue, "Available", nowSeconds)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Conditions(tc.previous, now, tc.desired...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nConditions(...): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

package database

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPrimaryChangeEvent(t *testing.T) {
	d := mustParse(t, newDatabase(withInstances(3)))
	at := time.Date(2026, 11, 30, 4, 59, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, reason string
		t            *topology
		wantType     string // "" for no Event
		wantNote     string
	}{
		{"Single", "one server has no primary changes", nil, "", ""},
		{"NoChangeYet", "a new Database: pod 0 has always been the primary", &topology{record: record{primary: "orders-0"}}, "", ""},
		{"Failover", "an unplanned change is a Warning", &topology{record: record{primary: "orders-2", change: &primaryChange{from: "orders-0", to: "orders-2", reason: changeFailover, at: at}}},
			corev1.EventTypeWarning, "primary orders-0 was not Ready for failoverDelaySeconds: orders-2 promoted, as the standby holding the most WAL"},
		{"Switchover", "spec.primary: planned", &topology{record: record{primary: "orders-1", change: &primaryChange{from: "orders-0", to: "orders-1", reason: changeSwitchover, at: at}}},
			corev1.EventTypeNormal, "primary moved from orders-0 to orders-1 in a planned, clean switchover"},
		{"RollingUpdate", "the primary updated last", &topology{record: record{primary: "orders-1", change: &primaryChange{from: "orders-0", to: "orders-1", reason: changeRollingUpdate, at: at}}},
			corev1.EventTypeNormal, "primary moved from orders-0 to orders-1, already on the new pod template, so the old primary is updated last"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := primaryChangeEvent(d, tc.t)
			if tc.wantType == "" {
				if got != nil {
					t.Errorf("%s\nan Event %s, want none", tc.reason, got.Name)
				}
				return
			}
			c := tc.t.record.change
			want := &eventsv1.Event{
				TypeMeta:            metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
				ObjectMeta:          metav1.ObjectMeta{Name: "orders.primary-1796014740", Namespace: testNamespace, Labels: d.objectLabels()},
				EventTime:           metav1.NewMicroTime(at),
				ReportingController: eventReporter, ReportingInstance: eventReporter,
				Action: c.reason, Reason: c.reason, Type: tc.wantType, Note: tc.wantNote,
				Regarding: corev1.ObjectReference{APIVersion: "example.com/v1", Kind: "Database", Namespace: testNamespace, Name: testName, UID: testUID},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nprimaryChangeEvent (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

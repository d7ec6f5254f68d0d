package database

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// eventReporter names the hook as the reporting controller of its Events.
const eventReporter = "example.com/metahooks-database"

// primaryChangeEvent is the last change of primary as an Event about the
// Database (instances >= 2), so `kubectl describe db` and `kubectl events`
// show failovers and switchovers: Warning for a failover, Normal for a
// planned switchover. It is a child like any other, named after the change
// (<n>.primary-<unix time>): an Event's fields are immutable, so a new change
// is a new Event and the answer drops the old one. Everything in it comes
// from the record, so every replica answers the same bytes. The API server
// expires Events after its --event-ttl (1 h by default); Metacontroller then
// creates it again from the answer, with the same eventTime.
func primaryChangeEvent(d *database, t *topology) *eventsv1.Event {
	if t == nil || t.record.change == nil {
		return nil
	}
	c := t.record.change
	kind, note := corev1.EventTypeNormal, fmt.Sprintf("primary moved from %s to %s in a planned, clean switchover", c.from, c.to)
	switch c.reason {
	case changeFailover:
		kind, note = corev1.EventTypeWarning, fmt.Sprintf("primary %s was not Ready for failoverDelaySeconds: %s promoted, as the standby holding the most WAL", c.from, c.to)
	case changeRollingUpdate:
		note = fmt.Sprintf("primary moved from %s to %s, already on the new pod template, so the old primary is updated last", c.from, c.to)
	}
	return &eventsv1.Event{
		TypeMeta:            metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.primary-%d", d.name, c.at.Unix()), Namespace: d.namespace, Labels: d.objectLabels()},
		EventTime:           metav1.NewMicroTime(c.at.UTC()),
		ReportingController: eventReporter,
		ReportingInstance:   eventReporter,
		Action:              c.reason,
		Reason:              c.reason,
		Regarding: corev1.ObjectReference{
			APIVersion: GroupVersionKind.GroupVersion().String(), Kind: GroupVersionKind.Kind,
			Namespace: d.namespace, Name: d.name, UID: types.UID(d.uid),
		},
		Note: note,
		Type: kind,
	}
}

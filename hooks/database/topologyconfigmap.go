package database

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// topologyConfigMap is ConfigMap <name>-topology (instances >= 2): the
// record of who is the primary, which the instances read (mounted at
// /etc/topology) and the hook reads back. No instance promotes itself unless
// this record names it.
func topologyConfigMap(d *database, t *topology) *corev1.ConfigMap {
	if t == nil {
		return nil
	}
	rec := t.record
	data := map[string]string{
		topologyPrimaryKey:  rec.primary,
		topologyEpochKey:    strconv.FormatUint(rec.epoch, 10),
		topologyDatabaseKey: d.uid,
		// The ordinals 0 to instances-1 are the members: the primary
		// keeps a replication slot for every other one and drops the
		// slots of the rest (scripts/instance.sh, manage_slots).
		topologyInstancesKey: strconv.Itoa(int(t.replicas)),
	}
	if rec.fenced {
		data[topologyFencedKey] = "true"
	}
	if !rec.unavailableSince.IsZero() {
		data[topologyUnavailableKey] = rec.unavailableSince.UTC().Format(time.RFC3339)
	}
	if names := synchronousStandbyNames(d.ha, t.standbyNames(d)); names != "" {
		data[topologySynchronousKey] = names
	}
	if rec.switchoverTo != "" {
		data[topologySwitchoverKey] = rec.switchoverTo
		data[topologySwitchoverReasonKey] = rec.switchoverReason
	}
	if c := rec.change; c != nil {
		data[topologyPreviousKey] = c.from
		data[topologyReasonKey] = c.reason
		data[topologyChangedKey] = c.at.UTC().Format(time.RFC3339)
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: d.topologyName(), Namespace: d.namespace, Labels: d.objectLabels()},
		Data:       data,
	}
}

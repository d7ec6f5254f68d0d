package database

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/kube"
)

// Conditions and reasons of a Database with instances >= 2.
const (
	ConditionReplicating = "Replicating"
	ConditionFailingOver = "FailingOver"

	ReasonPrimaryUnavailable = "PrimaryUnavailable"
	ReasonPromoting          = "Promoting"
	ReasonStreaming          = "Streaming"
	ReasonStandbysLagging    = "StandbysNotStreaming"
	ReasonPrimaryAvailable   = "PrimaryAvailable"
	ReasonFailoverPending    = "FailoverPending"
	ReasonFailoverBlocked    = "FailoverBlocked"
	ReasonFencing            = "Fencing"
	ReasonFailoverDecided    = "StandbyPromoted"
	ReasonSwitchingOver      = "SwitchingOver"
)

// instancesStatus fills the instances, the primaries and the last change.
func instancesStatus(d *database, t *topology, st *dbv1.DatabaseStatus) {
	primary := t.primary(d)
	var ready int32
	for _, i := range t.instances {
		role := roleStandby
		if i.name == t.record.primary {
			role = rolePrimary
		}
		is := dbv1.InstanceStatus{Name: i.name, Role: role, Ready: i.ready, State: i.state()}
		if pr, r := primary.report, i.report; role == roleStandby && pr != nil && r != nil && pr.role == rolePrimary && pr.timeline == r.timeline && r.role == roleStandby {
			lag := int64(0)
			if pr.lsn > r.lsn {
				lag = int64(pr.lsn - r.lsn)
			}
			is.LagBytes = &lag
		}
		if i.ready {
			ready++
		}
		st.Instances = append(st.Instances, is)
	}
	st.ReadyInstances = &ready
	st.TargetPrimary = t.record.primary
	if t.record.switchoverTo != "" {
		st.TargetPrimary = t.record.switchoverTo
	}
	if primary.ready && (primary.report == nil || primary.report.role == rolePrimary) {
		st.CurrentPrimary = primary.name
	}
	if c := t.record.change; c != nil {
		st.LastPrimaryChange = &dbv1.PrimaryChange{From: c.from, To: c.to, Reason: c.reason, Time: metav1.NewTime(c.at)}
	}
}

// primaryReadyCondition is Ready with instances >= 2: the single-server
// answer (single) while there is no StatefulSet, the Database hibernates, is
// deleted or restored; otherwise True exactly when the primary's pod is
// ready and it does not report another role (a standby not promoted yet).
func primaryReadyCondition(d *database, r rollout, p plan, t *topology, single metav1.Condition) metav1.Condition {
	if p.finalizing || !r.exists || p.replicas == 0 || p.restoring {
		return single
	}
	primary := t.primary(d)
	switch {
	case primary.ready && primary.report != nil && primary.report.role != rolePrimary:
		return condition(d, kube.ConditionReady, metav1.ConditionFalse, ReasonPromoting,
			fmt.Sprintf("%s is to be the primary but still reports role %s: waiting for it to promote itself on the topology record", primary.name, primary.report.role))
	case primary.ready:
		return condition(d, kube.ConditionReady, metav1.ConditionTrue, ReasonAvailable,
			fmt.Sprintf("accepting connections at %s:%d (primary %s)", d.host(), port, primary.name))
	}
	return condition(d, kube.ConditionReady, metav1.ConditionFalse, ReasonPrimaryUnavailable,
		fmt.Sprintf("primary %s is not ready; see condition FailingOver", primary.name))
}

// replicatingCondition is True when every standby below spec.instances is
// ready and streams from the primary.
func replicatingCondition(d *database, p plan, t *topology) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return condition(d, ConditionReplicating, status, reason, message)
	}
	if p.replicas == 0 {
		return c(metav1.ConditionFalse, ReasonHibernated, "hibernating: no instance runs")
	}
	var behind []string
	names := t.standbyNames(d)
	for _, name := range names {
		i := t.instances[d.ordinalOf(name)]
		switch {
		case !i.ready:
			behind = append(behind, name+" is not ready")
		case i.report == nil || i.report.role != roleStandby || !i.report.receiving:
			behind = append(behind, name+" is not streaming ("+i.state()+")")
		}
	}
	if len(behind) > 0 {
		return c(metav1.ConditionFalse, ReasonStandbysLagging, strings.Join(behind, "; "))
	}
	mode := "synchronous: a commit waits for one of them"
	if !d.ha.synchronous {
		mode = "asynchronous: a failover may lose the latest commits"
	}
	return c(metav1.ConditionTrue, ReasonStreaming, fmt.Sprintf("%s stream from %s (%s)", strings.Join(names, ", "), t.record.primary, mode))
}

// failingOverCondition says whether the primary is unavailable and what the
// hook does about it.
func failingOverCondition(d *database, t *topology) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return condition(d, ConditionFailingOver, status, reason, message)
	}
	since := t.unavailableSince.UTC().Format(time.RFC3339)
	switch t.failover {
	case failoverPending:
		return c(metav1.ConditionTrue, ReasonFailoverPending, fmt.Sprintf(
			"primary %s not ready since %s; a standby is promoted once it has been for %s (spec.failoverDelaySeconds)",
			t.primary(d).name, since, d.ha.failoverDelay))
	case failoverBlocked:
		return c(metav1.ConditionTrue, ReasonFailoverBlocked, fmt.Sprintf(
			"primary %s is not ready, and no standby is promoted: %s", t.primary(d).name, t.failoverWhy))
	case failoverFencing:
		return c(metav1.ConditionTrue, ReasonFencing, fmt.Sprintf(
			"primary %s not ready since %s and must not accept writes; no standby is promoted until it is safe: %s", t.primary(d).name, since, t.failoverWhy))
	case failoverDecided:
		return c(metav1.ConditionTrue, ReasonFailoverDecided, fmt.Sprintf("primary %s not ready since %s: %s", t.record.change.from, since, t.failoverWhy))
	}
	if rec := t.record; rec.switchoverTo != "" {
		return c(metav1.ConditionFalse, ReasonSwitchingOver, fmt.Sprintf(
			"%s: %s shuts down cleanly, then %s is promoted once it has received all of its WAL", strings.ToLower(rec.switchoverReason), rec.primary, rec.switchoverTo))
	}
	msg := "primary " + t.record.primary + " is ready"
	if t.switchoverWaiting != "" {
		msg += "; " + t.switchoverWaiting
	}
	return c(metav1.ConditionFalse, ReasonPrimaryAvailable, msg)
}

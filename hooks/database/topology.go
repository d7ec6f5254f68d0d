package database

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/composite"
)

// The keys of ConfigMap <name>-topology: the record of who is the primary.
// The hook writes it and reads it back from the observed ConfigMap; the
// instances read it (mounted at /etc/topology) to learn their roles.
const (
	topologyPrimaryKey          = "primary"                 // the instance that is, or is to become, the primary
	topologySynchronousKey      = "synchronousStandbyNames" // the primary's synchronous_standby_names; absent when asynchronous
	topologySwitchoverKey       = "switchoverTo"            // a planned switchover under way: the primary shuts down cleanly, then this one is promoted
	topologySwitchoverReasonKey = "switchoverReason"        // Switchover (spec.primary) or RollingUpdate
	topologyPreviousKey         = "previousPrimary"         // the last change: from
	topologyReasonKey           = "reason"                  // the last change: Failover, Switchover or RollingUpdate
	topologyChangedKey          = "changedAt"               // the last change: when the hook decided it, RFC 3339
	topologyEpochKey            = "epoch"                   // raised by every fence and every change of primary; instances repeat it in their reports
	topologyFencedKey           = "fenced"                  // "true": a failover is under way; the primary must not write, the standbys stop receiving
	topologyUnavailableKey      = "unavailableSince"        // when this hook first saw the primary not Ready, RFC 3339 (its own clock)
	topologyDatabaseKey         = "databaseUID"             // the Database's UID: an instance's remembered epoch belongs to one Database
	topologyInstancesKey        = "instances"               // how many ordinals run (the StatefulSet's replicas): the primary keeps a replication slot for each other one
)

// maxEpoch bounds the record's epoch: a value an instance's shell arithmetic
// and the hook's uint64 both hold.
const maxEpoch = 1 << 53

// Reasons of a change of primary.
const (
	changeFailover      = "Failover"
	changeSwitchover    = "Switchover"
	changeRollingUpdate = "RollingUpdate"
)

// How soon to look again while a failover cannot be decided yet: pod and
// report changes also trigger a call (the pods are related objects).
const failoverBlockedResyncSeconds = 15

// record is the content of the topology ConfigMap.
type record struct {
	primary          string
	switchoverTo     string
	switchoverReason string
	epoch            uint64         // see topologyEpochKey
	fenced           bool           // see topologyFencedKey
	unavailableSince time.Time      // see topologyUnavailableKey; zero while the primary is Ready
	change           *primaryChange // the last change; nil before the first
}

type primaryChange struct {
	from, to, reason string
	at               time.Time
}

// failoverState says where the primary's availability stands.
type failoverState int

const (
	primaryAvailable failoverState = iota
	failoverPending                // not Ready, for less than failoverDelaySeconds
	failoverBlocked                // not Ready for longer, and the primary is not fenced: no standby could be promoted
	failoverFencing                // fenced: waiting for the standbys to stop receiving and report their final positions
	failoverDecided                // a standby was promoted by this answer
)

// topology is the hook's decision about the instances for this call.
type topology struct {
	record    record
	instances []instance
	replicas  int32 // the StatefulSet's replicas before hibernation
	partition int32 // the StatefulSet's rollingUpdate partition

	failover           failoverState
	unavailableSince   time.Time // when the hook first saw the primary not Ready; zero while it is
	failoverWhy        string    // why no standby is promoted (failoverBlocked, failoverFencing), or what was decided
	switchoverWaiting  string    // why a wanted switchover has not started; "" otherwise
	resyncAfterSeconds float64
}

// observeRecord reads the observed topology ConfigMap; pod 0 is the primary
// when there is none. A record naming no instance of this Database is a
// malformed child: the call fails (400) and nothing is changed, since any
// guess could make two primaries.
func observeRecord(d *database, cm *corev1.ConfigMap) (record, error) {
	rec := record{primary: d.instanceName(0)}
	if cm == nil {
		return rec, nil
	}
	field := func(key string) string {
		return fmt.Sprintf(`children["ConfigMap.v1"][%q].data.%s`, d.topologyName(), key)
	}
	primary := cm.Data[topologyPrimaryKey]
	if _, ok := d.instanceOrdinal(primary); !ok {
		return record{}, &composite.RequestError{Field: field(topologyPrimaryKey), Reason: fmt.Sprintf("must name an instance %s-<ordinal>, got %s", d.name, composite.Quote(primary))}
	}
	rec.primary = primary
	if to := cm.Data[topologySwitchoverKey]; to != "" {
		if _, ok := d.instanceOrdinal(to); !ok || to == primary {
			return record{}, &composite.RequestError{Field: field(topologySwitchoverKey), Reason: fmt.Sprintf("must name another instance %s-<ordinal>, got %s", d.name, composite.Quote(to))}
		}
		rec.switchoverTo = to
		rec.switchoverReason = cm.Data[topologySwitchoverReasonKey]
		if rec.switchoverReason != changeRollingUpdate {
			rec.switchoverReason = changeSwitchover
		}
	}
	if v, ok := cm.Data[topologyEpochKey]; ok {
		epoch, err := strconv.ParseUint(v, 10, 64)
		if err != nil || epoch > maxEpoch {
			return record{}, &composite.RequestError{Field: field(topologyEpochKey), Reason: fmt.Sprintf("must be a whole number from 0 to %d", uint64(maxEpoch))}
		}
		rec.epoch = epoch
	}
	switch cm.Data[topologyFencedKey] {
	case "":
	case "true":
		rec.fenced = true
	default:
		return record{}, &composite.RequestError{Field: field(topologyFencedKey), Reason: `must be "true" or absent`}
	}
	if v := cm.Data[topologyUnavailableKey]; v != "" {
		at, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return record{}, &composite.RequestError{Field: field(topologyUnavailableKey), Reason: "must be an RFC 3339 time"}
		}
		rec.unavailableSince = at.UTC()
	}
	if rec.fenced && rec.switchoverTo != "" {
		return record{}, &composite.RequestError{Field: field(topologyFencedKey), Reason: "a fenced record has no switchoverTo"}
	}
	if from := cm.Data[topologyPreviousKey]; from != "" {
		at, err := time.Parse(time.RFC3339, cm.Data[topologyChangedKey])
		if err != nil {
			return record{}, &composite.RequestError{Field: field(topologyChangedKey), Reason: "must be an RFC 3339 time"}
		}
		rec.change = &primaryChange{from: from, to: primary, reason: cm.Data[topologyReasonKey], at: at.UTC()}
	}
	return rec, nil
}

// ordinalOf is the ordinal of an instance name the record holds (validated).
func (d *database) ordinalOf(name string) int {
	n, _ := d.instanceOrdinal(name)
	return n
}

// instanceCount is how many ordinals the StatefulSet must keep: the spec's
// instances, or more while the primary (or a switchover's target) sits above
// them: scaling down never removes the primary, it is moved first.
func instanceCount(d *database, rec record) int {
	n := int(d.ha.instances)
	for _, name := range []string{rec.primary, rec.switchoverTo} {
		if name != "" {
			n = max(n, d.ordinalOf(name)+1)
		}
	}
	return n
}

// decideTopology is the pure decision of who is the primary, from the
// observed record, pods and StatefulSet, the spec and the time. See
// docs/database.md, High availability, for the rules and why they lose no
// acknowledged commit.
//
// templateHash is the hash of the pod template this answer gives the
// StatefulSet: an observed template with another one is about to roll.
func decideTopology(d *database, sts *appsv1.StatefulSet, rec record, insts []instance, templateHash string, now time.Time) topology {
	t := decidePrimary(d, sts, rec, insts, templateHash, now)
	t.partition = partition(sts, templateHash, d.ordinalOf(t.record.primary), insts)
	return t
}

// decidePrimary is decideTopology but for the partition.
//
// A failover takes three answers, each on what the one before it caused
// (docs/database.md, Failover): the primary is seen not Ready (the record
// keeps when, on this hook's clock); once it has been for
// failoverDelaySeconds the record is fenced under a new epoch (the primary
// must not write; the standbys stop their WAL receivers); once the standbys
// report that epoch with their receivers stopped, the furthest is promoted
// under the next epoch. A fence is never undone: only a promotion ends it.
func decidePrimary(d *database, sts *appsv1.StatefulSet, rec record, insts []instance, templateHash string, now time.Time) topology {
	t := topology{record: rec, instances: insts, replicas: int32(len(insts))}
	if d.hibernate {
		return t
	}
	primary := insts[d.ordinalOf(rec.primary)]
	t.unavailableSince = rec.unavailableSince

	if rec.fenced {
		target, why := chooseFailover(d, rec, insts)
		if target == "" {
			t.failover, t.failoverWhy = failoverFencing, why
			t.resyncAfterSeconds = failoverBlockedResyncSeconds
			return t
		}
		t.promote(target, changeFailover, now)
		t.failover, t.failoverWhy = failoverDecided, why
		return t
	}
	// A planned switchover completes as soon as the old primary has shut
	// down cleanly and the target has received all of its WAL.
	if rec.switchoverTo != "" {
		target := insts[d.ordinalOf(rec.switchoverTo)]
		if caughtUpWith(target, primary.report) {
			t.promote(target.name, rec.switchoverReason, now)
			return t
		}
	}
	if !primary.ready {
		// Without a Ready standby no failover can follow (a new Database
		// starting, every instance down): nothing is counted or recorded.
		if why := fenceBlocker(d, rec, insts); why != "" {
			t.record.unavailableSince, t.unavailableSince = time.Time{}, time.Time{}
			t.failover, t.failoverWhy = failoverBlocked, why
			t.resyncAfterSeconds = failoverBlockedResyncSeconds
			return t
		}
		since := rec.unavailableSince
		if since.IsZero() {
			since = now.UTC().Truncate(time.Second)
		}
		t.record.unavailableSince, t.unavailableSince = since, since
		waited := max(now.Sub(since), 0)
		if waited < d.ha.failoverDelay {
			t.failover = failoverPending
			t.resyncAfterSeconds = max(math.Ceil((d.ha.failoverDelay - waited).Seconds()), 1)
			return t
		}
		t.record.fenced, t.record.switchoverTo, t.record.switchoverReason = true, "", ""
		t.record.epoch++
		t.failover = failoverFencing
		t.failoverWhy = fmt.Sprintf("fenced at epoch %d: waiting for the standbys to stop receiving WAL and report their final positions", t.record.epoch)
		t.resyncAfterSeconds = failoverBlockedResyncSeconds
		return t
	}
	t.record.unavailableSince = time.Time{}
	if rec.switchoverTo != "" {
		return t // waiting for the primary to shut down cleanly
	}
	want, reason := wantedSwitchover(d, sts, rec, insts, templateHash)
	if want == "" {
		return t
	}
	if why := switchoverBlocker(insts[d.ordinalOf(want)], want); why != "" {
		t.switchoverWaiting = fmt.Sprintf("%s to %s waits: %s", strings.ToLower(reason), want, why)
		return t
	}
	t.record.switchoverTo, t.record.switchoverReason = want, reason
	return t
}

// promote makes name the primary in the record, under the next epoch.
func (t *topology) promote(name, reason string, now time.Time) {
	from := t.record.primary
	t.record = record{primary: name, epoch: t.record.epoch + 1, change: &primaryChange{from: from, to: name, reason: reason, at: now.UTC().Truncate(time.Second)}}
}

// caughtUpWith reports a ready standby that has received every WAL record of
// old, the report of a primary that shut down cleanly (demoted): its
// shutdown checkpoint is the last record it wrote.
func caughtUpWith(target instance, old *report) bool {
	r := target.report
	return old != nil && old.role == roleDemoted && target.ready && r != nil && r.role == roleStandby &&
		r.timeline == old.timeline && r.lsn >= old.lsn
}

// fenceBlocker says why the primary, not Ready, is neither counted down nor
// fenced, or "": a fence stops the primary for good (only a promotion ends
// it), so it is raised, and the delay counted, only while some standby is
// Ready to take over.
func fenceBlocker(d *database, rec record, insts []instance) string {
	standbys := 0
	for _, i := range insts {
		if i.name == rec.primary || i.ordinal >= int(d.ha.instances) {
			continue
		}
		standbys++
		if i.pod != nil && i.ready {
			return ""
		}
	}
	if standbys == 0 {
		return "there is no standby"
	}
	return "no standby is ready: the primary is not fenced, and may come back (the delay counts once a standby is Ready)"
}

// chooseFailover picks the standby to promote in a fenced record, or says
// what the failover waits for.
//
// A standby's report is final when it repeats the fenced record's epoch: the
// instance writes that epoch only once it has seen the fence, cleared its
// primary_conninfo, its WAL receiver is gone and its startup process has
// replayed all the WAL it holds (scripts/instance.sh). Nothing more can reach
// it, so its position, the larger of received and replayed, is the end of
// what it holds. The epoch makes freshness causal: no clock is compared.
// WAL is one sequence per timeline, so the standby furthest along holds
// everything any standby holds.
//
// Synchronous (ANY 1 of all the standbys): every acknowledged commit is on
// at least one standby, so every standby must report final (one not heard
// from may hold the only copy), and the furthest must be ready.
//
// Asynchronous: every standby that runs (its pod Ready, or its last report
// streaming) must report final, since one still streaming means the old
// primary still runs; a standby without a pod, or down and not streaming,
// is not waited for. The furthest ready final standby is promoted; commits
// it lacks are lost (the documented risk).
//
// Ties go to spec.primary, then to the lowest ordinal.
func chooseFailover(d *database, rec record, insts []instance) (string, string) {
	var finals []instance
	var waiting []string
	for _, i := range insts {
		if i.name == rec.primary || i.ordinal >= int(d.ha.instances) {
			continue
		}
		r := i.report
		runs := i.pod != nil && (i.ready || (r != nil && r.receiving))
		switch {
		case !d.ha.synchronous && !runs:
			continue
		case i.pod == nil || r == nil:
			waiting = append(waiting, i.name+" has not reported")
		case r.epoch != rec.epoch:
			waiting = append(waiting, fmt.Sprintf("%s has not reported epoch %d (it reports %d, %s)", i.name, rec.epoch, r.epoch, i.state()))
		case r.role != roleStandby || r.receiving:
			waiting = append(waiting, fmt.Sprintf("%s reports %s", i.name, i.state()))
		default:
			finals = append(finals, i)
		}
	}
	mode := "asynchronous replication: a standby that still runs may still receive WAL from the primary"
	if d.ha.synchronous {
		mode = "synchronous replication: every standby must report its final WAL position, as any of them may hold the only copy of acknowledged commits"
	}
	if len(waiting) > 0 {
		return "", fmt.Sprintf("fenced at epoch %d; %s: %s", rec.epoch, mode, strings.Join(waiting, "; "))
	}
	if len(finals) == 0 {
		return "", fmt.Sprintf("fenced at epoch %d; no standby runs", rec.epoch)
	}
	best := finals[0]
	for _, i := range finals[1:] {
		if i.report.after(best.report) {
			best = i
		}
	}
	var eligible []instance
	for _, i := range finals {
		if i.ready && !best.report.after(i.report) {
			eligible = append(eligible, i)
		}
	}
	if len(eligible) == 0 {
		return "", fmt.Sprintf("fenced at epoch %d; the standby furthest along, %s (timeline %d, WAL %s), is not ready", rec.epoch, best.name, best.report.timeline, formatLSN(best.report.lsn))
	}
	chosen := eligible[0]
	for _, i := range eligible {
		if i.name == d.ha.preferred {
			chosen = i
		}
	}
	return chosen.name, fmt.Sprintf("%s promoted: it holds WAL up to %s on timeline %d, as far as any standby", chosen.name, formatLSN(chosen.report.lsn), chosen.report.timeline)
}

// wantedSwitchover is the instance the primary should move to, with the
// reason, or "": during a rolling update, an updated standby once every pod
// the update may restart first is done (the primary is updated last); else
// spec.primary when it names another instance.
func wantedSwitchover(d *database, sts *appsv1.StatefulSet, rec record, insts []instance, templateHash string) (string, string) {
	p := d.ordinalOf(rec.primary)
	if p >= int(d.ha.instances) {
		for _, i := range insts[:d.ha.instances] {
			if switchoverBlocker(i, i.name) == "" {
				return i.name, changeSwitchover
			}
		}
		return insts[0].name, changeSwitchover
	}
	if rollingUpdatePending(sts, templateHash, insts[p]) {
		if templateChanging(sts, templateHash) {
			return "", "" // no pod runs the new template yet
		}
		for _, i := range insts[p+1:] {
			if !i.updated || !i.ready {
				return "", "" // the pods above the primary roll first
			}
		}
		// Prefer an updated standby; when the primary is the highest
		// ordinal none can be, so it moves down first.
		for _, updated := range []bool{true, false} {
			for _, i := range insts[:d.ha.instances] {
				if i.ordinal != p && i.updated == updated && switchoverBlocker(i, i.name) == "" {
					return i.name, changeRollingUpdate
				}
			}
		}
		return "", ""
	}
	if d.ha.preferred != "" && d.ha.preferred != rec.primary {
		return d.ha.preferred, changeSwitchover
	}
	return "", ""
}

// switchoverBlocker says why name cannot become the primary in a planned
// switchover now, or "": it must be a ready standby streaming from the
// primary.
func switchoverBlocker(i instance, name string) string {
	switch r := i.report; {
	case i.pod == nil:
		return "pod " + name + " does not exist"
	case !i.ready:
		return name + " is not ready"
	case r == nil:
		return name + " has not reported its role and WAL position"
	case r.role != roleStandby || !r.receiving:
		return name + " is not a streaming standby"
	}
	return ""
}

// rollingUpdatePending reports whether the primary's pod is not on the
// StatefulSet's latest template: the template is about to change (its hash
// differs from this answer's), or the primary's pod has not been restarted on
// it. A missing pod is made on the latest template.
func rollingUpdatePending(sts *appsv1.StatefulSet, templateHash string, primary instance) bool {
	if sts == nil {
		return false
	}
	return templateChanging(sts, templateHash) || (primary.pod != nil && !primary.updated)
}

// templateChanging reports an observed pod template other than this
// answer's: no pod runs the new one yet, whatever the pods' revisions say.
func templateChanging(sts *appsv1.StatefulSet, templateHash string) bool {
	return sts.Spec.Template.Annotations[templateHashKey] != templateHash
}

// partition is the StatefulSet's rollingUpdate partition: pods at or above
// it take the latest template. While the primary is not on it, only the pods
// above the primary may roll; once it is (after a switchover to an updated
// standby), all may. While the StatefulSet controller has not seen the latest
// spec its status is stale, so the observed partition is kept.
func partition(sts *appsv1.StatefulSet, templateHash string, primary int, insts []instance) int32 {
	if sts == nil {
		return 0
	}
	if sts.Status.ObservedGeneration < sts.Generation {
		if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			return *ru.Partition
		}
		return 0
	}
	if rollingUpdatePending(sts, templateHash, insts[primary]) {
		return int32(primary + 1)
	}
	return 0
}

// standbyNames are the instances other than the primary, below spec.instances.
func (t *topology) standbyNames(d *database) []string {
	var names []string
	for _, i := range t.instances {
		if i.name != t.record.primary && i.ordinal < int(d.ha.instances) {
			names = append(names, i.name)
		}
	}
	return names
}

// resync is how soon the topology wants to be looked at again (a failover
// delay running out); 0 for no topology or no wish.
func (t *topology) resync() float64 {
	if t == nil {
		return 0
	}
	return t.resyncAfterSeconds
}

// backupHost is the server the backup CronJob dumps: a standby (Service
// <name>-ro) while one is ready and says it is a standby, else the primary
// (Service <name>).
func (t *topology) backupHost(d *database) string {
	if t == nil {
		return d.host()
	}
	for _, i := range t.instances {
		if i.name != t.record.primary && i.ordinal < int(d.ha.instances) && i.ready && i.report != nil && i.report.role == roleStandby {
			return d.readOnlyServiceName() + "." + d.namespace + ".svc"
		}
	}
	return d.host()
}

// primary is the instance the record names as primary.
func (t *topology) primary(d *database) instance {
	return t.instances[d.ordinalOf(t.record.primary)]
}

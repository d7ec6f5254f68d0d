package database

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

// Times of the HA fixtures: pods became ready at podsReady; a primary that
// is lost stopped being ready at lostAt (45 s before testNow, past the
// default 30 s delay); reports are written every few seconds.
var (
	podsReady = time.Date(2026, 11, 30, 4, 11, 0, 0, time.UTC)
	lostAt    = testNow.Add(-45 * time.Second)
	reportAt  = testNow.Add(-3 * time.Second)
)

func withInstances(n int32) func(*dbv1.Database) {
	return func(db *dbv1.Database) { db.Spec.Instances = ptr.To(n) }
}

func withPrimary(name string) func(*dbv1.Database) {
	return func(db *dbv1.Database) { db.Spec.Primary = name }
}

func withAsync() func(*dbv1.Database) {
	return func(db *dbv1.Database) {
		db.Spec.Replication = &dbv1.DatabaseReplication{Synchronous: ptr.To(false)}
	}
}

// podState is one observed instance pod of an HA fixture.
type podState struct {
	missing   bool
	notReady  time.Time // the pod is not ready since then; zero: ready since podsReady
	revision  string    // "" for the StatefulSet's update revision
	role      string    // "" for no report
	timeline  int64
	lsn       string
	receiving bool
	epoch     uint64    // the record's epoch it has acted on
	at        time.Time // zero: reportAt
}

func primaryPod(lsn string) podState {
	return podState{role: rolePrimary, timeline: 1, lsn: lsn}
}

func streaming(lsn string) podState {
	return podState{role: roleStandby, timeline: 1, lsn: lsn, receiving: true}
}

// final is a standby that has acted on the fence of fencedAt (epoch 1): its
// receiver stopped and its startup process replayed all it holds.
func final(lsn string) podState {
	return podState{role: roleStandby, timeline: 1, lsn: lsn, epoch: 1}
}

// notReceiving is a standby not streaming that has not seen a fence.
func notReceiving(lsn string) podState {
	return podState{role: roleStandby, timeline: 1, lsn: lsn}
}

func (p podState) lost() podState { return p.down(lostAt) }

func (p podState) down(at time.Time) podState {
	p.notReady = at
	return p
}
func (p podState) onRevision(r string) podState {
	p.revision = r
	return p
}

// instancePod is pod <name>-<ordinal> of sts as the StatefulSet controller
// and the kubelet made it, with the instance's report.
func instancePod(parent *dbv1.Database, sts *appsv1.StatefulSet, ordinal int, s podState) *corev1.Pod {
	name := parent.Name + "-" + strconv.Itoa(ordinal)
	revision := s.revision
	if revision == "" {
		revision = sts.Status.UpdateRevision
	}
	labels := map[string]string{}
	for k, v := range sts.Spec.Template.Labels {
		labels[k] = v
	}
	labels[appsv1.StatefulSetPodNameLabel] = name
	labels[appsv1.ControllerRevisionHashLabelKey] = revision
	annotations := map[string]string{}
	if s.role != "" {
		labels[roleLabel] = s.role
		at := s.at
		if at.IsZero() {
			at = reportAt
		}
		annotations[timelineAnnotation] = strconv.FormatInt(s.timeline, 10)
		annotations[lsnAnnotation] = s.lsn
		annotations[receivingAnnotation] = strconv.FormatBool(s.receiving)
		annotations[epochAnnotation] = strconv.FormatUint(s.epoch, 10)
		annotations[reportedAnnotation] = at.UTC().Format(time.RFC3339)
	}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(podsReady)}
	if !s.notReady.IsZero() {
		ready = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(s.notReady)}
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: parent.Namespace, Labels: labels, Annotations: annotations,
			UID:             types.UID("feed0000-0000-4000-8000-" + fmtHex(name)),
			ResourceVersion: "400",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true)}},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: containerName, Image: parent.Spec.Image}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{ready}},
	}
}

// haRecord is an observed topology ConfigMap.
type haRecord struct {
	primary, switchoverTo, switchoverReason string
	from, reason                            string
	at                                      time.Time
	epoch                                   uint64
	fenced                                  bool
	unavailable                             time.Time // when the hook first saw the primary not Ready
}

// seenLost is the record once the hook has seen orders-0 not Ready at
// lostAt; fencedAt once it fenced it, past the delay, under epoch 1.
var (
	seenLost = &haRecord{primary: "orders-0", unavailable: lostAt}
	fencedAt = &haRecord{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt}
)

// haRequest builds the request for parent with instances >= 2: the children
// of a running Database made for observedAs (the StatefulSet settled with its
// replicas, on revision rev-1 unless pods say otherwise), the topology
// record, and the pods in the given states.
func haRequest(t *testing.T, parent, observedAs *dbv1.Database, rec *haRecord, pods []podState, extra ...runtime.Object) *composite.Request {
	t.Helper()
	children := observedChildren(t, observedAs, 1, extra...)
	var sts *appsv1.StatefulSet
	for _, c := range children {
		if s, ok := c.(*appsv1.StatefulSet); ok {
			sts = s
		}
	}
	if rec != nil {
		d := &database{name: parent.Name, namespace: parent.Namespace}
		cm := &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: d.topologyName(), Namespace: parent.Namespace, Labels: d.objectLabels()},
			Data:       map[string]string{topologyPrimaryKey: rec.primary, topologyEpochKey: strconv.FormatUint(rec.epoch, 10)},
		}
		if rec.fenced {
			cm.Data[topologyFencedKey] = "true"
		}
		if !rec.unavailable.IsZero() {
			cm.Data[topologyUnavailableKey] = rec.unavailable.UTC().Format(time.RFC3339)
		}
		created(cm, parent, 0)
		if rec.switchoverTo != "" {
			cm.Data[topologySwitchoverKey] = rec.switchoverTo
			cm.Data[topologySwitchoverReasonKey] = rec.switchoverReason
		}
		if rec.from != "" {
			cm.Data[topologyPreviousKey] = rec.from
			cm.Data[topologyReasonKey] = rec.reason
			cm.Data[topologyChangedKey] = rec.at.UTC().Format(time.RFC3339)
		}
		children = append(children, cm)
	}
	for ordinal, s := range pods {
		if !s.missing {
			children = append(children, instancePod(parent, sts, ordinal, s))
		}
	}
	return newRequest(t, parent, false, children...)
}

// decision runs the decision on req the way sync does, and returns it.
func decision(t *testing.T, req *composite.Request, now time.Time) *topology {
	t.Helper()
	d, o := parsed(t, req)
	top, err := planInstances(req, d, o, false, testAgentImage, now)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func TestDecideTopology(t *testing.T) {
	three := newDatabase(withInstances(3))
	two := newDatabase(withInstances(2))
	async := newDatabase(withInstances(3), withAsync())
	imageChanged := newDatabase(withInstances(3), withGeneration(2), func(db *dbv1.Database) { db.Spec.Image = "postgres:17.2" })
	failedOver := &haRecord{primary: "orders-1", from: "orders-0", reason: changeFailover, at: lostAt.Add(40 * time.Second), epoch: 2}

	type want struct {
		primary      string
		switchoverTo string
		reason       string // of the last change; "" for none
		epoch        uint64
		fenced       bool
		unavailable  time.Time // the record's unavailableSince
		failover     failoverState
		why          string // a substring of failoverWhy or switchoverWaiting
		partition    int32
		resync       float64
	}
	cases := map[string]struct {
		reason string
		req    func(t *testing.T) *composite.Request
		want   want
	}{
		"PrimaryReady": {
			reason: "everything streams: nothing moves",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, nil, []podState{primaryPod("0/5000100"), streaming("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0"},
		},
		"FirstSeenNotReady": {
			reason: "the hook sees the primary not Ready for the first time: the delay counts from now, on the hook's clock, not from the kubelet's Ready time (45 s ago)",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, nil, []podState{primaryPod("0/5000100").lost(), streaming("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0", unavailable: testNow, failover: failoverPending, resync: 30},
		},
		"NotReadyWithinDelay": {
			reason: "the record says the hook first saw it 10 s ago, of 30: wait, and ask to be called when the delay is over",
			req: func(t *testing.T) *composite.Request {
				rec := &haRecord{primary: "orders-0", unavailable: testNow.Add(-10 * time.Second)}
				return haRequest(t, three, three, rec, []podState{primaryPod("0/5000100").lost(), notReceiving("0/5000100"), notReceiving("0/5000100")})
			},
			want: want{primary: "orders-0", unavailable: testNow.Add(-10 * time.Second), failover: failoverPending, resync: 20},
		},
		"UnavailableSinceInTheFuture": {
			reason: "a replica whose clock is ahead wrote the time: this one waits the whole delay from it, never less",
			req: func(t *testing.T) *composite.Request {
				rec := &haRecord{primary: "orders-0", unavailable: testNow.Add(15 * time.Second)}
				return haRequest(t, three, three, rec, []podState{primaryPod("0/5000100").lost(), notReceiving("0/5000100"), notReceiving("0/5000100")})
			},
			want: want{primary: "orders-0", unavailable: testNow.Add(15 * time.Second), failover: failoverPending, resync: 30},
		},
		"PrimaryBack": {
			reason: "the primary is Ready again before the delay ran out: the record forgets when it was lost",
			req: func(t *testing.T) *composite.Request {
				rec := &haRecord{primary: "orders-0", unavailable: testNow.Add(-10 * time.Second)}
				return haRequest(t, three, three, rec, []podState{primaryPod("0/5000100"), streaming("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0"},
		},
		"Fences": {
			reason: "past the delay: the record is fenced under epoch 1, nobody is promoted in the same answer (no standby has acted on it)",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, seenLost, []podState{primaryPod("0/5000100").lost(), streaming("0/5000100"), notReceiving("0/5000100")})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, why: "fenced at epoch 1", resync: failoverBlockedResyncSeconds},
		},
		"FenceEndsSwitchover": {
			reason: "a switchover stalled past the delay (its shutdown fell back to an immediate stop, no clean report): the fence replaces it and the failover rules apply",
			req: func(t *testing.T) *composite.Request {
				db := newDatabase(withInstances(3), withPrimary("orders-2"))
				rec := &haRecord{primary: "orders-0", switchoverTo: "orders-2", switchoverReason: changeSwitchover, unavailable: lostAt}
				return haRequest(t, db, db, rec, []podState{{missing: true}, streaming("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, resync: failoverBlockedResyncSeconds},
		},
		"NotFencedWithoutReadyStandby": {
			reason: "past the delay but no standby is Ready: a fence would only keep the primary from coming back, so it is not raised, and the time is forgotten (the delay counts once a standby is Ready)",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, seenLost, []podState{primaryPod("0/5000100").lost(), notReceiving("0/5000100").lost(), {missing: true}})
			},
			want: want{primary: "orders-0", failover: failoverBlocked, why: "no standby is ready", resync: failoverBlockedResyncSeconds},
		},
		"TwoStandbys": {
			reason: "fenced, both standbys report epoch 1: the one furthest along is promoted under epoch 2",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/50000F0"), final("0/5000100")})
			},
			want: want{primary: "orders-2", reason: changeFailover, epoch: 2, failover: failoverDecided, why: "orders-2 promoted"},
		},
		"UnderReportedStandby": {
			reason: "issue 27 #3: orders-2 holds 400 rows (replayed to 0/4031B48, received only from its segment's start after a restart) and orders-1 100: the report is the larger position, so orders-2 wins, not the lowest ordinal",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/4031B48").lost(), final("0/4000000"), final("0/4031B48")})
			},
			want: want{primary: "orders-2", reason: changeFailover, epoch: 2, failover: failoverDecided},
		},
		"TwoStandbysTie": {
			reason: "both as far: the lowest ordinal",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/5000100"), final("0/5000100")})
			},
			want: want{primary: "orders-1", reason: changeFailover, epoch: 2, failover: failoverDecided},
		},
		"OneStandby": {
			reason: "instances 2: the one standby, final, is promoted",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, two, two, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/5000100")})
			},
			want: want{primary: "orders-1", reason: changeFailover, epoch: 2, failover: failoverDecided},
		},
		"PrimaryBackWhileFenced": {
			reason: "the old primary's pod is Ready again (it has not read the fence yet): a fence is never undone, the promotion goes on",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100"), final("0/5000100"), final("0/5000100")})
			},
			want: want{primary: "orders-1", reason: changeFailover, epoch: 2, failover: failoverDecided},
		},
		"StandbyHasNotActedOnFence": {
			reason: "issue 27 #1: orders-2 has not read the fence (its kubelet refreshes the record later) and may still stream from the old primary: nobody is promoted",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, why: "orders-2 has not reported epoch 1", resync: failoverBlockedResyncSeconds},
		},
		"ReportsFromBeforeTheFence": {
			reason: "not receiving, but written before the standbys saw the fence: the epoch, not a clock, says they are not final",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100").lost(), notReceiving("0/5000100"), notReceiving("0/5000100")})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, why: "has not reported epoch 1", resync: failoverBlockedResyncSeconds},
		},
		"OneOfTwoStandbysSynchronous": {
			reason: "synchronous, orders-2's pod is gone: it may hold the only copy of a commit, so nobody is promoted",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/5000100"), {missing: true}})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, why: "orders-2 has not reported", resync: failoverBlockedResyncSeconds},
		},
		"OneOfTwoStandbysAsynchronous": {
			reason: "asynchronous, orders-2's pod is gone (it cannot stream): the ready final standby is promoted (commits it lacks are the documented risk)",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, async, async, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/5000100"), {missing: true}})
			},
			want: want{primary: "orders-1", reason: changeFailover, epoch: 2, failover: failoverDecided},
		},
		"AsynchronousWhileAStandbyStreams": {
			reason: "issue 27 #2: asynchronous, orders-1 still streams at 0/5000100 from the running primary and orders-2 is cut off at 0/50000F0: nobody is promoted (before, orders-2, the least advanced, was)",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, async, async, fencedAt, []podState{primaryPod("0/5000100").lost(), streaming("0/5000100"), final("0/50000F0")})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, why: "orders-1 has not reported epoch 1", resync: failoverBlockedResyncSeconds},
		},
		"AsynchronousDownStandbyStillStreaming": {
			reason: "asynchronous, orders-1's pod is not Ready but its last report streams: it may still receive, so it is waited for",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, async, async, fencedAt, []podState{primaryPod("0/5000100").lost(), streaming("0/5000100").lost(), final("0/5000100")})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, why: "orders-1 has not reported epoch 1", resync: failoverBlockedResyncSeconds},
		},
		"NoReadyStandby": {
			reason: "fenced, both standbys final but not ready: no promotion, the condition says why",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/5000100").lost(), final("0/5000100").lost()})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, why: "is not ready", resync: failoverBlockedResyncSeconds},
		},
		"FurthestNotReady": {
			reason: "the standby furthest along is not ready: promoting the other would lose commits",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/50000F0"), final("0/5000100").lost()})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, why: "furthest along, orders-2", resync: failoverBlockedResyncSeconds},
		},
		"PrimaryPodGone": {
			reason: "no pod at all (its node is gone), seen 45 s ago by the hook: fenced",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, seenLost, []podState{{missing: true}, streaming("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0", epoch: 1, fenced: true, unavailable: lostAt, failover: failoverFencing, resync: failoverBlockedResyncSeconds},
		},
		"SwitchoverRequest": {
			reason: "spec.primary names a streaming standby: the record asks the primary to shut down cleanly first",
			req: func(t *testing.T) *composite.Request {
				db := newDatabase(withInstances(3), withPrimary("orders-2"))
				return haRequest(t, db, db, nil, []podState{primaryPod("0/5000100"), streaming("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0", switchoverTo: "orders-2"},
		},
		"SwitchoverTargetNotReady": {
			reason: "spec.primary names a standby that is not ready: nothing moves, the condition says why",
			req: func(t *testing.T) *composite.Request {
				db := newDatabase(withInstances(3), withPrimary("orders-2"))
				return haRequest(t, db, db, nil, []podState{primaryPod("0/5000100"), streaming("0/5000100"), streaming("0/5000100").lost()})
			},
			want: want{primary: "orders-0", why: "orders-2 is not ready"},
		},
		"SwitchoverCompletes": {
			reason: "the old primary shut down cleanly at 0/5000128 and the target received it: promoted under the next epoch, no delay",
			req: func(t *testing.T) *composite.Request {
				db := newDatabase(withInstances(3), withPrimary("orders-2"))
				demoted := podState{role: roleDemoted, timeline: 1, lsn: "0/5000128"}
				return haRequest(t, db, db, &haRecord{primary: "orders-0", switchoverTo: "orders-2", switchoverReason: changeSwitchover, unavailable: testNow},
					[]podState{demoted.down(testNow), streaming("0/5000128"), notReceiving("0/5000128")})
			},
			want: want{primary: "orders-2", reason: changeSwitchover, epoch: 1},
		},
		"SwitchoverTargetBehind": {
			reason: "the target has not received the old primary's last record yet: wait",
			req: func(t *testing.T) *composite.Request {
				db := newDatabase(withInstances(3), withPrimary("orders-2"))
				demoted := podState{role: roleDemoted, timeline: 1, lsn: "0/5000128"}
				return haRequest(t, db, db, &haRecord{primary: "orders-0", switchoverTo: "orders-2", switchoverReason: changeSwitchover},
					[]podState{demoted, streaming("0/5000128"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0", switchoverTo: "orders-2"},
		},
		"SwitchoverWhileFailoverDue": {
			reason: "spec.primary names orders-2 while the primary is fenced: failover rules apply, and of the standbys as far as any, spec.primary wins",
			req: func(t *testing.T) *composite.Request {
				db := newDatabase(withInstances(3), withPrimary("orders-2"))
				return haRequest(t, db, db, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/5000100"), final("0/5000100")})
			},
			want: want{primary: "orders-2", reason: changeFailover, epoch: 2, failover: failoverDecided},
		},
		"SwitchoverToLaggingTargetWhileFailoverDue": {
			reason: "spec.primary's standby is behind the other: the other is promoted, nothing acknowledged is lost",
			req: func(t *testing.T) *composite.Request {
				db := newDatabase(withInstances(3), withPrimary("orders-2"))
				return haRequest(t, db, db, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/5000100"), final("0/50000F0")})
			},
			want: want{primary: "orders-1", reason: changeFailover, epoch: 2, failover: failoverDecided},
		},
		"RollingUpdateStarts": {
			reason: "a new image: only the pods above the primary may roll (partition 1); the primary stays",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, imageChanged, three, nil, []podState{primaryPod("0/5000100"), streaming("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0", partition: 1},
		},
		"RollingUpdateStandbysDone": {
			reason: "both standbys run the update revision and are ready: switch over to one of them, keep the primary's pod out of the roll",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, nil, []podState{primaryPod("0/5000100").onRevision("orders-old"), streaming("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-0", switchoverTo: "orders-1", partition: 1},
		},
		"RollingUpdateStandbyNotDone": {
			reason: "orders-2 still runs the old revision: no switchover yet",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, nil, []podState{primaryPod("0/5000100").onRevision("orders-old"), streaming("0/5000100"), streaming("0/5000100").onRevision("orders-old")})
			},
			want: want{primary: "orders-0", partition: 1},
		},
		"RollingUpdatePrimaryMoved": {
			reason: "the primary moved to updated orders-1: partition 0 lets the old primary's pod roll too",
			req: func(t *testing.T) *composite.Request {
				return haRequest(t, three, three, &haRecord{primary: "orders-1", from: "orders-0", reason: changeRollingUpdate, at: lostAt, epoch: 1},
					[]podState{streaming("0/5000100").onRevision("orders-old"), primaryPod("0/5000100"), streaming("0/5000100")})
			},
			want: want{primary: "orders-1", reason: changeRollingUpdate, epoch: 1},
		},
		"OldPrimaryBack": {
			reason: "after a failover to orders-1 the old primary's pod is ready again, still on timeline 1: the record does not move",
			req: func(t *testing.T) *composite.Request {
				newPrimary := podState{role: rolePrimary, timeline: 2, lsn: "0/6000000", epoch: 2}
				return haRequest(t, three, three, failedOver, []podState{primaryPod("0/5000100"), newPrimary, streaming("0/6000000")})
			},
			want: want{primary: "orders-1", reason: changeFailover, epoch: 2},
		},
		"Hibernating": {
			reason: "hibernating: no pod is expected to be ready, nothing is failed over",
			req: func(t *testing.T) *composite.Request {
				db := newDatabase(withInstances(3), withHibernate())
				return haRequest(t, db, three, nil, []podState{{missing: true}, {missing: true}, {missing: true}})
			},
			want: want{primary: "orders-0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := tc.req(t)
			top := decision(t, req, testNow)
			got := want{
				primary: top.record.primary, switchoverTo: top.record.switchoverTo,
				epoch: top.record.epoch, fenced: top.record.fenced, unavailable: top.record.unavailableSince,
				failover: top.failover, partition: top.partition, resync: top.resyncAfterSeconds,
			}
			if c := top.record.change; c != nil {
				got.reason = c.reason
			}
			why := top.failoverWhy + top.switchoverWaiting
			if tc.want.why != "" && !strings.Contains(why, tc.want.why) {
				t.Errorf("%s\nwhy = %q, want it to contain %q", tc.reason, why, tc.want.why)
			}
			got.why = tc.want.why
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\ndecideTopology: -want +got:\n%s", tc.reason, diff)
			}
			// Issue 27 #4: two hook replicas whose clocks are 15 s apart,
			// answering this same request, never name two different
			// primaries (time decides when to fence, never whom to promote).
			was := observedPrimary(t, req)
			for _, skew := range []time.Duration{-15 * time.Second, 15 * time.Second} {
				other := decision(t, req, testNow.Add(skew))
				if a, b := other.record.primary, top.record.primary; a != was && b != was && a != b {
					t.Errorf("%s\nat now%+v the answer promotes %s, at now %s", tc.reason, skew, a, b)
				}
			}
		})
	}
}

// observedPrimary is the primary of the observed record (orders-0 without).
func observedPrimary(t *testing.T, req *composite.Request) string {
	t.Helper()
	d, o := parsed(t, req)
	rec, err := observeRecord(d, o.topology)
	if err != nil {
		t.Fatal(err)
	}
	return rec.primary
}

func TestSkewedReplicasNeverNameTwoPrimaries(t *testing.T) {
	// A fenced record with final reports: every replica, whatever its
	// clock, promotes the same standby; before the fence none promotes.
	three := newDatabase(withInstances(3))
	fenced := haRequest(t, three, three, fencedAt, []podState{primaryPod("0/5000100").lost(), final("0/50000F0"), final("0/5000100")})
	lost := haRequest(t, three, three, seenLost, []podState{primaryPod("0/5000100").lost(), final("0/50000F0"), final("0/5000100")})
	for _, skew := range []time.Duration{-60 * time.Second, -15 * time.Second, 0, 15 * time.Second, 60 * time.Second, time.Hour} {
		if got := decision(t, fenced, testNow.Add(skew)).record.primary; got != "orders-2" {
			t.Errorf("fenced, now%+v: promoted %s, want orders-2 at every clock", skew, got)
		}
		if got := decision(t, lost, testNow.Add(skew)); got.record.primary != "orders-0" || got.record.change != nil {
			t.Errorf("not fenced yet, now%+v: the record names %s (change %v), want orders-0 unchanged: only a fence answer comes first", skew, got.record.primary, got.record.change)
		}
	}
}

func TestSingleInstanceHasNoTopology(t *testing.T) {
	for name, db := range map[string]*dbv1.Database{
		"Default":    newDatabase(),
		"Explicit1":  newDatabase(withInstances(1)),
		"WithFields": newDatabase(withInstances(1), withAsync(), func(db *dbv1.Database) { db.Spec.FailoverDelaySeconds = ptr.To[int32](60) }),
	} {
		t.Run(name, func(t *testing.T) {
			if top := decision(t, newRequest(t, db, false, observedChildren(t, newDatabase(), 1)...), testNow); top != nil {
				t.Errorf("instances 1 must have no topology, got %+v", top)
			}
			want := mustSync(t, newRequest(t, newDatabase(), false, observedChildren(t, newDatabase(), 1)...))
			got := mustSync(t, newRequest(t, db, false, observedChildren(t, newDatabase(), 1)...))
			if diff := cmp.Diff(indent(t, want), indent(t, got)); diff != "" {
				t.Errorf("instances 1 must answer exactly as without the field: -without +with:\n%s", diff)
			}
		})
	}
}

func TestObserveRecordRefusesNonsense(t *testing.T) {
	d := &database{name: testName, namespace: testNamespace}
	for name, data := range map[string]map[string]string{
		"NoPrimary":         {},
		"OtherDatabase":     {topologyPrimaryKey: "invoices-0"},
		"OrdinalTooHigh":    {topologyPrimaryKey: "orders-9"},
		"SwitchoverToSelf":  {topologyPrimaryKey: "orders-1", topologySwitchoverKey: "orders-1"},
		"ChangeWithoutTime": {topologyPrimaryKey: "orders-1", topologyPreviousKey: "orders-0"},
		"NegativeEpoch":     {topologyPrimaryKey: "orders-1", topologyEpochKey: "-1"},
		"HugeEpoch":         {topologyPrimaryKey: "orders-1", topologyEpochKey: "9007199254740993"},
		"FencedMaybe":       {topologyPrimaryKey: "orders-1", topologyFencedKey: "yes"},
		"FencedSwitchover":  {topologyPrimaryKey: "orders-1", topologyFencedKey: "true", topologySwitchoverKey: "orders-2"},
		"UnavailableNotAt":  {topologyPrimaryKey: "orders-1", topologyUnavailableKey: "a while ago"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := observeRecord(d, &corev1.ConfigMap{Data: data})
			var requestErr *composite.RequestError
			if !errors.As(err, &requestErr) || !strings.Contains(requestErr.Field, "orders-topology") {
				t.Errorf("a record the hook did not write must be a 400 naming the ConfigMap, got %T %v", err, err)
			}
		})
	}
}

// TestRecordNamesTheMembers: the record's instances is how many ordinals
// run, the members whose replication slots the primary keeps: the spec's
// instances, or more while the primary sits above them (scaling down never
// removes it); max_slot_wal_keep_size is a quarter of the size's storage.
func TestRecordNamesTheMembers(t *testing.T) {
	for _, c := range []struct {
		name      string
		instances int32
		primary   string
		want      string
	}{
		{"AllRun", 3, "orders-0", "3"},
		{"ScaledDown", 2, "orders-0", "2"},
		{"PrimaryAboveTheSpec", 2, "orders-2", "3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := newDatabase(withInstances(c.instances))
			resp, err := mustHook(t)(haRequest(t, parent, parent, &haRecord{primary: c.primary}, make([]podState, 3)), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			d := mustParse(t, parent)
			cm := responseChild[corev1.ConfigMap](t, resp, "ConfigMap", d.topologyName())
			if cm == nil {
				t.Fatal("no topology ConfigMap")
			}
			if got := cm.Data[topologyInstancesKey]; got != c.want {
				t.Errorf("the record's %s is %q, want %q (record %v)", topologyInstancesKey, got, c.want, cm.Data)
			}
		})
	}
	for size, want := range map[dbv1.DatabaseSize]string{dbv1.SizeSmall: "1280MB", dbv1.SizeMedium: "5120MB", dbv1.SizeLarge: "25600MB"} {
		if got := slotWALKeepSize(presets[size]); got != want {
			t.Errorf("max_slot_wal_keep_size of %s: %s, want %s", size, got, want)
		}
	}
}

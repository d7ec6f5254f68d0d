package database

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
)

// The failover under faults, on the real-PostgreSQL harness of
// failover_postgres_test.go: three instances from the rendered pods,
// synchronous, failoverDelaySeconds 5, a writer committing unique ids through
// the read-write Service (the record's primary) and, where a fault leaves an
// old primary running, a client that kept its connection to it. After each
// scenario every acknowledged id is on the final primary, and the old
// primary acknowledged nothing once it was fenced (two instances never
// accepted writes at once). Each scenario prints the ids acknowledged and
// found and the times to the fence and the promotion.
func TestFailoverFaultsOnPostgreSQL(t *testing.T) {
	for _, sc := range []struct {
		name, reason string
		run          func(t *testing.T, k *cluster) faultResult
	}{
		{"FrozenPrimaryBackAfterPromotion", "issue 27 #1: the primary frozen (SIGSTOP: alive, unreachable, its kubelet cannot refresh its record); " +
			"the new record reaches the promoted pod first, the old primary thaws still reading the old record, the other standby gets the new one later", frozenBackAfterPromotion},
		{"FrozenPrimaryBackWhileFenced", "the frozen primary thaws after the fence reached the standbys and before the promotion, still reading the old record; " +
			"then the fence reaches it", frozenBackWhileFenced},
		{"RestartedStandbyUnderReports", "issue 27 #3: orders-1 falls behind (killed) while orders-2 takes every commit, the primary dies, orders-2 restarts " +
			"(its received position starts over at its segment's beginning): the failover must still pick orders-2", restartedStandbyUnderReports},
		{"ChosenStandbyKilledBeforePromotion", "a second failure during a failover: the primary killed, the standby the hook picks killed before the promotion reaches it; " +
			"no other standby may be promoted while an instance that may hold acknowledged commits is silent, and once both come back a promotion must keep every id", chosenStandbyKilledBeforePromotion},
		{"StandbyKilledActingOnTheFence", "a second failure during the fence: the primary killed, the fence delivered to orders-1 and orders-1 killed while it acts on it " +
			"(stopping its WAL receiver, reporting its final position); whatever it managed to report, the promotion must keep every id, and none may happen on a guess", standbyKilledActingOnTheFence},
		{"ClocksOffByAMinute", "the primary's kubelet and agent a minute behind the hook, the standbys' a minute ahead and behind: the primary killed; " +
			"the fence must wait failoverDelaySeconds of the hook's own clock (a Ready lastTransitionTime a minute old must not cut it short)", clocksOffByAMinute},
		{"SwitchoverShutdownTimesOut", "a switchover whose shutdown exceeds its timeout: the primary's checkpointer frozen, spec.primary set to orders-1; " +
			"the fast shutdown times out and falls back to an immediate stop, which reports no clean position: the failover rules take over " +
			"and promote a standby that holds every id", switchoverShutdownTimesOut},
		{"NewPrimaryKilledAfterTakingWrites", "a second failure after a failover: the primary killed, a standby promoted, the old primary rejoins it (pg_rewind), the new primary " +
			"takes writes acknowledged by either standby, then it is killed too: the second promotion must pick the standby that holds them all", newPrimaryKilledAfterTakingWrites},
		{"StandbyBehindWALKeepSize", "replication slots: orders-2 stopped while the primary writes and checkpoints several times wal_keep_size and max_wal_size of WAL; " +
			"restarted, it must catch up from its slot (no clone) with every acknowledged id", standbyBehindWALKeepSize},
		{"StandbyPastTheSlotBound", "replication slots: orders-2 stopped while the primary writes more than max_slot_wal_keep_size of WAL; " +
			"its slot is invalidated and the primary's WAL stays bounded; restarted, orders-2 cannot stream, and its volume emptied (a rebuild) it is cloned again " +
			"with every acknowledged id", standbyPastTheSlotBound},
		{"PrimaryWithoutSlots", "replication slots during the rolling update that brings them: the primary's agent predates them (it reads no members and makes no slot) " +
			"while orders-2 restarts asking for its slot; orders-2 must stream without it, then through it once the primary makes it", primaryWithoutSlots},
		{"ScaleDownDropsSlot", "replication slots: spec.instances 3 to 2; the slot of orders-2 is kept while it streams and dropped once its pod is gone, " +
			"so it holds no WAL on the primary for an instance that no longer exists", scaleDownDropsSlot},
	} {
		t.Run(sc.name, func(t *testing.T) {
			parent := newDatabase(withInstances(3), func(db *dbv1.Database) { db.Spec.FailoverDelaySeconds = ptr.To[int32](5) })
			k := newCluster(newPGInstances(t, parent, scenarioConf[sc.name]...))
			k.startAll()
			k.waitFor(0, streamingStandbys, "orders-1,orders-2", 2*time.Minute)
			k.app[0].MustQuery(t, "CREATE TABLE acked (id int PRIMARY KEY)")
			// A write probe on every instance, throughout: whatever any
			// instance acknowledges, at any step, must survive. Two
			// instances that both acknowledged writes at once would have
			// diverged, and the loser's acknowledged rows would be missing.
			probes := make([]*writer, len(k.pgInstances.pods))
			for i := range probes {
				probes[i] = k.writeAt(i, (i+2)*10_000_000, false)
				probes[i].pause = 300 * time.Millisecond
			}
			r := sc.run(t, k)
			final := k.d.ordinalOf(k.record.Data[topologyPrimaryKey])
			k.syncUntil("the record's primary promoted", 2*time.Minute, func() bool { return k.is(final, inRecovery, "f") })
			var probed []string
			for i, p := range probes {
				acked := p.end()
				probed = append(probed, fmt.Sprintf("%s %d", k.pgInstances.pods[i].Name, len(acked)))
				r.acked = append(r.acked, acked...)
			}
			// The final primary keeps a slot for every other member of
			// the record (after a failover: the promoted one made them),
			// and no running standby keeps any (a former primary's are
			// dropped once it follows).
			want := wantSlots(k, final)
			k.syncUntil("the final primary keeps a slot for every other member", 2*time.Minute, func() bool { return k.is(final, slotNames, want) })
			for j := range k.pgInstances.pods {
				if j != final && k.is(j, inRecovery, "t") {
					k.syncUntil(k.pgInstances.pods[j].Name+", a standby, keeps no slot", 2*time.Minute, func() bool { return k.is(j, slotNames, "") })
				}
			}
			found := k.rows(final)
			missing := missingRows(r.acked, found)
			after := func(at time.Time) string {
				if at.IsZero() {
					return "—"
				}
				return fmt.Sprintf("%.1f s", at.Sub(r.fault).Seconds())
			}
			t.Logf("%s: %d ids acknowledged, %d rows on the final primary %s, %d acknowledged missing; fenced %s and promoted %s after the fault; "+
				"the old primary's own client: %d acknowledged after the fault; write probes acknowledged: %s; slots on the final primary: %s",
				sc.name, len(r.acked), len(found), k.pgInstances.pods[final].Name, len(missing), after(r.fenced), after(r.promoted), len(r.staleAcked),
				strings.Join(probed, ", "), want)
			if len(missing) > 0 {
				t.Errorf("%s\n%d acknowledged ids missing on %s: %v", sc.reason, len(missing), k.pgInstances.pods[final].Name, missing[:min(len(missing), 10)])
			}
			if len(r.staleAcked) > 0 {
				t.Errorf("%s\nthe old primary acknowledged %d commits after the fault while %s was promoted: two instances accepted writes (ids %v)",
					sc.reason, len(r.staleAcked), k.pgInstances.pods[final].Name, r.staleAcked[:min(len(r.staleAcked), 10)])
			}
			if r.wantPrimary != "" && k.record.Data[topologyPrimaryKey] != r.wantPrimary {
				t.Errorf("%s\nthe record names %s, want %s", sc.reason, k.record.Data[topologyPrimaryKey], r.wantPrimary)
			}
		})
	}
}

// faultResult is what a scenario saw: every id acknowledged (through the
// Service and the old primary's own client), those the old primary's own
// client got acknowledged after the fault, and when the fault, the fence and
// the promotion happened.
type faultResult struct {
	acked, staleAcked       []int
	fault, fenced, promoted time.Time
	wantPrimary             string // the instance that must be promoted; "" for any
}

// failOver calls the hook until the record names a new primary, noting when
// it was fenced and when the promotion was decided.
func (k *cluster) failOver(r *faultResult) int {
	k.t.Helper()
	k.syncUntil("a fence", 2*time.Minute, func() bool {
		if k.record.Data[topologyFencedKey] == "true" && r.fenced.IsZero() {
			r.fenced = time.Now()
		}
		return !r.fenced.IsZero() || k.record.Data[topologyPrimaryKey] != "orders-0"
	})
	k.syncUntil("a promotion decided", 2*time.Minute, func() bool { return k.record.Data[topologyPrimaryKey] != "orders-0" })
	r.promoted = time.Now()
	if reason := k.record.Data[topologyReasonKey]; reason != changeFailover {
		k.t.Fatalf("record reason %q, want %s", reason, changeFailover)
	}
	return k.d.ordinalOf(k.record.Data[topologyPrimaryKey])
}

func frozenBackAfterPromotion(t *testing.T, k *cluster) faultResult {
	w := k.write(1, false)
	w.waitCount(50, "before the freeze")
	r := faultResult{fault: time.Now()}
	k.servers[0].Freeze()
	k.holdFrom[0] = 1 // its kubelet is cut off with it: it never sees the fence
	k.holdFrom[1], k.holdFrom[2] = 2, 2
	stale := k.writeAt(0, 1_000_001, false)
	target := k.failOver(&r)
	other := 3 - target
	// The promotion reaches the promoted pod first; the old primary comes
	// back still reading epoch 0 (it names itself the primary); the other
	// standby still reads the fence.
	k.deliver(target)
	k.syncUntil("the named standby promoted", 2*time.Minute, func() bool { return k.is(target, inRecovery, "f") })
	thawed := time.Now()
	k.servers[0].Thaw()
	for time.Since(thawed) < 5*time.Second { // the old primary runs, its client writes
		k.sync()
		time.Sleep(200 * time.Millisecond)
	}
	k.deliver(other)
	k.deliver(0)
	k.syncUntil("the old primary stopped", 2*time.Minute, func() bool { return !k.is(0, inRecovery, "f") })
	r.staleAcked = stale.end()
	w.waitCount(w.count()+20, "after the failover")
	r.acked = append(w.end(), r.staleAcked...)
	return r
}

func frozenBackWhileFenced(t *testing.T, k *cluster) faultResult {
	w := k.write(1, false)
	w.waitCount(50, "before the freeze")
	r := faultResult{fault: time.Now()}
	k.servers[0].Freeze()
	k.holdFrom[0] = 1
	k.holdFrom[1], k.holdFrom[2] = 2, 2
	stale := k.writeAt(0, 1_000_001, false)
	k.syncUntil("a fence", 2*time.Minute, func() bool { return k.record.Data[topologyFencedKey] == "true" })
	r.fenced = time.Now()
	fence := k.record.DeepCopy()
	// Thaw as soon as both standbys have acted on the fence, before any
	// promotion reaches anyone: the old primary reads epoch 0 still.
	k.syncUntil("both standbys final", 2*time.Minute, func() bool {
		s := k.states()
		return s[1].epoch == 1 && s[2].epoch == 1
	})
	k.servers[0].Thaw()
	time.Sleep(3 * time.Second)                  // its client writes; no standby streams from it
	k.pgInstances.pods[0].UpdateConfigMap(fence) // the fence reaches it: it stops itself
	k.syncUntil("the fenced primary stopped", 2*time.Minute, func() bool {
		return strings.Contains(k.serverLog(0), "the record fences orders-0") && !k.is(0, inRecovery, "f")
	})
	target := k.failOver(&r)
	k.deliver(target)
	k.deliver(3 - target)
	r.staleAcked = stale.end()
	w.waitCount(w.count()+20, "after the failover")
	r.acked = append(w.end(), r.staleAcked...)
	return r
}

func restartedStandbyUnderReports(t *testing.T, k *cluster) faultResult {
	w := k.write(1, false)
	w.waitCount(100, "before orders-1 falls behind")
	k.killServer(1) // a kill, not a freeze: a frozen receiver's socket buffers would hold what it missed
	w.waitCount(w.count()+300, "with orders-1 down")
	r := faultResult{fault: time.Now(), wantPrimary: "orders-2"}
	k.servers[0].Kill()
	acked := w.end()
	// orders-2 restarts, and orders-1 starts again, while the primary is
	// gone: each WAL receiver starts over at the beginning of its segment
	// and cannot connect, so both received positions read the same.
	k.killServer(2)
	k.startServer(2)
	k.startServer(1)
	k.waitFor(2, "SELECT pg_last_wal_receive_lsn() IS NULL OR pg_last_wal_receive_lsn() < pg_last_wal_replay_lsn()", "t", 2*time.Minute)
	t.Logf("orders-2 after its restart: received %s, replayed %s; orders-1 replayed %s",
		k.su[2].MustQuery(t, "SELECT coalesce(pg_last_wal_receive_lsn()::text, 'none')"), k.su[2].MustQuery(t, "SELECT pg_last_wal_replay_lsn()"),
		k.su[1].MustQuery(t, "SELECT pg_last_wal_replay_lsn()"))
	target := k.failOver(&r)
	k.deliver(target)
	k.deliver(3 - target)
	r.acked = acked
	return r
}

func chosenStandbyKilledBeforePromotion(t *testing.T, k *cluster) faultResult {
	w := k.write(1, false)
	w.waitCount(100, "before the kill")
	r := faultResult{fault: time.Now()}
	k.holdFrom[1], k.holdFrom[2] = 2, 2 // the promotion reaches no one until deliver
	k.killServer(0)
	r.acked = w.end()
	target := k.failOver(&r)
	chosen := k.pgInstances.pods[target].Name
	k.killServer(target)
	k.deliver(target)
	k.deliver(3 - target)
	k.syncUntil("a second fence", 2*time.Minute, func() bool { return k.epoch() >= 3 })
	t.Logf("the second fence: record %v", k.record.Data)
	// orders-0 and the chosen one are down: the other standby may not hold
	// every acknowledged commit, so nothing is promoted for as long as they
	// stay down (watched for 10 s of syncs).
	for watch := time.Now(); time.Since(watch) < 10*time.Second; time.Sleep(200 * time.Millisecond) {
		k.sync()
		if p := k.record.Data[topologyPrimaryKey]; p != chosen {
			t.Fatalf("with orders-0 and %s down, the record names %s (epoch %d): promoted without every standby's word", chosen, p, k.epoch())
		}
	}
	// orders-0, a former primary under a fenced record, starts as a standby
	// that streams from nobody and reports its final position; the chosen
	// one, the fenced record's primary, stays down (no server) until the
	// record names another.
	k.startServer(0)
	k.pgInstances.servers[target] = k.pgInstances.pods[target].Start(containerName)
	k.syncUntil("a promotion after the second fence", 3*time.Minute, func() bool {
		return k.epoch() >= 4 && k.record.Data[topologyFencedKey] != "true"
	})
	r.promoted = time.Now()
	// orders-0 holds every WAL record any standby received from it.
	r.wantPrimary = k.pgInstances.pods[0].Name
	// Both others rejoin it: the chosen one from its own WAL, orders-2 from
	// its fenced position.
	k.syncUntil("both others streaming from orders-0", 3*time.Minute, func() bool {
		return k.is(0, streamingStandbys, "orders-1,orders-2")
	})
	return r
}

func standbyKilledActingOnTheFence(t *testing.T, k *cluster) faultResult {
	w := k.write(1, false)
	w.waitCount(100, "before the kill")
	r := faultResult{fault: time.Now()}
	k.holdFrom[1] = 1 // orders-1 sees the fence only when it is delivered
	k.killServer(0)
	r.acked = w.end()
	k.syncUntil("a fence", 2*time.Minute, func() bool { return k.record.Data[topologyFencedKey] == "true" })
	r.fenced = time.Now()
	fence := k.epoch()
	k.deliver(1)
	time.Sleep(300 * time.Millisecond) // it acts on the fence
	k.killServer(1)
	before := k.states()[1]
	t.Logf("orders-1 killed acting on the fence; its last report: epoch %d, position %s, receiving %v", before.epoch, before.lsn, before.receiving)
	// Unless orders-1 reported its final position under the fence before
	// it died, it may hold acknowledged commits orders-2 lacks: nothing
	// may be promoted while it is down (watched for 10 s of syncs).
	for watch := time.Now(); time.Since(watch) < 10*time.Second; time.Sleep(200 * time.Millisecond) {
		k.sync()
		if p := k.record.Data[topologyPrimaryKey]; before.epoch < fence && p != "orders-0" {
			t.Fatalf("orders-1 down before it reported under the fence (its report: epoch %d), yet the record names %s", before.epoch, p)
		}
	}
	t.Logf("after 10 s of syncs with orders-1 down: record %v", k.record.Data)
	k.startServer(1) // its kubelet restarts the container
	k.syncUntil("a promotion", 3*time.Minute, func() bool {
		p := k.record.Data[topologyPrimaryKey]
		return p != "orders-0" && k.record.Data[topologyFencedKey] != "true" && k.is(k.d.ordinalOf(p), inRecovery, "f")
	})
	r.promoted = time.Now()
	return r
}

func clocksOffByAMinute(t *testing.T, k *cluster) faultResult {
	k.skew = map[int]time.Duration{0: -time.Minute, 1: time.Minute, 2: -time.Minute}
	w := k.write(1, false)
	w.waitCount(100, "before the kill")
	r := faultResult{fault: time.Now()}
	k.killServer(0)
	r.acked = w.end()
	k.syncUntil("the primary counted unavailable", 2*time.Minute, func() bool { return k.record.Data[topologyUnavailableKey] != "" })
	counted := time.Now()
	target := k.failOver(&r)
	// unavailableSince is whole seconds: the delay may end up to 1 s early.
	delay := time.Duration(*k.parent.Spec.FailoverDelaySeconds) * time.Second
	if waited := r.fenced.Sub(counted); waited < delay-time.Second {
		t.Errorf("fenced %.1f s after the hook counted the primary unavailable, before failoverDelaySeconds (%s): a skewed clock cut the delay short", waited.Seconds(), delay)
	}
	k.syncUntil("the promotion", 2*time.Minute, func() bool { return k.is(target, inRecovery, "f") })
	return r
}

func switchoverShutdownTimesOut(t *testing.T, k *cluster) faultResult {
	w := k.write(1, false)
	w.waitCount(100, "before the switchover")
	// The primary's checkpointer frozen: its fast shutdown cannot write
	// the shutdown checkpoint, so it outlasts STOP_TIMEOUT (50 s) and the
	// stop falls back to an immediate one (whose SIGKILL ends the frozen
	// process), which leaves no clean last position.
	pid, err := strconv.Atoi(k.su[0].MustQuery(t, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"))
	if err != nil {
		t.Fatalf("the checkpointer's pid: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r := faultResult{fault: time.Now()}
	k.parent = k.parent.DeepCopy()
	k.parent.Spec.Primary = "orders-1"
	// The shutdown outlasts failoverDelaySeconds: the primary, no longer
	// Ready, is failed over while it still shuts down (it takes no
	// connection meanwhile, the write probes show).
	k.syncUntil("a promotion", 3*time.Minute, func() bool {
		if k.record.Data[topologyFencedKey] == "true" && r.fenced.IsZero() {
			r.fenced = time.Now()
		}
		p := k.record.Data[topologyPrimaryKey]
		return p != "orders-0" && k.record.Data[topologyFencedKey] != "true" && k.is(k.d.ordinalOf(p), inRecovery, "f")
	})
	r.promoted = time.Now()
	if reason := k.record.Data[topologyReasonKey]; reason != changeFailover {
		t.Errorf("the record's reason is %s, want %s: without a clean last position only the failover rules may promote", reason, changeFailover)
	}
	// Then the fast shutdown times out, the immediate stop kills the
	// frozen checkpointer, and orders-0 rejoins the new primary.
	k.syncUntil("orders-0's stop fell back to an immediate one", 3*time.Minute, func() bool {
		return strings.Contains(k.serverLog(0), "issuing SIGKILL to recalcitrant children")
	})
	stopped := time.Now()
	k.syncUntil("orders-0 rejoined", 3*time.Minute, func() bool {
		target := k.d.ordinalOf(k.record.Data[topologyPrimaryKey])
		return k.is(target, streamingStandbys, strings.Join(otherNames(k, target), ","))
	})
	t.Logf("%s promoted (reason %s) %.1f s after spec.primary was set; orders-0's immediate stop %.1f s after it",
		k.record.Data[topologyPrimaryKey], k.record.Data[topologyReasonKey], r.promoted.Sub(r.fault).Seconds(), stopped.Sub(r.fault).Seconds())
	w.waitCount(w.count()+20, "after the promotion")
	r.acked = w.end()
	return r
}

func newPrimaryKilledAfterTakingWrites(t *testing.T, k *cluster) faultResult {
	w := k.write(1, false) // through the Service, across both failovers, failures retried
	w.waitCount(100, "before the first kill")
	r := faultResult{fault: time.Now()}
	k.killServer(0)
	target := k.failOver(&r)
	k.syncUntil("the first promotion", 2*time.Minute, func() bool { return k.is(target, inRecovery, "f") })
	// orders-0 comes back as its kubelet restarts the pod: a former primary
	// under a record that names another, it rewinds and follows it.
	k.start(0)
	k.syncUntil("both others streaming from "+k.pgInstances.pods[target].Name, 3*time.Minute, func() bool {
		return k.is(target, streamingStandbys, strings.Join(otherNames(k, target), ","))
	})
	w.waitCount(w.count()+200, "on the new primary")
	second := time.Now()
	k.killServer(target)
	chosen := k.record.Data[topologyPrimaryKey]
	k.syncUntil("a second promotion", 3*time.Minute, func() bool {
		p := k.record.Data[topologyPrimaryKey]
		return p != chosen && k.record.Data[topologyFencedKey] != "true" && k.is(k.d.ordinalOf(p), inRecovery, "f")
	})
	r.promoted = time.Now()
	t.Logf("the second failover: %s promoted %.1f s after %s was killed", k.record.Data[topologyPrimaryKey], r.promoted.Sub(second).Seconds(), chosen)
	w.waitCount(w.count()+20, "after the second failover")
	r.acked = w.end()
	return r
}

// otherNames are the names of every pod but i, in order.
func otherNames(k *cluster, i int) []string {
	var names []string
	for j, pod := range k.pgInstances.pods {
		if j != i {
			names = append(names, pod.Name)
		}
	}
	return names
}

// killServer kills pod i's server container (SIGKILL to all its processes)
// and waits until its postmaster is gone (reaped), as a kubelet's restart
// only starts the container again once the old one has ended.
func (k *cluster) killServer(i int) {
	k.t.Helper()
	pidFile := filepath.Join(k.pgdata(i), "postmaster.pid")
	raw, _ := os.ReadFile(pidFile)
	k.servers[i].Kill()
	pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil {
		return
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return
		}
		if time.Now().After(deadline) {
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			k.t.Fatalf("the postmaster of %s (pid %d) still exists a minute after the kill:\n%s", k.pgInstances.pods[i].Name, pid, status)
		}
	}
}

// scenarioConf are the lines a scenario adds to the rendered postgresql.conf.
var scenarioConf = map[string][]string{
	// WAL sizes small enough to outrun on this machine: wal_keep_size one
	// segment, a checkpoint every 64 MB at most.
	"StandbyBehindWALKeepSize": {"wal_keep_size = '16MB'", "min_wal_size = '32MB'", "max_wal_size = '64MB'"},
	// The same, with slots bounded at 64 MB.
	"StandbyPastTheSlotBound": {"wal_keep_size = '16MB'", "min_wal_size = '32MB'", "max_wal_size = '64MB'", "max_slot_wal_keep_size = '64MB'"},
}

// slotNames and activeSlots are the instances' replication slots on a
// server (all of them, or those a walsender uses), comma-separated in order.
const (
	slotNames   = "SELECT coalesce(string_agg(slot_name, ',' ORDER BY slot_name), '') FROM pg_replication_slots WHERE slot_name ~ '^metahooks_instance_[0-9]+$'"
	activeSlots = "SELECT coalesce(string_agg(slot_name, ',' ORDER BY slot_name), '') FROM pg_replication_slots WHERE slot_name ~ '^metahooks_instance_[0-9]+$' AND active"
)

// wantSlots are the slots primary i keeps: one per other member of the
// record (its instances), as slotNames prints them.
func wantSlots(k *cluster, i int) string {
	n, err := strconv.Atoi(k.record.Data[topologyInstancesKey])
	if err != nil {
		k.t.Fatalf("the record's instances %q: %v", k.record.Data[topologyInstancesKey], err)
	}
	var names []string
	for j := range n {
		if j != i {
			names = append(names, fmt.Sprintf("metahooks_instance_%d", j))
		}
	}
	return strings.Join(names, ",")
}

func standbyBehindWALKeepSize(t *testing.T, k *cluster) faultResult {
	w := writingThroughSlots(k, "before orders-2 stops")
	k.killServer(2)
	r := faultResult{fault: time.Now(), wantPrimary: "orders-0"}
	// Several times wal_keep_size and max_wal_size of WAL, checkpointed:
	// without its slot, the segments orders-2 needs are removed.
	writeWAL(k, 0)
	w.waitCount(w.count()+50, "with orders-2 down")
	held := k.su[0].MustQuery(t, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint, wal_status, "+
		"pg_walfile_name(restart_lsn) IN (SELECT name FROM pg_ls_waldir()), (SELECT count(*) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$') "+
		"FROM pg_replication_slots WHERE slot_name = 'metahooks_instance_2'")
	f := strings.Split(held, "|")
	if len(f) != 4 {
		t.Fatalf("no slot of orders-2 on orders-0 (%q): %s", held, k.su[0].MustQuery(t, slotNames))
	}
	behind, _ := strconv.ParseInt(f[0], 10, 64)
	t.Logf("orders-2 down: its slot holds %d MB of WAL (wal_status %s, its segment still there: %s, %s segments in pg_wal)", behind>>20, f[1], f[2], f[3])
	// The scenario proves something only if orders-2 is further behind
	// than wal_keep_size and max_wal_size would keep (wal_status extended).
	if f[1] != "extended" || f[2] != "t" || behind < 128<<20 {
		t.Fatalf("the slot of orders-2 on orders-0: %q, want more than 128 MB behind, wal_status extended and its segment kept", held)
	}
	restarted := time.Now()
	k.startServer(2)
	k.syncUntil("orders-2 streaming again", 3*time.Minute, func() bool {
		if strings.Contains(k.serverLog(2), "has already been removed") {
			t.Fatalf("orders-2 cannot catch up: the primary removed WAL it needs\n%s", k.serverLog(2))
		}
		return k.is(0, streamingStandbys, "orders-1,orders-2")
	})
	caughtUp := time.Since(restarted)
	w.waitCount(w.count()+20, "after orders-2 is back")
	r.acked = w.end()
	k.replayedRows(2, r.acked, "orders-2 after catching up from its slot")
	if strings.Contains(k.serverLog(2), "cloned the primary") {
		t.Errorf("orders-2 was cloned again instead of catching up:\n%s", k.serverLog(2))
	}
	t.Logf("orders-2 streaming again %.1f s after its restart, %d MB behind", caughtUp.Seconds(), behind>>20)
	return r
}

// writingThroughSlots waits until both standbys stream through their slots
// on orders-0, then starts the writer (through the Service) and waits for 50
// ids: where every slot scenario starts.
func writingThroughSlots(k *cluster, what string) *writer {
	k.t.Helper()
	k.syncUntil("both standbys streaming through their slots", 2*time.Minute, func() bool {
		return k.is(0, activeSlots, "metahooks_instance_1,metahooks_instance_2")
	})
	w := k.write(1, false)
	w.waitCount(50, what)
	return w
}

// replayedRows waits until standby i has replayed orders-0's WAL as it is
// now, then checks that it holds every acknowledged id.
func (k *cluster) replayedRows(i int, acked []int, when string) {
	k.t.Helper()
	lsn := k.su[0].MustQuery(k.t, "SELECT pg_current_wal_lsn()")
	k.waitFor(i, "SELECT pg_last_wal_replay_lsn() >= '"+lsn+"'", "t", 2*time.Minute)
	k.checkRows(i, acked, when)
}

// writeWAL writes and checkpoints about 150 MB of WAL on primary i.
func writeWAL(k *cluster, i int) {
	k.app[i].MustQuery(k.t, "CREATE TABLE filler (id int, pad text)")
	for range 3 {
		k.app[i].MustQuery(k.t, "INSERT INTO filler SELECT g, repeat('x', 400) FROM generate_series(1, 100000) g")
		k.su[i].MustQuery(k.t, "SELECT pg_switch_wal()")
		k.su[i].MustQuery(k.t, "CHECKPOINT")
	}
	k.app[i].MustQuery(k.t, "DROP TABLE filler")
	k.su[i].MustQuery(k.t, "CHECKPOINT")
}

// walSegments is how many WAL segments primary i's pg_wal holds.
func walSegments(k *cluster, i int) int {
	n, err := strconv.Atoi(k.su[i].MustQuery(k.t, "SELECT count(*) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'"))
	if err != nil {
		k.t.Fatal(err)
	}
	return n
}

func standbyPastTheSlotBound(t *testing.T, k *cluster) faultResult {
	w := writingThroughSlots(k, "before orders-2 stops")
	k.killServer(2)
	r := faultResult{fault: time.Now(), wantPrimary: "orders-0"}
	writeWAL(k, 0)
	// PostgreSQL invalidates the slot at a checkpoint; the primary's agent
	// drops it and makes it again (reserving from now).
	k.syncUntil("the slot of orders-2 invalidated and made again", 2*time.Minute, func() bool {
		k.su[0].Query("CHECKPOINT")
		return strings.Contains(k.serverLog(0), "dropped replication slot metahooks_instance_2 (invalidated")
	})
	k.su[0].MustQuery(t, "CHECKPOINT")
	segments := walSegments(k, 0)
	// 64 MB of slot, 64 MB of max_wal_size, the segment in use and a few
	// recycled ahead: far below the 150 MB written.
	if segments > 12 {
		t.Errorf("pg_wal of orders-0 holds %d segments after the slot's bound (64 MB) was passed", segments)
	}
	// Restarted on its own, orders-2 cannot stream: the WAL it needs is
	// gone. It is a rebuild: its volume emptied, it is cloned again.
	k.startServer(2)
	k.syncUntil("orders-2 refused the WAL it needs", 2*time.Minute, func() bool {
		return strings.Contains(k.serverLog(2), "has already been removed")
	})
	k.killServer(2)
	if err := os.RemoveAll(k.pgdata(2)); err != nil {
		t.Fatal(err)
	}
	rebuilt := time.Now()
	k.start(2)
	k.syncUntil("orders-2 streaming again", 3*time.Minute, func() bool { return k.is(0, streamingStandbys, "orders-1,orders-2") })
	t.Logf("orders-2 past the bound: pg_wal of orders-0 at %d segments after about 150 MB written; orders-2 restarted cannot stream; cloned again and streaming %.1f s after its volume was emptied",
		segments, time.Since(rebuilt).Seconds())
	w.waitCount(w.count()+20, "after orders-2 is back")
	r.acked = w.end()
	k.replayedRows(2, r.acked, "orders-2 after its rebuild")
	return r
}

func primaryWithoutSlots(t *testing.T, k *cluster) faultResult {
	w := writingThroughSlots(k, "before the primary forgets its slots")
	r := faultResult{fault: time.Now(), wantPrimary: "orders-0"}
	// orders-0 reads a record without instances, as an agent from before
	// slots would read any: it keeps no slots.
	old := k.record.DeepCopy()
	delete(old.Data, topologyInstancesKey)
	k.holdFrom[0] = 0
	k.pgInstances.pods[0].UpdateConfigMap(old)
	k.killServer(2)
	time.Sleep(2 * time.Second) // a poll of orders-0 on the old record
	k.su[0].MustQuery(t, "SELECT pg_drop_replication_slot('metahooks_instance_2')")
	restarted := time.Now()
	k.startServer(2)
	k.syncUntil("orders-2 streaming without a slot", 3*time.Minute, func() bool {
		return k.is(0, streamingStandbys, "orders-1,orders-2") && k.is(2, "SHOW primary_slot_name", "")
	})
	without := time.Since(restarted)
	if got := k.su[0].MustQuery(t, slotNames); got != "metahooks_instance_1" {
		t.Errorf("slots on orders-0, whose agent keeps none: %q", got)
	}
	w.waitCount(w.count()+20, "with orders-2 streaming without its slot")
	// The primary's agent upgraded: it makes the slot, orders-2 uses it.
	k.deliver(0)
	upgraded := time.Now()
	k.syncUntil("orders-2 streaming through its slot", 3*time.Minute, func() bool {
		return k.is(0, activeSlots, "metahooks_instance_1,metahooks_instance_2") && k.is(2, "SHOW primary_slot_name", "metahooks_instance_2")
	})
	t.Logf("orders-2 streaming without a slot %.1f s after its restart; through its slot %.1f s after the primary made it", without.Seconds(), time.Since(upgraded).Seconds())
	w.waitCount(w.count()+20, "with orders-2 streaming through its slot")
	r.acked = w.end()
	return r
}

func scaleDownDropsSlot(t *testing.T, k *cluster) faultResult {
	w := writingThroughSlots(k, "before the scale-down")
	r := faultResult{fault: time.Now(), wantPrimary: "orders-0"}
	k.parent = k.parent.DeepCopy()
	k.parent.Spec.Instances = ptr.To[int32](2)
	k.syncUntil("the record's members down to 2", time.Minute, func() bool { return k.record.Data[topologyInstancesKey] == "2" })
	// orders-2 still streams until the StatefulSet controller deletes its
	// pod: an active slot is never dropped.
	for watch := time.Now(); time.Since(watch) < 3*time.Second; time.Sleep(200 * time.Millisecond) {
		k.sync()
	}
	if got := k.su[0].MustQuery(t, slotNames); got != "metahooks_instance_1,metahooks_instance_2" {
		t.Errorf("slots on orders-0 while orders-2 still streams: %q", got)
	}
	k.killServer(2) // its pod deleted
	gone := time.Now()
	k.syncUntil("the slot of orders-2 dropped", 2*time.Minute, func() bool { return k.is(0, slotNames, "metahooks_instance_1") })
	t.Logf("the slot of orders-2 dropped %.1f s after its pod was gone", time.Since(gone).Seconds())
	if !strings.Contains(k.serverLog(0), "dropped replication slot metahooks_instance_2") {
		t.Errorf("orders-0 does not say it dropped the slot:\n%s", k.serverLog(0))
	}
	w.waitCount(w.count()+20, "after the scale-down")
	r.acked = w.end()
	return r
}

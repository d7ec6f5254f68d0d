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
	} {
		t.Run(sc.name, func(t *testing.T) {
			parent := newDatabase(withInstances(3), func(db *dbv1.Database) { db.Spec.FailoverDelaySeconds = ptr.To[int32](5) })
			k := newCluster(newPGInstances(t, parent))
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
			found := k.rows(final)
			missing := missingRows(r.acked, found)
			t.Logf("%s: %d ids acknowledged, %d rows on the final primary %s, %d acknowledged missing; fenced %.1f s and promoted %.1f s after the fault; "+
				"the old primary's own client: %d acknowledged after the fault; write probes acknowledged: %s",
				sc.name, len(r.acked), len(found), k.pgInstances.pods[final].Name, len(missing), r.fenced.Sub(r.fault).Seconds(), r.promoted.Sub(r.fault).Seconds(), len(r.staleAcked),
				strings.Join(probed, ", "))
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

package database

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
	"metahooks/test/podrun"
)

// The instances of a Database with instances >= 2 run here from the pod
// specs the hook renders (through test/podrun, as scripts_test.go runs one
// server): init container, then server container, each pod on its own free
// port of 127.0.0.1. What the test does in place of a cluster is only what
// Kubernetes would do: the kubelet's (start and kill containers, refresh the
// mounted topology ConfigMap with the hook's answer, Ready conditions), the
// cluster DNS's (PEER_ADDRESSES: where each pod listens), and publishing each
// instance's report file as its pod's label and annotations. Every clone,
// promotion, rewind and switchover is the scripts' (instance.sh), driven by
// the topology record alone.

// pgInstances is one Database's instances on a Host.
type pgInstances struct {
	t       *testing.T
	host    *podrun.Host
	parent  *dbv1.Database
	d       *database
	sts     *appsv1.StatefulSet
	record  *corev1.ConfigMap // the topology ConfigMap as last written to the pods
	pods    []*podrun.Pod
	ports   []int
	servers []*podrun.Process
	app, su []podrun.Client
}

// newPGInstances renders parent (instances >= 2) on a first sync and maps
// its pods. extraConf lines are appended to the rendered postgresql.conf
// (later lines win): a scenario's smaller WAL sizes.
func newPGInstances(t *testing.T, parent *dbv1.Database, extraConf ...string) *pgInstances {
	t.Helper()
	host := requireHost(t)
	n := int(*parent.Spec.Instances)
	resp, err := mustHook(t)(haRequest(t, parent, parent, nil, make([]podState, n)), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := &pgInstances{t: t, host: host, parent: parent, d: mustParse(t, parent), servers: make([]*podrun.Process, n)}
	c.sts = responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", parent.Name)
	cm := responseChild[corev1.ConfigMap](t, resp, "ConfigMap", c.d.configMapName())
	c.record = responseChild[corev1.ConfigMap](t, resp, "ConfigMap", c.d.topologyName())
	if c.sts == nil || cm == nil || c.record == nil {
		t.Fatal("the hook rendered no StatefulSet, config or topology ConfigMap")
	}
	secrets := map[string]*corev1.Secret{}
	for _, name := range []string{c.d.secretName(), c.d.superuserSecretName(), c.d.replicationSecretName()} {
		s := responseChild[corev1.Secret](t, resp, "Secret", name)
		if s == nil {
			t.Fatalf("the hook rendered no Secret %s", name)
		}
		secrets[name] = s
		host.AddSecret(s)
	}
	// The only change to what the hook rendered: loopback, and no waiting
	// for the disk (the data is thrown away; a SIGKILL of the processes
	// loses nothing the kernel has). Commits still wait for a standby.
	cm.Data[configFileName] += "# podrun: loopback only, no fsync\nlisten_addresses = '127.0.0.1'\nfsync = off\n"
	for _, line := range extraConf {
		cm.Data[configFileName] += line + "\n"
	}
	host.AddConfigMap(cm)
	host.AddConfigMap(c.record)
	// What every namespace has: the reporter's token volume projects it.
	host.AddConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": "not used here"}})
	var peers []string
	for i := range n {
		c.ports = append(c.ports, podrun.FreePort(t))
		peers = append(peers, fmt.Sprintf("%s=127.0.0.1:%d", c.d.instanceName(i), c.ports[i]))
	}
	host.Env["PEER_ADDRESSES"] = strings.Join(peers, " ")
	cred, su := secrets[c.d.secretName()], secrets[c.d.superuserSecretName()]
	for i := range n {
		pod := host.StatefulSetPodOrdinal(c.sts, i)
		pod.Values[strconv.Itoa(port)] = strconv.Itoa(c.ports[i])
		c.pods = append(c.pods, pod)
		c.app = append(c.app, podrun.Client{BinDir: host.BinDir, Port: c.ports[i], User: string(cred.Data["username"]), Password: string(cred.Data["password"]), Database: string(cred.Data["database"])})
		c.su = append(c.su, podrun.Client{BinDir: host.BinDir, Port: c.ports[i], User: string(su.Data["username"]), Password: string(su.Data["password"]), Database: "postgres"})
	}
	t.Cleanup(func() {
		for i, pod := range c.pods {
			if c.servers[i] != nil && !c.servers[i].Exited() {
				c.servers[i].Kill()
			}
			if _, err := os.Stat(filepath.Join(c.pgdata(i), "postmaster.pid")); err == nil {
				pod.Exec(containerName, []string{"pg_ctl", "stop", "--mode=immediate", "--pgdata=" + pgdataPath}, 30*time.Second)
			}
		}
	})
	return c
}

func (c *pgInstances) pgdata(i int) string { return c.pods[i].HostPath(containerName, pgdataPath) }

// start runs pod i: its init container to the end, then its server
// container, until the server accepts connections.
func (c *pgInstances) start(i int) {
	c.t.Helper()
	r := c.pods[i].Run(initContainerName, 3*time.Minute)
	if r.Code != 0 {
		c.t.Fatalf("init container of %s exited %d:\n%s", c.pods[i].Name, r.Code, r.Log)
	}
	c.startServer(i)
}

func (c *pgInstances) startServer(i int) {
	c.t.Helper()
	c.servers[i] = c.pods[i].Start(containerName)
	if err := c.su[i].WaitReady(time.Minute); err != nil {
		c.t.Fatalf("%v; server log of %s:\n%s", err, c.pods[i].Name, c.servers[i].Log())
	}
}

// startAll starts the primary, then every standby at once (their init
// containers clone it).
func (c *pgInstances) startAll() {
	c.t.Helper()
	c.start(0)
	results := make([]chan podrun.Result, len(c.pods))
	for i := 1; i < len(c.pods); i++ {
		results[i] = make(chan podrun.Result, 1)
		go func() { results[i] <- c.pods[i].Run(initContainerName, 3*time.Minute) }()
	}
	for i := 1; i < len(c.pods); i++ {
		if r := <-results[i]; r.Code != 0 {
			c.t.Fatalf("init container of %s exited %d:\n%s", c.pods[i].Name, r.Code, r.Log)
		}
		c.startServer(i)
	}
}

// waitFor polls sql on server i as the superuser until it prints want (at
// most timeout); waitForApp as the application, in its database.
func (c *pgInstances) waitFor(i int, sql, want string, timeout time.Duration) {
	c.t.Helper()
	c.waitAs(c.su[i], i, sql, want, timeout)
}

func (c *pgInstances) waitForApp(i int, sql, want string, timeout time.Duration) {
	c.t.Helper()
	c.waitAs(c.app[i], i, sql, want, timeout)
}

func (c *pgInstances) waitAs(cl podrun.Client, i int, sql, want string, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := cl.Query(sql)
		if err == nil && out == want {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: %q is %q (%v) after %s, want %q; server logs:\n%s", c.pods[i].Name, sql, out, err, timeout, want, c.allLogs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// allLogs are every instance's server log (a standby that does not stream
// says why only in its own), and its last published report.
func (c *pgInstances) allLogs() string {
	var out strings.Builder
	for i := range c.pods {
		fmt.Fprintf(&out, "--- %s (report %v):\n%s\n", c.pods[i].Name, c.published(i), c.serverLog(i))
	}
	return out.String()
}

func (c *pgInstances) serverLog(i int) string {
	if c.servers[i] == nil {
		return "(not started)"
	}
	return c.servers[i].Log()
}

// streamingStandbys is the query of a primary's synchronous standbys that
// stream.
const streamingStandbys = "SELECT string_agg(application_name, ',' ORDER BY application_name) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum')"

// published is instance i's report file as its reporter container puts it
// on the pod (ParseInstanceReport, what `metahooks instance-report` sends),
// label and annotations in one map: nil before the first report, or while
// the file is not one the reporter would publish.
func (c *pgInstances) published(i int) map[string]string {
	raw, err := os.ReadFile(filepath.Join(c.pods[i].Volume(reportVolume), "report"))
	if err != nil {
		return nil
	}
	r, err := ParseInstanceReport(raw)
	if err != nil {
		return nil
	}
	out := maps.Clone(r.Annotations)
	maps.Copy(out, r.Labels)
	return out
}

// TestInstancesStreamOnPostgreSQL starts a primary and two standbys from the
// rendered pods: the standbys clone the primary in their init containers
// (pg_basebackup, as the replication role of Secret <n>-replication) and
// stream from it; the primary takes synchronous_standby_names from the
// record, so every commit it acknowledges is on a standby.
//
// With the standbys' reports published, the hook points the backup CronJob
// at Service <n>-ro, and its backup container dumps a standby (pg_dump and
// pg_dumpall on a hot standby) without touching the primary.
func TestInstancesStreamOnPostgreSQL(t *testing.T) {
	c := newPGInstances(t, newDatabase(withInstances(3), withBackup("0 2 * * *", 3)))
	if got, want := c.record.Data[topologySynchronousKey], `ANY 1 ("orders-1", "orders-2")`; got != want {
		t.Fatalf("the record's synchronousStandbyNames is %q, want %q", got, want)
	}
	c.startAll()
	c.waitFor(0, streamingStandbys, "orders-1,orders-2", time.Minute)
	if got := c.su[0].MustQuery(c.t, "SHOW synchronous_standby_names"); got != c.record.Data[topologySynchronousKey] {
		t.Errorf("the primary's synchronous_standby_names is %q, want the record's %q", got, c.record.Data[topologySynchronousKey])
	}
	if got := c.su[0].MustQuery(c.t, "SELECT rolsuper, rolreplication FROM pg_roles WHERE rolname = '"+replicationUser+"'"); got != "f|t" {
		t.Errorf("role %s: superuser|replication = %q, want f|t", replicationUser, got)
	}

	c.app[0].MustQuery(c.t, "CREATE TABLE acked (id int PRIMARY KEY)")
	const rows = 50
	for id := 1; id <= rows; id++ {
		c.app[0].MustQuery(c.t, fmt.Sprintf("INSERT INTO acked VALUES (%d)", id))
	}
	for i := 1; i <= 2; i++ {
		c.waitForApp(i, "SELECT count(*) FROM acked", strconv.Itoa(rows), 2*time.Minute)
		if _, err := c.app[i].Query("INSERT INTO acked VALUES (0)"); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s took a write: %v", c.pods[i].Name, err)
		}
		conf, err := os.ReadFile(filepath.Join(c.pgdata(i), "postgresql.auto.conf"))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(conf); !strings.Contains(s, "application_name="+c.pods[i].Name) || !strings.Contains(s, "passfile=") ||
			strings.Contains(s, string(c.host.Secret(c.d.replicationSecretName()).Data["password"])) {
			t.Errorf("%s: postgresql.auto.conf should name it and a passfile, never the password:\n%s", c.pods[i].Name, s)
		}
	}

	// Each instance reports what it is (once a poll has run).
	wantRole := []string{rolePrimary, roleStandby, roleStandby}
	for i := range c.pods {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			r := c.published(i)
			if r != nil && r[roleLabel] == wantRole[i] && r[timelineAnnotation] == "1" && (i == 0 || r[receivingAnnotation] == "true") {
				if _, ok := parseLSN(r[lsnAnnotation]); !ok {
					t.Errorf("%s reports lsn %q", c.pods[i].Name, r[lsnAnnotation])
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s reports %v, want role %s on timeline 1; log:\n%s", c.pods[i].Name, r, wantRole[i], c.serverLog(i))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// A scheduled backup once the hook has seen the standbys' reports.
	k := newCluster(c)
	k.probe()
	resp, err := mustHook(t)(haRequest(t, k.parent, k.parent, k.observedRecord(), k.states()), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cronJob := responseChild[batchv1.CronJob](t, resp, "CronJob", c.d.cronJobName())
	if cronJob == nil {
		t.Fatal("no backup CronJob rendered")
	}
	jobPod := cronJob.Spec.JobTemplate.Spec.Template.Spec
	roHost := c.d.readOnlyServiceName() + "." + c.d.namespace + ".svc"
	var pgHost string
	for _, e := range jobPod.Containers[0].Env {
		if e.Name == "PGHOST" {
			pgHost = e.Value
		}
	}
	if pgHost != roHost {
		t.Fatalf("the backup connects to %q, want the standbys' Service %s", pgHost, roHost)
	}
	backup := c.host.Pod("backup-from-standby", jobPod)
	backup.Values[roHost] = "127.0.0.1" // kube-proxy: one of the ready standbys
	backup.Values[strconv.Itoa(port)] = strconv.Itoa(c.ports[1])
	r := backup.Run("backup", 2*time.Minute)
	if r.Code != 0 {
		t.Fatalf("backup against standby orders-1 exited %d:\n%s", r.Code, r.Log)
	}
	dumps := dumpsOf(backupFiles(t, c.host.Claim(backupsClaimName(c.parent.Name))), "Z.dump")
	if len(dumps) != 1 {
		t.Fatalf("backups after one run: %v", dumps)
	}
	list, err := exec.Command(filepath.Join(c.host.BinDir, "pg_restore"), "--list", filepath.Join(c.host.Claim(backupsClaimName(c.parent.Name)), dumps[0])).CombinedOutput()
	if err != nil || !strings.Contains(string(list), "TABLE DATA public acked") {
		t.Fatalf("the dump taken on the standby lacks table acked (%v):\n%s", err, list)
	}
	t.Logf("backup from standby orders-1 through %s: %s in %s", roHost, strings.TrimSpace(r.Stdout), r.Duration.Round(time.Millisecond))
}

// readiness is a pod's Ready condition as the kubelet would set it.
type readiness struct {
	ready bool
	since time.Time // lastTransitionTime, to the second
}

// cluster is what the test plays of Kubernetes around the instances: the
// kubelet's readiness probe (the server accepts connections), the instances'
// report files published on their pods, Metacontroller calling the hook with
// all that and applying its topology ConfigMap, and the kubelet refreshing
// the mounted files of every pod.
type cluster struct {
	*pgInstances
	parent  *dbv1.Database // the Database as the user has set it now
	pods    []readiness
	primary atomic.Int32 // the ordinal the read-write Service selects (the record's primary)
	// holdFrom: pod i's kubelet does not refresh the mounted record with a
	// record of epoch holdFrom[i] or later (it is cut off, or slow); sync
	// leaves its files as they are until deliver.
	holdFrom map[int]uint64
	// skew: pod i's kubelet and instance agent read a clock this far off
	// the hook's (its Ready lastTransitionTime and reported-at).
	skew map[int]time.Duration
}

// deliver writes the current record into pod i's mounted files, as its
// kubelet's next sync would, and stops holding it back.
func (k *cluster) deliver(i int) {
	delete(k.holdFrom, i)
	k.pgInstances.pods[i].UpdateConfigMap(k.record)
}

// epoch is the current record's.
func (k *cluster) epoch() uint64 {
	e, _ := strconv.ParseUint(k.record.Data[topologyEpochKey], 10, 64)
	return e
}

func newCluster(c *pgInstances) *cluster {
	k := &cluster{pgInstances: c, parent: c.parent, pods: make([]readiness, len(c.pods)), holdFrom: map[int]uint64{}}
	for i := range k.pods {
		k.pods[i] = readiness{ready: true, since: podsReady}
	}
	return k
}

// probe is the readiness probe of every pod (pg_isready).
func (k *cluster) probe() {
	for i := range k.pods {
		now := time.Now().UTC().Add(k.skew[i]).Truncate(time.Second)
		ready := exec.Command(filepath.Join(k.host.BinDir, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(k.ports[i]), "-t", "2").Run() == nil
		if ready != k.pods[i].ready {
			k.pods[i] = readiness{ready: ready, since: now}
		}
	}
}

// states are the pods as Metacontroller would show them to the hook.
func (k *cluster) states() []podState {
	out := make([]podState, len(k.pods))
	for i, p := range k.pods {
		s := podState{}
		if r := k.published(i); r != nil {
			tl, _ := strconv.ParseInt(r[timelineAnnotation], 10, 64)
			at, _ := time.Parse(time.RFC3339, r[reportedAnnotation])
			at = at.Add(k.skew[i])
			epoch, _ := strconv.ParseUint(r[epochAnnotation], 10, 64)
			s = podState{role: r[roleLabel], timeline: tl, lsn: r[lsnAnnotation], receiving: r[receivingAnnotation] == "true", epoch: epoch, at: at}
		}
		if !p.ready {
			s.notReady = p.since
		}
		out[i] = s
	}
	return out
}

// observedRecord is the topology ConfigMap as the hook observes it.
func (k *cluster) observedRecord() *haRecord {
	data := k.record.Data
	rec := &haRecord{primary: data[topologyPrimaryKey], switchoverTo: data[topologySwitchoverKey], switchoverReason: data[topologySwitchoverReasonKey],
		from: data[topologyPreviousKey], reason: data[topologyReasonKey]}
	if rec.from != "" {
		at, err := time.Parse(time.RFC3339, data[topologyChangedKey])
		if err != nil {
			k.t.Fatalf("changedAt: %v", err)
		}
		rec.at = at
	}
	if v := data[topologyEpochKey]; v != "" {
		epoch, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			k.t.Fatalf("epoch: %v", err)
		}
		rec.epoch = epoch
	}
	rec.fenced = data[topologyFencedKey] == "true"
	if v := data[topologyUnavailableKey]; v != "" {
		at, err := time.Parse(time.RFC3339, v)
		if err != nil {
			k.t.Fatalf("unavailableSince: %v", err)
		}
		rec.unavailable = at
	}
	return rec
}

// sync is one call of the hook on what is observed now; a new topology
// ConfigMap in its answer is applied and reaches every pod's files. It
// reports whether the record changed.
func (k *cluster) sync() bool {
	k.t.Helper()
	k.probe()
	resp, err := mustHook(k.t)(haRequest(k.t, k.parent, k.parent, k.observedRecord(), k.states()), time.Now())
	if err != nil {
		k.t.Fatal(err)
	}
	cm := responseChild[corev1.ConfigMap](k.t, resp, "ConfigMap", k.d.topologyName())
	if cm == nil {
		k.t.Fatal("the answer has no topology ConfigMap")
	}
	if maps.Equal(cm.Data, k.record.Data) {
		return false
	}
	k.t.Logf("%s record: %v", time.Now().Format("15:04:05.000"), cm.Data)
	k.record = cm
	for i, pod := range k.pgInstances.pods {
		if from, held := k.holdFrom[i]; !held || k.epoch() < from {
			pod.UpdateConfigMap(cm)
		}
	}
	k.primary.Store(int32(k.d.ordinalOf(cm.Data[topologyPrimaryKey])))
	return true
}

// syncUntil calls the hook every 200 ms until done holds (at most timeout).
func (k *cluster) syncUntil(what string, timeout time.Duration, done func() bool) {
	k.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		k.sync()
		if done() {
			return
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("%s: not after %s; record %v\n%s", what, timeout, k.record.Data, k.allLogs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// is reports whether sql on instance i prints want right now.
func (k *cluster) is(i int, sql, want string) bool {
	out, err := k.su[i].Query(sql)
	return err == nil && out == want
}

// writer commits rows 1, 2, ... one transaction each, as an application
// would through the read-write Service: to the instance it selects now (or,
// with at >= 0, always to instance at: a client that kept its connection).
type writer struct {
	k     *cluster
	at    int
	pause time.Duration // after each attempt (a probe's pace); 0: none
	next  int
	acked []int // read once done is closed
	n     atomic.Int64
	stop  chan struct{}
	done  chan struct{}
}

// write starts committing; untilFailure stops at the first failure (the
// primary is killed), otherwise failures are retried with the next row.
func (k *cluster) write(first int, untilFailure bool) *writer {
	return k.writeAt(-1, first, untilFailure)
}

// writeAt is write to instance at, whatever the Service selects (-1: the
// Service).
func (k *cluster) writeAt(at, first int, untilFailure bool) *writer {
	w := &writer{k: k, at: at, next: first, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			if w.pause > 0 {
				select {
				case <-w.stop:
					return
				case <-time.After(w.pause):
				}
			}
			id := w.next
			w.next++
			to := w.at
			if to < 0 {
				to = int(k.primary.Load())
			}
			if _, err := k.app[to].Query(fmt.Sprintf("INSERT INTO acked VALUES (%d)", id)); err != nil {
				if untilFailure {
					return
				}
				time.Sleep(50 * time.Millisecond)
				continue
			}
			w.acked = append(w.acked, id)
			w.n.Add(1)
		}
	}()
	return w
}

func (w *writer) count() int { return int(w.n.Load()) }

// waitCount waits until n rows are acknowledged. The bound is generous: it
// catches a writer that never gets anywhere, not a slow machine.
func (w *writer) waitCount(n int, what string) {
	w.k.t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); w.count() < n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			w.k.t.Fatalf("%s: %d of %d rows acknowledged after 5 min\n%s", what, w.count(), n, w.k.allLogs())
		}
	}
}

// end stops the writer and returns the rows acknowledged.
func (w *writer) end() []int {
	close(w.stop)
	<-w.done
	return w.acked
}

// rows are the ids in table acked on instance i.
func (k *cluster) rows(i int) []int {
	k.t.Helper()
	var ids []int
	for _, line := range strings.Fields(k.app[i].MustQuery(k.t, "SELECT id FROM acked ORDER BY id")) {
		n, err := strconv.Atoi(line)
		if err != nil {
			k.t.Fatal(err)
		}
		ids = append(ids, n)
	}
	return ids
}

func missingRows(acked, found []int) []int {
	have := map[int]bool{}
	for _, r := range found {
		have[r] = true
	}
	var missing []int
	for _, r := range acked {
		if !have[r] {
			missing = append(missing, r)
		}
	}
	return missing
}

// checkRows fails the test if instance i lacks an acknowledged row.
func (k *cluster) checkRows(i int, acked []int, when string) {
	k.t.Helper()
	missing := missingRows(acked, k.rows(i))
	k.t.Logf("%s: %d of %d acknowledged rows on %s", when, len(acked)-len(missing), len(acked), k.pgInstances.pods[i].Name)
	if len(missing) > 0 {
		k.t.Fatalf("%s: %d acknowledged rows missing on %s: %v", when, len(missing), k.pgInstances.pods[i].Name, missing[:min(len(missing), 10)])
	}
}

const inRecovery = "SELECT pg_is_in_recovery()"

// TestFailoverOnPostgreSQL runs a primary and two synchronous standbys from
// the rendered pods, and then what the record makes of them:
//
//   - rows committed one transaction each until the primary's pod is killed
//     (SIGKILL to all its processes: its node died);
//   - the hook, fed the pods (the killed one not Ready) and the instances'
//     reports every 200 ms, promotes nobody before failoverDelaySeconds (5),
//     then a standby; its record reaches the pods' mounted files, the named
//     standby promotes itself from it, the other follows it, and every
//     acknowledged row is there;
//   - the old primary's pod started again finds the record naming another:
//     its init container rewinds it (pg_rewind) and it streams from the new
//     primary and replays what it missed, never accepting a write;
//   - spec.primary set back to it: the hook asks for a switchover, the
//     primary shuts down cleanly, the target promotes once it has all of its
//     WAL, the old one rejoins; rows committed throughout through the
//     "Service" (the record's primary) are all there.
func TestFailoverOnPostgreSQL(t *testing.T) {
	parent := newDatabase(withInstances(3), func(db *dbv1.Database) { db.Spec.FailoverDelaySeconds = ptr.To[int32](5) })
	k := newCluster(newPGInstances(t, parent))
	k.startAll()
	k.waitFor(0, streamingStandbys, "orders-1,orders-2", time.Minute)
	k.waitFor(0, activeSlots, "metahooks_instance_1,metahooks_instance_2", time.Minute) // each standby streams through its slot
	k.app[0].MustQuery(k.t, "CREATE TABLE acked (id int PRIMARY KEY)")

	// Rows committed until the primary dies.
	w := k.write(1, true)
	w.waitCount(100, "before the kill")
	killedAt := time.Now()
	k.servers[0].Kill()
	k.probe()
	acked := w.end()
	t.Logf("rows acknowledged before the kill: %d", len(acked))

	// The hook after the delay; the promotion is the instance's.
	var decidedAt time.Time
	k.syncUntil("a failover decided", 2*time.Minute, func() bool {
		if k.record.Data[topologyPrimaryKey] != "orders-0" {
			decidedAt = time.Now()
			return true
		}
		return false
	})
	if waited := decidedAt.Sub(killedAt); waited < 4*time.Second { // the Ready condition has whole seconds
		t.Fatalf("failover decided %s after the kill, before failoverDelaySeconds 5", waited)
	}
	if r := k.record.Data[topologyReasonKey]; r != changeFailover {
		t.Fatalf("record reason %q, want %s", r, changeFailover)
	}
	target := k.d.ordinalOf(k.record.Data[topologyPrimaryKey])
	other := 3 - target
	k.syncUntil("the named standby promoted", 2*time.Minute, func() bool { return k.is(target, inRecovery, "f") })
	promotedAt := time.Now()
	k.checkRows(target, acked, "after the failover")
	k.syncUntil("the other standby following the new primary", 2*time.Minute, func() bool {
		return k.is(target, streamingStandbys, k.pgInstances.pods[other].Name)
	})
	following := time.Since(promotedAt)
	// The promoted one made a slot for each other member (orders-0's for
	// when it comes back); the other standby streams through its own.
	k.waitFor(target, slotNames, wantSlots(k, target), time.Minute)
	k.waitFor(target, activeSlots, fmt.Sprintf("metahooks_instance_%d", other), time.Minute)
	k.app[target].MustQuery(k.t, "INSERT INTO acked VALUES (-1)") // a synchronous commit: a standby has it
	acked = append(acked, -1)
	t.Logf("failover: decided %.1f s after the kill (failoverDelaySeconds 5), %s promoted %.1f s after the kill; %s streaming from it (through its new slot) %.1f s after the promotion",
		decidedAt.Sub(killedAt).Seconds(), k.pgInstances.pods[target].Name, promotedAt.Sub(killedAt).Seconds(), k.pgInstances.pods[other].Name, following.Seconds())

	// The old primary comes back: pg_rewind, then it streams and replays.
	rejoinStart := time.Now()
	init0 := k.pgInstances.pods[0].Run(initContainerName, 3*time.Minute)
	if init0.Code != 0 || !strings.Contains(init0.Log, "rewound onto "+k.pgInstances.pods[target].Name) {
		t.Fatalf("init container of orders-0 (exit %d) did not rewind onto %s:\n%s", init0.Code, k.pgInstances.pods[target].Name, init0.Log)
	}
	k.startServer(0)
	k.syncUntil("orders-0 streaming from the new primary", 60*time.Second, func() bool {
		return k.is(target, streamingStandbys, "orders-0,"+k.pgInstances.pods[other].Name) || k.is(target, streamingStandbys, k.pgInstances.pods[other].Name+",orders-0")
	})
	rejoined := time.Since(rejoinStart)
	k.waitForApp(0, "SELECT count(*) FROM acked WHERE id = -1", "1", 2*time.Minute)
	k.checkRows(0, acked, "orders-0 after its rejoin")
	// A former primary's slots (those pg_rewind left) are gone once it is a
	// standby; it streams through the slot the new primary made for it.
	k.waitFor(0, slotNames, "", time.Minute)
	k.waitFor(target, activeSlots, wantSlots(k, target), time.Minute)
	if _, err := k.app[0].Query("INSERT INTO acked VALUES (-2)"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("the rejoined orders-0 took a write: %v", err)
	}
	t.Logf("rejoin: orders-0 rewound and streaming %.1f s after its pod started again", rejoined.Seconds())

	// A planned switchover back, while rows are committed.
	w = k.write(100001, false)
	w.waitCount(20, "before the switchover")
	k.parent = k.parent.DeepCopy()
	k.parent.Spec.Primary = "orders-0"
	switchStart := time.Now()
	k.syncUntil("the switchover to orders-0 done", 60*time.Second, func() bool {
		return k.record.Data[topologyPrimaryKey] == "orders-0" && k.is(0, inRecovery, "f")
	})
	switched := time.Since(switchStart)
	if r := k.record.Data[topologyReasonKey]; r != changeSwitchover {
		t.Fatalf("record reason %q, want %s", r, changeSwitchover)
	}
	k.syncUntil("both standbys streaming from orders-0", 60*time.Second, func() bool {
		return k.is(0, streamingStandbys, "orders-1,orders-2")
	})
	settled := time.Since(switchStart)
	k.waitFor(0, activeSlots, "metahooks_instance_1,metahooks_instance_2", time.Minute)
	k.waitFor(target, slotNames, "", time.Minute) // the demoted primary's slots are gone
	w.waitCount(w.count()+20, "after the switchover")
	during := w.end()
	k.checkRows(0, append(acked, during...), "after the switchover")
	if !strings.Contains(k.serverLog(target), "shut down cleanly at") {
		t.Errorf("%s did not report its clean shutdown for the switchover:\n%s", k.pgInstances.pods[target].Name, k.serverLog(target))
	}
	t.Logf("switchover: orders-0 primary %.1f s after spec.primary was set, both standbys streaming from it after %.1f s; %d rows acknowledged meanwhile",
		switched.Seconds(), settled.Seconds(), len(during))
}

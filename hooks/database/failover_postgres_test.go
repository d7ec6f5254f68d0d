package database

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

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
// its pods.
func newPGInstances(t *testing.T, parent *dbv1.Database) *pgInstances {
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
	host.AddConfigMap(cm)
	host.AddConfigMap(c.record)
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

func (c *pgInstances) query(cl podrun.Client, sql string) string {
	c.t.Helper()
	out, err := cl.Query(sql)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
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
			c.t.Fatalf("%s: %q is %q (%v) after %s, want %q; server log:\n%s", c.pods[i].Name, sql, out, err, timeout, want, c.serverLog(i))
		}
		time.Sleep(100 * time.Millisecond)
	}
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

// published is instance i's report file as the label and annotations of its
// pod: nil before the first.
func (c *pgInstances) published(i int) map[string]string {
	raw, err := os.ReadFile(filepath.Join(c.pods[i].Volume(runVolume), "report"))
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		out[k] = v
	}
	return out
}

// TestInstancesStreamOnPostgreSQL starts a primary and two standbys from the
// rendered pods: the standbys clone the primary in their init containers
// (pg_basebackup, as the replication role of Secret <n>-replication) and
// stream from it; the primary takes synchronous_standby_names from the
// record, so every commit it acknowledges is on a standby.
func TestInstancesStreamOnPostgreSQL(t *testing.T) {
	c := newPGInstances(t, newDatabase(withInstances(3)))
	if got, want := c.record.Data[topologySynchronousKey], `ANY 1 ("orders-1", "orders-2")`; got != want {
		t.Fatalf("the record's synchronousStandbyNames is %q, want %q", got, want)
	}
	c.startAll()
	c.waitFor(0, streamingStandbys, "orders-1,orders-2", time.Minute)
	if got := c.query(c.su[0], "SHOW synchronous_standby_names"); got != c.record.Data[topologySynchronousKey] {
		t.Errorf("the primary's synchronous_standby_names is %q, want the record's %q", got, c.record.Data[topologySynchronousKey])
	}
	if got := c.query(c.su[0], "SELECT rolsuper, rolreplication FROM pg_roles WHERE rolname = '"+replicationUser+"'"); got != "f|t" {
		t.Errorf("role %s: superuser|replication = %q, want f|t", replicationUser, got)
	}

	c.query(c.app[0], "CREATE TABLE acked (id int PRIMARY KEY)")
	const rows = 50
	for id := 1; id <= rows; id++ {
		c.query(c.app[0], fmt.Sprintf("INSERT INTO acked VALUES (%d)", id))
	}
	for i := 1; i <= 2; i++ {
		c.waitForApp(i, "SELECT count(*) FROM acked", strconv.Itoa(rows), 30*time.Second)
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
		deadline := time.Now().Add(30 * time.Second)
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
}

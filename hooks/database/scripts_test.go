package database

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	dbv1 "metahooks/api/v1"
	"metahooks/test/podrun"
)

// The scripts of the Database pods run here as a cluster would run them: the
// pod specs the hook renders, container by container, with their env from the
// rendered Secrets and ConfigMap, their mount paths mapped into a temporary
// root, the real commands, against PostgreSQL from Debian's packages (see
// package podrun). The server listens on 127.0.0.1 and a free port only.

// pgDatabase is one Database rendered by the hook and mapped onto a Host.
type pgDatabase struct {
	t       *testing.T
	host    *podrun.Host
	parent  *dbv1.Database
	d       *database
	sts     *appsv1.StatefulSet
	cronJob *batchv1.CronJob
	pod     *podrun.Pod
	port    int
	server  *podrun.Process
	app, su podrun.Client
}

// newPGDatabase renders parent on a first sync and maps its server pod.
func newPGDatabase(t *testing.T, host *podrun.Host, parent *dbv1.Database) *pgDatabase {
	t.Helper()
	resp := mustSync(t, newRequest(t, parent, false))
	db := &pgDatabase{t: t, host: host, parent: parent, d: mustParse(t, parent), port: podrun.FreePort(t)}
	db.sts = responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", parent.Name)
	db.cronJob = responseChild[batchv1.CronJob](t, resp, "CronJob", db.d.cronJobName())
	cm := responseChild[corev1.ConfigMap](t, resp, "ConfigMap", db.d.configMapName())
	cred := responseChild[corev1.Secret](t, resp, "Secret", db.d.secretName())
	su := responseChild[corev1.Secret](t, resp, "Secret", db.d.superuserSecretName())
	if db.sts == nil || cm == nil || cred == nil || su == nil {
		t.Fatal("the hook rendered no StatefulSet, ConfigMap, credentials or superuser Secret")
	}
	// The only changes to what the hook rendered: loopback, a free port, and
	// no waiting for the disk (the tests' data is thrown away).
	cm.Data[configFileName] += fmt.Sprintf("# podrun: loopback only, a free port, no fsync\nlisten_addresses = '127.0.0.1'\nport = %d\nfsync = off\nsynchronous_commit = off\n", db.port)
	host.AddConfigMap(cm)
	host.AddSecret(cred)
	host.AddSecret(su)
	db.pod = host.StatefulSetPod(db.sts)
	db.values(db.pod)
	db.app = podrun.Client{BinDir: host.BinDir, Port: db.port, User: string(cred.Data["username"]), Password: string(cred.Data["password"]), Database: string(cred.Data["database"])}
	db.su = podrun.Client{BinDir: host.BinDir, Port: db.port, User: string(su.Data["username"]), Password: string(su.Data["password"]), Database: "postgres"}
	t.Cleanup(func() {
		// A server the test left running (a failed check) must not outlive it.
		if _, err := os.Stat(filepath.Join(db.pgdata(), "postmaster.pid")); err == nil {
			db.pod.Exec(containerName, []string{"pg_ctl", "stop", "--mode=immediate", "--pgdata=" + pgdataPath}, 30*time.Second)
		}
	})
	return db
}

// values maps the cluster's names in pod's env onto this machine.
func (db *pgDatabase) values(pod *podrun.Pod) {
	pod.Values[db.d.host()] = "127.0.0.1"
	pod.Values[strconv.Itoa(port)] = strconv.Itoa(db.port)
}

func (db *pgDatabase) pgdata() string { return db.pod.HostPath(containerName, pgdataPath) }

// start runs the init container, then starts the server container and waits
// for it to accept connections; it fails the test if either fails.
func (db *pgDatabase) start() podrun.Result {
	db.t.Helper()
	r := db.pod.Run(initContainerName, 3*time.Minute)
	if r.Code != 0 {
		db.t.Fatalf("init container of %s exited %d:\n%s", db.parent.Name, r.Code, r.Log)
	}
	db.server = db.pod.Start(containerName)
	if err := db.app.WaitReady(time.Minute); err != nil {
		db.t.Fatalf("%v; server log:\n%s", err, db.server.Log())
	}
	return r
}

// stop runs the preStop hook as the kubelet would, then waits for the server
// container to end; it returns the hook's result and the container's status.
func (db *pgDatabase) stop() (podrun.Result, int) {
	db.t.Helper()
	r := db.pod.Exec(containerName, db.pod.Container(containerName).Lifecycle.PreStop.Exec.Command, time.Minute)
	code, err := db.server.Wait(30 * time.Second)
	if err != nil {
		db.t.Fatalf("server container after preStop: %v; log:\n%s", err, db.server.Log())
	}
	return r, code
}

// backupPod maps a backup Job's pod onto the host.
func (db *pgDatabase) backupPod(name string, spec batchv1.JobSpec) *podrun.Pod {
	pod := db.host.Pod(name, spec.Template.Spec)
	db.values(pod)
	return pod
}

// refusesWrongPasswords checks that each client's role, with a wrong
// password, is refused over 127.0.0.1.
func refusesWrongPasswords(t *testing.T, clients ...podrun.Client) {
	t.Helper()
	for _, c := range clients {
		wrong := c
		wrong.Password += "x"
		if _, err := wrong.Query("SELECT 1"); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
			t.Errorf("%s with a wrong password over 127.0.0.1: %v, want password authentication failed", c.User, err)
		}
	}
}

func requireHost(t *testing.T) *podrun.Host {
	t.Helper()
	return podrun.NewHost(t, podrun.RequirePostgres(t))
}

// stubSleep is a directory with a sleep that returns at once: the backup's
// five minutes of waiting for a server take no time.
func stubSleep(t *testing.T, host *podrun.Host) string {
	t.Helper()
	dir := filepath.Join(host.Root, "stub-sleep")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sleep"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestScriptsConfigAcceptedAtEverySize starts one Database at each size in
// turn on the same volumes, as a size change rolls the pod: the first start
// runs initdb, each one runs the server with that size's postgresql.conf.
func TestScriptsConfigAcceptedAtEverySize(t *testing.T) {
	t.Parallel()
	host := requireHost(t)
	for _, size := range []dbv1.DatabaseSize{dbv1.SizeSmall, dbv1.SizeMedium, dbv1.SizeLarge} {
		t.Run(string(size), func(t *testing.T) {
			db := newPGDatabase(t, host, newDatabase(withSize(size), func(p *dbv1.Database) { p.Name = "sizes" }))
			r := db.start()
			t.Logf("%s: init and start in %s", size, r.Duration.Round(time.Millisecond))
			p := presets[size]
			got := db.su.MustQuery(db.t, "SELECT current_setting('shared_buffers') || ' ' || current_setting('max_connections') || ' ' || current_setting('work_mem') || ' ' || current_setting('max_wal_size')")
			if want := fmt.Sprintf("%s %d %s %s", p.sharedBuffers, p.maxConnections, p.workMem, p.maxWALSize); got != want {
				t.Errorf("settings %q, want %q from postgresql.conf", got, want)
			}
			if r, code := db.stop(); r.Code != 0 || code != 0 {
				t.Errorf("preStop exit %d, server exit %d, want 0 and 0:\n%s", r.Code, code, r.Log)
			}
		})
	}
}

// seedSQL is the source's data, made as app over TCP: a few thousand rows,
// a view, a sequence and a large object.
const seedSQL = `
CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), tags text[]);
INSERT INTO items SELECT g, 'item ' || g, g * 1.25, ARRAY['t' || (g % 7)] FROM generate_series(1, 5000) g;
CREATE VIEW expensive AS SELECT id, name FROM items WHERE price > 6000;
CREATE SEQUENCE order_no START 1000;
SELECT nextval('order_no') FROM generate_series(1, 42);
SELECT lo_from_bytea(424242, convert_to(repeat('large object ', 1000), 'UTF8'));
`

// manySQL makes 1,500 more tables: restored in one transaction, they would
// run out of lock slots (max_locks_per_transaction 64 failed at about 1,300).
const manySQL = `
SET statement_timeout = 0;
DO $$ BEGIN FOR i IN 1..1500 LOOP EXECUTE format('CREATE TABLE many_%s (v text)', i); END LOOP; END $$;
INSERT INTO many_1500 VALUES ('last');
`

// globalsSQL is what the superuser adds: a role without a password, its
// grant, a database setting and a role setting in the database.
const globalsSQL = `
CREATE ROLE reporting NOLOGIN;
GRANT SELECT ON items TO reporting;
GRANT USAGE ON SEQUENCE order_no TO reporting;
ALTER DATABASE app SET statement_timeout = '17s';
ALTER ROLE reporting IN DATABASE app SET work_mem = '3MB';
`

// fingerprintSQL describes the data: everything a restore must give back.
const fingerprintSQL = `
SELECT 'items ' || count(*) || ' ' || md5(string_agg(i::text, '|' ORDER BY id)) FROM items i;
SELECT 'view ' || count(*) || ' ' || md5(string_agg(e::text, '|' ORDER BY id)) FROM expensive e;
SELECT 'sequence ' || last_value || ' ' || is_called FROM order_no;
SELECT 'large object ' || md5(lo_get(424242));
SELECT 'tables ' || count(*) FROM pg_tables WHERE schemaname = 'public';
SELECT 'many_1500 ' || (SELECT count(*) FROM pg_class WHERE relname = 'many_1500');
SELECT 'owners ' || string_agg(DISTINCT tableowner, ',') FROM pg_tables WHERE schemaname = 'public';
SELECT 'reporting may select items ' || has_table_privilege('reporting', 'items', 'SELECT');
SELECT 'reporting may use order_no ' || has_sequence_privilege('reporting', 'order_no', 'USAGE');
SELECT 'database settings ' || string_agg(coalesce(r.rolname, '*') || ':' || array_to_string(s.setconfig, ','), ' ' ORDER BY r.rolname NULLS FIRST)
  FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase AND d.datname = current_database() LEFT JOIN pg_roles r ON r.oid = s.setrole;
SELECT 'database owner ' || pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database();
SELECT 'app superuser ' || rolsuper FROM pg_roles WHERE rolname = 'app';
`

// backups lists the backups volume.
func backupFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func writeAs(t *testing.T, path string, data []byte, like string) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(like)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if err := os.Chown(path, int(st.Uid), int(st.Gid)); err != nil {
		t.Fatal(err)
	}
}

func dumpsOf(names []string, suffix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			out = append(out, n)
		}
	}
	return out
}

// TestScriptsBackupAndRestore is the data path of one Database, in order.
func TestScriptsBackupAndRestore(t *testing.T) {
	t.Parallel()
	host := requireHost(t)
	start := time.Now()
	src := newPGDatabase(t, host, newDatabase(withBackup("0 2 * * *", 2), withPolicy(dbv1.DeletionSnapshot)))
	src.start()
	t.Logf("source initialised and started in %s", time.Since(start).Round(time.Millisecond))

	t.Run("CredentialsOverTCPWithScram", func(t *testing.T) {
		if got := src.app.MustQuery(src.t, "SELECT current_user || ' ' || (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"); got != "app false" {
			t.Errorf("app connects as %q, want app, not a superuser", got)
		}
		if got := src.su.MustQuery(src.t, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"); got != "t" {
			t.Errorf("the superuser Secret's role: rolsuper %q, want t", got)
		}
		if got := src.su.MustQuery(src.t, "SELECT string_agg(DISTINCT auth_method, ',') FROM pg_hba_file_rules WHERE type = 'host'"); got != "scram-sha-256" {
			t.Errorf("pg_hba TCP methods %q, want scram-sha-256 only", got)
		}
		refusesWrongPasswords(t, src.app, src.su)
	})

	seedStart := time.Now()
	src.app.MustQuery(src.t, seedSQL)
	podrun.Client{BinDir: src.su.BinDir, Port: src.port, User: src.su.User, Password: src.su.Password, Database: "app"}.MustQuery(src.t, globalsSQL)
	wantFinal := src.app.MustQuery(src.t, fingerprintSQL)
	t.Logf("seeded in %s:\n%s", time.Since(seedStart).Round(time.Millisecond), wantFinal)

	backupsDir := host.Claim(backupsClaimName(src.parent.Name))
	runBackup := func(t *testing.T, name string, spec batchv1.JobSpec) podrun.Result {
		t.Helper()
		r := src.backupPod(name, spec).Run("backup", 2*time.Minute)
		if r.Code != 0 {
			t.Fatalf("backup %s exited %d:\n%s", name, r.Code, r.Log)
		}
		t.Logf("backup %s: %s in %s", name, strings.TrimSpace(r.Stdout), r.Duration.Round(time.Millisecond))
		return r
	}
	// The final backup of deletionPolicy Snapshot, taken here, before the
	// 1,500 tables, so restoring it stays quick; the scheduled backups after
	// it must never prune it.
	runBackup(t, "final-backup", finalBackupJob(src.d).Spec)
	finalDumps := dumpsOf(backupFiles(t, backupsDir), "-final.dump")
	if len(finalDumps) != 1 {
		t.Fatalf("backups %v: want one final dump", backupFiles(t, backupsDir))
	}
	finalDump := finalDumps[0]

	manyStart := time.Now()
	src.app.MustQuery(src.t, manySQL)
	want := src.app.MustQuery(src.t, fingerprintSQL)
	t.Logf("1,500 tables made in %s:\n%s", time.Since(manyStart).Round(time.Millisecond), want)

	// Earlier scheduled dumps, and a hand-copied one that sorts last by name.
	oldDumps := []string{"20200101T020000Z.dump", "20200101T020000Z.globals.sql", "20200102T020000Z.dump", "20200102T020000Z.globals.sql"}
	for _, name := range oldDumps {
		writeAs(t, filepath.Join(backupsDir, name), []byte("PGDMP old"), backupsDir)
	}
	stray := filepath.Join(backupsDir, "pre-migration.dump")
	writeAs(t, stray, []byte("not a dump of this database"), backupsDir)

	t.Run("ScheduledBackupsKeepRetentionAndIgnoreStrayFiles", func(t *testing.T) {
		time.Sleep(1100 * time.Millisecond) // dumps are named by the second
		runBackup(t, "backup-1", src.cronJob.Spec.JobTemplate.Spec)
		time.Sleep(1100 * time.Millisecond)
		runBackup(t, "backup-2", src.cronJob.Spec.JobTemplate.Spec)
		files := backupFiles(t, backupsDir)
		scheduled := dumpsOf(files, "Z.dump")
		if len(scheduled) != 2 || strings.HasPrefix(scheduled[0], "2020") || !slices.Contains(files, strings.TrimSuffix(scheduled[0], ".dump")+".globals.sql") {
			t.Errorf("backups %v, want the 2 new scheduled dumps (retention 2) with their globals, the old ones deleted", files)
		}
		if !slices.Contains(files, finalDump) || !slices.Contains(files, "pre-migration.dump") {
			t.Errorf("backups %v: the final dump and pre-migration.dump must be neither counted nor deleted", files)
		}
		if data, err := os.ReadFile(stray); err != nil || string(data) != "not a dump of this database" {
			t.Errorf("the stray file was touched: %q %v", data, err)
		}
	})

	restored := func(t *testing.T, name, backup, want string) *pgDatabase {
		t.Helper()
		dst := newPGDatabase(t, host, restoreTarget(name, src.parent.Name, backup))
		began := time.Now()
		r := dst.start()
		t.Logf("restore of %s into %s: %s", backup, name, time.Since(began).Round(time.Millisecond))
		if !strings.Contains(r.Log, "init: restored ") {
			t.Errorf("init log lacks the restore:\n%s", r.Log)
		}
		if diff := cmp.Diff(want, dst.app.MustQuery(dst.t, fingerprintSQL)); diff != "" {
			t.Errorf("restored data differs (-want +got):\n%s", diff)
		}
		return dst
	}

	t.Run("LatestRestoresIdenticalData", func(t *testing.T) {
		dst := restored(t, "copy", dbv1.LatestBackup, want)
		if got := dst.app.MustQuery(dst.t, "SHOW statement_timeout"); got != "17s" {
			t.Errorf("statement_timeout in the copy %q, want the database setting 17s", got)
		}
		if r, code := dst.stop(); r.Code != 0 || code != 0 {
			t.Errorf("preStop exit %d, server exit %d:\n%s", r.Code, code, r.Log)
		}
	})

	t.Run("FinalBackupRestores", func(t *testing.T) {
		restored(t, "copy-final", finalDump, wantFinal)
	})

	t.Run("FailedBackupSaysWhyAndKeepsOlderDumps", func(t *testing.T) {
		before := backupFiles(t, backupsDir)
		pod := src.backupPod("backup-wrong-password", src.cronJob.Spec.JobTemplate.Spec)
		pod.Values[src.su.Password] = "wrong"
		r := pod.Run("backup", time.Minute)
		if r.Code == 0 || !strings.Contains(r.Message(), "password authentication failed") || !strings.Contains(r.Message(), "FAILED") {
			t.Errorf("backup with a wrong password: exit %d, termination message %q; want non-zero and the reason", r.Code, r.Message())
		}
		unreachable := src.backupPod("backup-no-server", src.cronJob.Spec.JobTemplate.Spec)
		unreachable.Values[strconv.Itoa(port)] = strconv.Itoa(podrun.FreePort(t))
		unreachable.Path = []string{stubSleep(t, host)}
		r = unreachable.Run("backup", time.Minute)
		if r.Code == 0 || !strings.Contains(r.Message(), "did not accept connections for 5 minutes") {
			t.Errorf("backup without a server: exit %d, termination message %q; want non-zero and the reason", r.Code, r.Message())
		}
		if after := backupFiles(t, backupsDir); !slices.Equal(before, after) {
			t.Errorf("failed backups changed the volume: %v -> %v", before, after)
		}
	})

	t.Run("PreStopExitsZeroAfterCleanShutdown", func(t *testing.T) {
		r, code := src.stop()
		if r.Code != 0 || code != 0 {
			t.Errorf("preStop exit %d, server exit %d, want 0 and 0:\n%s\n%s", r.Code, code, r.Log, src.server.Log())
		}
		if !strings.Contains(src.server.Log(), "database system is shut down") || !strings.Contains(src.server.Log(), "fast shutdown request") {
			t.Errorf("server log lacks a fast, clean shutdown:\n%s", src.server.Log())
		}
	})

	t.Run("MissingOrCorruptBackupNeverServesAnEmptyDatabase", func(t *testing.T) {
		for name, backup := range map[string]string{"copy-missing": "20990101T000000Z.dump", "copy-garbage": "20300101T000000Z.dump"} {
			if backup == "20300101T000000Z.dump" {
				writeAs(t, filepath.Join(backupsDir, backup), []byte("PGDMP this is not a dump"), backupsDir)
			}
			dst := newPGDatabase(t, host, restoreTarget(name, src.parent.Name, backup))
			r := dst.pod.Run(initContainerName, time.Minute)
			if r.Code == 0 || !strings.Contains(r.Message(), "FAILED") {
				t.Errorf("%s: init exit %d, message %q: want a loud failure", backup, r.Code, r.Message())
			}
			if _, err := os.Stat(filepath.Join(dst.pgdata(), "PG_VERSION")); err == nil {
				t.Errorf("%s: a database was made although the backup could not be read", backup)
			}
			t.Logf("%s: %s", backup, strings.TrimSpace(r.Message()))
		}
		// A dump whose table of contents reads but whose data is damaged.
		damaged, err := os.ReadFile(filepath.Join(backupsDir, finalDump))
		if err != nil {
			t.Fatal(err)
		}
		for i := len(damaged) - 3000; i < len(damaged)-1000; i++ {
			damaged[i] = 0xa5
		}
		writeAs(t, filepath.Join(backupsDir, "20310101T000000Z.dump"), damaged, backupsDir)
		dst := newPGDatabase(t, host, restoreTarget("copy-truncated", src.parent.Name, "20310101T000000Z.dump"))
		if r := dst.pod.Run(initContainerName, 2*time.Minute); r.Code == 0 || !strings.Contains(r.Message(), "never served") {
			t.Errorf("damaged dump: init exit %d, message %q: want a failed restore", r.Code, r.Message())
		} else {
			t.Logf("damaged dump: %s", r.Message())
		}
		// A restart: the init container runs again, the server container too.
		if r := dst.pod.Run(initContainerName, time.Minute); r.Code == 0 || !strings.Contains(r.Message(), "did not finish") {
			t.Errorf("init after a failed restore: exit %d, message %q: want a refusal", r.Code, r.Message())
		}
		if r := dst.pod.Run(containerName, time.Minute); r.Code == 0 || !strings.Contains(r.Message(), "refusing to start on partial data") {
			t.Errorf("server after a failed restore: exit %d, message %q: want a refusal", r.Code, r.Message())
		}
	})
	t.Logf("whole PostgreSQL data path: %s", time.Since(start).Round(time.Millisecond))
}

// restoreTarget is Database name restoring backup of Database source.
func restoreTarget(name, source, backup string) *dbv1.Database {
	return newDatabase(withRestore(source, backup), func(p *dbv1.Database) { p.Name = name })
}

// TestScriptsRecreatedDatabaseOpensRetainedData: a Database created again
// under its name (a new UID, so new passwords) over the data an earlier one
// left (a Retain deletion) opens it with its own Secrets, and the earlier
// Secrets' passwords no longer do.
func TestScriptsRecreatedDatabaseOpensRetainedData(t *testing.T) {
	t.Parallel()
	host := requireHost(t)
	name := func(p *dbv1.Database) { p.Name = "recreated" }
	db := newPGDatabase(t, host, newDatabase(name))
	db.start()
	db.app.MustQuery(t, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('from the first Database')")
	if r, code := db.stop(); r.Code != 0 || code != 0 {
		t.Fatalf("preStop exit %d, server exit %d, want 0 and 0:\n%s", r.Code, code, r.Log)
	}
	before := []podrun.Client{db.app, db.su}

	again := newDatabase(name, func(p *dbv1.Database) { p.UID = "11111111-2222-4333-8444-555555555555" })
	resp := mustSync(t, newRequest(t, again, false))
	cred := responseChild[corev1.Secret](t, resp, "Secret", db.d.secretName())
	su := responseChild[corev1.Secret](t, resp, "Secret", db.d.superuserSecretName())
	if cred == nil || su == nil {
		t.Fatal("the hook rendered no credentials or superuser Secret for the new Database")
	}
	if string(cred.Data["password"]) == db.app.Password || string(su.Data["password"]) == db.su.Password {
		t.Fatal("the Database created again got a password of the earlier one")
	}
	host.AddSecret(cred)
	host.AddSecret(su)
	db.app.Password = string(cred.Data["password"])
	db.su.Password = string(su.Data["password"])
	db.start() // the init container again, now on the kept data
	if got := db.app.MustQuery(t, "SELECT v FROM kept"); got != "from the first Database" {
		t.Errorf("kept row %q, want the first Database's", got)
	}
	if got := db.su.MustQuery(t, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"); got != "t" {
		t.Errorf("the new superuser Secret's role: rolsuper %q, want t", got)
	}
	for _, old := range before {
		if _, err := old.Query("SELECT 1"); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
			t.Errorf("%s with the earlier Database's password: %v, want password authentication failed", old.User, err)
		}
	}
	if r, code := db.stop(); r.Code != 0 || code != 0 {
		t.Errorf("preStop exit %d, server exit %d, want 0 and 0:\n%s", r.Code, code, r.Log)
	}
}

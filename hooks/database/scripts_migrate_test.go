package database

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	dbv1 "metahooks/api/v1"
)

// The upgrade of a data volume made by the old pods (scripts/migrate.sh):
// the official image's entrypoint ran initdb with POSTGRES_USER=app, so app
// is the bootstrap superuser and there is no postgres role.

// oldEntrypoint is what the old image's docker-entrypoint.sh did on an empty
// volume, in the init container's environment: initdb with the application
// role as its user and password, a temporary server on the socket only, the
// database POSTGRES_DB; then it runs the SQL file $1 as app, the SQL file $2
// printing its rows (unaligned, tuples only), and stops.
const oldEntrypoint = `set -eu
mkdir -p "$PGDATA"
chmod 700 "$PGDATA"
printf '%s\n' "$APP_PASSWORD" >"$PG_RUN_DIR/pwfile"
initdb --pgdata="$PGDATA" --username="$APP_USER" --pwfile="$PG_RUN_DIR/pwfile" --encoding=UTF8 --locale=C.UTF-8 >/dev/null 2>&1
rm "$PG_RUN_DIR/pwfile"
printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
pg_ctl start --pgdata="$PGDATA" --wait --silent -o "-c listen_addresses='' -c unix_socket_directories=$PG_RUN_DIR" >/dev/null
q() { psql --no-psqlrc --quiet --tuples-only --no-align --set=ON_ERROR_STOP=1 --host="$PG_RUN_DIR" --username="$APP_USER" "$@"; }
q --dbname=postgres --command="CREATE DATABASE \"$APP_DATABASE\""
q --dbname="$APP_DATABASE" --file="$1" >/dev/null
q --dbname="$APP_DATABASE" --file="$2"
pg_ctl stop --pgdata="$PGDATA" --mode=fast --wait --silent
`

// oldObjectsSQL is what an application made as the old app, a superuser:
// one object of each kind the upgrade moves, data, grants to another role and
// a membership of app.
const oldObjectsSQL = `
CREATE SCHEMA sales;
CREATE TABLE sales.orders (id serial PRIMARY KEY, item text NOT NULL, qty int);
INSERT INTO sales.orders (item, qty) SELECT 'item ' || g, g % 17 FROM generate_series(1, 3000) g;
CREATE TABLE items (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text);
INSERT INTO items (name) SELECT 'n' || g FROM generate_series(1, 500) g;
CREATE TABLE measurements (day date, v int) PARTITION BY RANGE (day);
CREATE TABLE measurements_2026 PARTITION OF measurements FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO measurements SELECT date '2026-01-01' + g, g FROM generate_series(0, 99) g;
CREATE SEQUENCE order_no START 1000;
SELECT nextval('order_no') FROM generate_series(1, 42);
CREATE VIEW big_orders AS SELECT id, item FROM sales.orders WHERE qty > 10;
CREATE MATERIALIZED VIEW order_totals AS SELECT qty, count(*) AS n FROM sales.orders GROUP BY qty;
CREATE FUNCTION sales.total() RETURNS bigint LANGUAGE sql AS 'SELECT sum(qty) FROM sales.orders';
CREATE PROCEDURE sales.add_order(text) LANGUAGE sql AS 'INSERT INTO sales.orders (item, qty) VALUES ($1, 1)';
CREATE AGGREGATE sales.sum_all(int) (sfunc = int4pl, stype = int);
CREATE TYPE mood AS ENUM ('ok', 'sad');
CREATE TYPE pair AS (a int, b text);
CREATE DOMAIN positive AS int CHECK (VALUE > 0);
CREATE TYPE floatrange AS RANGE (subtype = float8);
CREATE COLLATION sales.bytes FROM "C";
CREATE TEXT SEARCH CONFIGURATION sales.plain (COPY = simple);
CREATE STATISTICS sales.orders_stats (dependencies) ON id, qty FROM sales.orders;
SELECT lo_from_bytea(424242, convert_to(repeat('large object ', 500), 'UTF8'));
CREATE ROLE reporting NOLOGIN;
CREATE ROLE readers NOLOGIN;
GRANT readers TO app;
GRANT USAGE ON SCHEMA sales TO reporting;
GRANT SELECT ON sales.orders, items TO reporting;
`

// oldFingerprintSQL describes the data the upgrade must keep.
const oldFingerprintSQL = `
SELECT 'orders ' || count(*) || ' ' || md5(string_agg(o::text, '|' ORDER BY id)) FROM sales.orders o;
SELECT 'items ' || count(*) || ' ' || md5(string_agg(i::text, '|' ORDER BY id)) FROM items i;
SELECT 'measurements ' || count(*) || ' ' || sum(v) FROM measurements;
SELECT 'order_no ' || last_value FROM order_no;
SELECT 'big orders ' || count(*) FROM big_orders;
SELECT 'totals ' || sum(n) FROM order_totals;
SELECT 'total ' || sales.total();
SELECT 'large object ' || md5(lo_get(424242));
SELECT 'reporting may select orders ' || has_table_privilege('reporting', 'sales.orders', 'SELECT');
SELECT 'reporting may use sales ' || has_schema_privilege('reporting', 'sales', 'USAGE');
`

// ownersSQL lists every object of the database made after initdb (but this
// session's temporary schemas) with its owner and whether that owner is the
// bootstrap role.
const ownersSQL = `
SELECT i.type || ' ' || i.identity || ' owner ' || pg_get_userbyid(o.owner) || CASE WHEN o.owner = 10 THEN ' (bootstrap)' ELSE '' END
FROM (
  SELECT 'pg_namespace'::regclass AS classid, oid AS objid, nspowner AS owner FROM pg_namespace WHERE nspname !~ '^pg_(toast_)?temp_'
  UNION ALL SELECT 'pg_class'::regclass, oid, relowner FROM pg_class WHERE relkind NOT IN ('t', 'i')
  UNION ALL SELECT 'pg_proc'::regclass, oid, proowner FROM pg_proc
  UNION ALL SELECT 'pg_type'::regclass, oid, typowner FROM pg_type WHERE typrelid = 0 AND typelem = 0
  UNION ALL SELECT 'pg_collation'::regclass, oid, collowner FROM pg_collation
  UNION ALL SELECT 'pg_ts_config'::regclass, oid, cfgowner FROM pg_ts_config
  UNION ALL SELECT 'pg_statistic_ext'::regclass, oid, stxowner FROM pg_statistic_ext
  UNION ALL SELECT 'pg_largeobject'::regclass, oid, lomowner FROM pg_largeobject_metadata
) o, pg_identify_object(o.classid, o.objid, 0) i
WHERE o.objid >= 16384
ORDER BY 1;
`

const rolesSQL = `SELECT string_agg(rolname || CASE WHEN oid = 10 THEN ' bootstrap' ELSE '' END || CASE WHEN rolsuper THEN ' superuser' ELSE '' END ||
  CASE WHEN rolcanlogin THEN ' login' ELSE '' END || coalesce(' member of ' || (SELECT string_agg(r.rolname, ',' ORDER BY r.rolname)
  FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid WHERE m.member = a.oid), ''), '; ' ORDER BY rolname)
FROM pg_roles a WHERE rolname !~ '^pg_'`

// legacyDatabase renders a Database and fills its data volume as the old
// pods did; it returns the fingerprint and owners the old data had.
func legacyDatabase(t *testing.T, name string) (db *pgDatabase, fingerprint, owners string) {
	t.Helper()
	host := requireHost(t)
	db = newPGDatabase(t, host, newDatabase(func(p *dbv1.Database) { p.Name = name }))
	dir := filepath.Join(host.Root, "sql")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, sql := range map[string]string{"objects.sql": oldObjectsSQL, "fingerprint.sql": oldFingerprintSQL + ownersSQL} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := db.pod.Exec(initContainerName, []string{"/bin/sh", "-c", oldEntrypoint, "old-entrypoint",
		filepath.Join(dir, "objects.sql"), filepath.Join(dir, "fingerprint.sql")}, 2*time.Minute)
	if r.Code != 0 {
		t.Fatalf("the old entrypoint exited %d:\n%s", r.Code, r.Log)
	}
	out := strings.TrimSpace(r.Stdout)
	n := strings.Count(strings.TrimSpace(oldFingerprintSQL), "\n") + 1
	lines := strings.Split(out, "\n")
	return db, strings.Join(lines[:n], "\n"), strings.Join(lines[n:], "\n")
}

// checkUpgraded checks the data and the owners of an upgraded database: the
// data as it was, every object of the old app now the new app's and nobody
// else's (the same list without the bootstrap mark), which it returns.
func checkUpgraded(t *testing.T, db *pgDatabase, wantData, oldOwners string) string {
	t.Helper()
	if got := db.app.MustQuery(db.t, oldFingerprintSQL); got != wantData {
		t.Errorf("data after the upgrade (-want +got):\n%s", cmp.Diff(wantData, got))
	}
	wantOwners := strings.ReplaceAll(oldOwners, " owner app (bootstrap)", " owner app")
	if got := db.app.MustQuery(db.t, ownersSQL); got != wantOwners {
		t.Errorf("owners after the upgrade (-want +got):\n%s", cmp.Diff(wantOwners, got))
	}
	return wantOwners
}

// TestScriptsUpgradeOldVolume starts the rendered pod on a volume the old
// pods made: the init container renames the bootstrap role app to postgres,
// makes a new app that owns every object and is not a superuser, keeps the
// data, and a second start changes nothing.
func TestScriptsUpgradeOldVolume(t *testing.T) {
	t.Parallel()
	db, wantData, oldOwners := legacyDatabase(t, "legacy")
	if !strings.Contains(oldOwners, "table sales.orders owner app (bootstrap)") {
		t.Fatalf("the old volume's objects are not the bootstrap app's:\n%s", oldOwners)
	}
	r := db.start()
	t.Logf("upgrade and start in %s:\n%s", r.Duration.Round(time.Millisecond), r.Log)
	for _, want := range []string{"init: upgrade: renamed the bootstrap role app to postgres, created role app", "init: upgrade: done"} {
		if !strings.Contains(r.Log, want) {
			t.Errorf("the init container's log lacks %q", want)
		}
	}
	if strings.Contains(r.Log, "left with") {
		t.Errorf("the upgrade left objects with the bootstrap role:\n%s", r.Log)
	}

	wantOwners := checkUpgraded(t, db, wantData, oldOwners)
	wantRoles := "app login member of readers; postgres bootstrap superuser login; readers; reporting"
	if got := db.su.MustQuery(db.t, rolesSQL); got != wantRoles {
		t.Errorf("roles %q, want %q", got, wantRoles)
	}
	if got := db.su.MustQuery(db.t, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'app'"); got != "app" {
		t.Errorf("database app owned by %q, want app", got)
	}
	// What an owner can do, and a superuser only could before.
	db.app.MustQuery(db.t, `REFRESH MATERIALIZED VIEW order_totals; CALL sales.add_order('after'); INSERT INTO items (name) VALUES ('x');
SELECT nextval('order_no'), nextval('sales.orders_id_seq'); ALTER TABLE measurements ADD COLUMN note text; SELECT lo_put(424242, 0, '\x41')`)
	if _, err := db.app.Query("CREATE ROLE intruder SUPERUSER"); err == nil || !strings.Contains(err.Error(), "must be superuser") {
		t.Errorf("app creating a superuser: %v, want must be superuser", err)
	}
	refusesWrongPasswords(t, db.app, db.su)
	rolesWithOIDs := "SELECT string_agg(oid || ' ' || rolname || ' ' || rolsuper, ', ' ORDER BY oid) FROM pg_roles"
	wantRoles, wantOwners = db.su.MustQuery(db.t, rolesWithOIDs), db.app.MustQuery(db.t, ownersSQL)
	if r, code := db.stop(); r.Code != 0 || code != 0 {
		t.Fatalf("preStop exit %d, server exit %d:\n%s", r.Code, code, r.Log)
	}

	// A second start finds the new layout: nothing to upgrade, nothing moved.
	r = db.start()
	if strings.Contains(r.Log, "upgrade") {
		t.Errorf("the second start upgraded again:\n%s", r.Log)
	}
	if got := db.su.MustQuery(db.t, rolesWithOIDs); got != wantRoles {
		t.Errorf("roles after a second start (-want +got):\n%s", cmp.Diff(wantRoles, got))
	}
	if got := db.app.MustQuery(db.t, ownersSQL); got != wantOwners {
		t.Errorf("owners after a second start (-want +got):\n%s", cmp.Diff(wantOwners, got))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db.pgdata()), "migration-incomplete")); !os.IsNotExist(err) {
		t.Errorf("the upgrade marker is still there: %v", err)
	}
}

// TestScriptsUpgradeInterrupted fails the upgrade between its two steps (the
// role renamed, the objects not yet moved), as a killed pod would: the init
// container fails saying why, the server refuses to serve the half-upgraded
// data, and the next start finishes the upgrade with nothing lost.
func TestScriptsUpgradeInterrupted(t *testing.T) {
	t.Parallel()
	db, wantData, oldOwners := legacyDatabase(t, "halfway")
	stub := filepath.Join(db.host.Root, "stub-psql")
	if err := os.MkdirAll(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	// psql, failing the one transaction that moves the objects.
	script := "#!/bin/sh\ncase \" $* \" in *\" --single-transaction \"*\" --dbname=app \"*) echo 'psql: server closed the connection unexpectedly' >&2; exit 2 ;; esac\nexec " +
		filepath.Join(db.host.BinDir, "psql") + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(stub, "psql"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	db.pod.Path = []string{stub}
	r := db.pod.Run(initContainerName, 2*time.Minute)
	if want := "init: FAILED: upgrade: cannot give the objects of app to the new app (rolled back; they stay with postgres, nothing is served until this succeeds): psql: server closed the connection unexpectedly"; r.Code != 1 || !strings.Contains(r.Message(), want) {
		t.Fatalf("interrupted upgrade: exit %d, termination message:\n%s\nwant exit 1 and %q", r.Code, r.Message(), want)
	}
	if r := db.pod.Run(containerName, 30*time.Second); r.Code != 1 || !strings.Contains(r.Log, "server: FAILED: the upgrade of the roles of") {
		t.Fatalf("server on half-upgraded data: exit %d, want 1 and a refusal:\n%s", r.Code, r.Log)
	}

	db.pod.Path = nil
	r = db.start()
	if !strings.Contains(r.Log, "init: resuming the upgrade") || !strings.Contains(r.Log, "init: upgrade: done") {
		t.Errorf("the next start did not finish the upgrade:\n%s", r.Log)
	}
	checkUpgraded(t, db, wantData, oldOwners)
	if got := db.su.MustQuery(db.t, "SELECT count(*) FROM pg_roles WHERE rolname = 'metahooks_migration'"); got != "0" {
		t.Errorf("the temporary superuser is left: %s", got)
	}
}

// TestScriptsUpgradeRefused: a volume whose bootstrap app has a postgres
// role beside it cannot be renamed; the init container says so and changes
// nothing, so an administrator can fix it and start again.
func TestScriptsUpgradeRefused(t *testing.T) {
	t.Parallel()
	host := requireHost(t)
	db := newPGDatabase(t, host, newDatabase(func(p *dbv1.Database) { p.Name = "clash" }))
	dir := filepath.Join(host.Root, "sql")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "objects.sql"), []byte("CREATE ROLE postgres LOGIN;\nCREATE TABLE kept (v int);\nINSERT INTO kept VALUES (7);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "check.sql"), []byte(rolesSQL+";\nSELECT sum(v) FROM kept;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func() string {
		t.Helper()
		r := db.pod.Exec(initContainerName, []string{"/bin/sh", "-c", `set -eu
pg_ctl start --pgdata="$PGDATA" --wait --silent -o "-c listen_addresses='' -c unix_socket_directories=$PG_RUN_DIR" >/dev/null
psql --no-psqlrc --quiet --tuples-only --no-align --host="$PG_RUN_DIR" --username="$APP_USER" --dbname="$APP_DATABASE" --file="$1"
pg_ctl stop --pgdata="$PGDATA" --mode=fast --wait --silent`, "check", filepath.Join(dir, "check.sql")}, time.Minute)
		if r.Code != 0 {
			t.Fatalf("check exited %d:\n%s", r.Code, r.Log)
		}
		return r.Stdout
	}
	r := db.pod.Exec(initContainerName, []string{"/bin/sh", "-c", oldEntrypoint, "old-entrypoint",
		filepath.Join(dir, "objects.sql"), filepath.Join(dir, "check.sql")}, 2*time.Minute)
	if r.Code != 0 {
		t.Fatalf("the old entrypoint exited %d:\n%s", r.Code, r.Log)
	}
	before := r.Stdout
	if want := "app bootstrap superuser login; postgres login\n7\n"; before != want {
		t.Fatalf("old volume: %q, want %q", before, want)
	}
	r = db.pod.Run(initContainerName, 2*time.Minute)
	if want := "init: FAILED: " + db.pgdata() + " has a role postgres beside the bootstrap superuser app: the upgrade cannot rename app to postgres; nothing was changed"; r.Code != 1 || !strings.Contains(r.Message(), want) {
		t.Fatalf("init on a clashing volume: exit %d, termination message:\n%s\nwant exit 1 and %q", r.Code, r.Message(), want)
	}
	if got := check(); got != before {
		t.Errorf("the refused upgrade changed the volume: %q, want %q", got, before)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db.pgdata()), "migration-incomplete")); !os.IsNotExist(err) {
		t.Errorf("a refused upgrade left its marker: %v", err)
	}
}

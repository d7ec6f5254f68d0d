# init.sh: the init container "init" of the server pod. It prepares PGDATA
# with PostgreSQL's own programs, whatever the image's entrypoint does:
#   1. checks that initdb, pg_ctl, postgres, psql and pg_restore are there;
#   2. refuses a PGDATA left by a restore that did not finish, and a non-empty
#      directory that holds no database (it never touches unknown data);
#   3. on an empty PGDATA: initdb (superuser $SUPERUSER, local socket trust,
#      scram-sha-256 for TCP), then, when RESTORE_BACKUP is set, loads that
#      dump and the global objects saved beside it;
#   4. on a PGDATA made by the old pods ($APP_USER its bootstrap superuser),
#      upgrades the roles first (migrate.sh);
#   5. at every start, on a server that listens on a private socket only:
#      makes $APP_USER a login role that is NOT a superuser, owner of
#      $APP_DATABASE, and sets both passwords from the Secrets, so the Secrets
#      are the truth whatever PGDATA held. It fails loudly if it cannot.
# A restore writes the marker first and removes it only once pg_restore has
# succeeded, so a failed load is never served: pg_restore runs without
# --single-transaction (a transaction over thousands of tables runs out of
# lock slots), and the marker is the guard instead.
METAHOOKS_STEP=init
set -eu
umask 077
need_tools initdb pg_ctl postgres psql pg_restore
if command -v id >/dev/null 2>&1 && ! id -un >/dev/null 2>&1; then
	fail "uid $(id -u) has no entry in the image's /etc/passwd, and initdb needs one: use an image whose postgres user has uid 999, or an image providing one"
fi

# High availability (instances >= 2, instance.sh): a standby's PGDATA comes
# from the primary (a clone, or pg_rewind of a former primary), never from
# initdb; its roles and passwords are the primary's. A standby the record
# has made the primary is promoted by the server container.
if ha_enabled; then
	prepare_instance
	if [ -e "$PGDATA/standby.signal" ]; then
		say "ready ($ha_role; the record names $rec_primary the primary)"
		exit 0
	fi
fi

fresh=false
if [ -s "$PGDATA/PG_VERSION" ]; then
	if [ -e "$restore_marker" ]; then
		fail "an earlier restore into $PGDATA did not finish; refusing to start on partial data (empty the data volume to restore again)"
	fi
	say "$PGDATA holds a PostgreSQL $(cat "$PGDATA/PG_VERSION") database"
elif [ -d "$PGDATA" ] && [ -n "$(ls -A "$PGDATA")" ]; then
	fail "$PGDATA is not empty but holds no database; refusing to touch it"
else
	fresh=true
fi

dump=""
if $fresh && [ -n "${RESTORE_BACKUP:-}" ]; then
	if [ "$RESTORE_BACKUP" = latest ]; then
		# Only files named by the backup job's pattern count; anything else
		# on the volume (a hand-copied dump) is never "latest".
		name=$(ls -1 "$RESTORE_DIR" 2>/dev/null | grep -E '^[0-9]{8}T[0-9]{6}Z(-[a-z]+)?\.dump$' | LC_ALL=C sort | tail -n 1 || true)
	else
		name=$RESTORE_BACKUP
	fi
	if [ -z "$name" ] || [ ! -s "$RESTORE_DIR/$name" ]; then
		fail "backup $RESTORE_BACKUP not found on the backups volume of Database $RESTORE_DATABASE; no empty database is started in its place"
	fi
	dump="$RESTORE_DIR/$name"
	if ! err=$(pg_restore --list "$dump" 2>&1 >/dev/null); then
		fail "backup $name of Database $RESTORE_DATABASE is not a readable dump: $err"
	fi
	globals="${dump%.dump}.globals.sql"
fi

if $fresh; then
	[ -z "$dump" ] || : >"$restore_marker"
	mkdir -p "$PGDATA"
	chmod 700 "$PGDATA"
	say "initdb $PGDATA"
	initdb --pgdata="$PGDATA" --username="$SUPERUSER" --encoding=UTF8 --locale=C.UTF-8 \
		--auth-local=trust --auth-host=scram-sha-256 >/dev/null ||
		fail "initdb $PGDATA failed (its messages are above)"
fi

# The temporary server listens on a private socket only: nothing in or out
# of the pod can connect before the passwords are set. No commit waits for a
# standby there (none can connect).
sock=$(mktemp -d "$PG_RUN_DIR/init.XXXXXX")
stop_server() {
	pg_ctl stop --pgdata="$PGDATA" --mode=fast --wait --silent >/dev/null 2>&1 || true
	rm -rf "$sock"
}
trap stop_server EXIT
# shellcheck disable=SC2046
pg_ctl start --pgdata="$PGDATA" --wait --timeout=86400 --silent \
	-o "$(server_options "$sock") -c listen_addresses='' -c synchronous_standby_names=''" >"$sock/server.log" 2>&1 || {
	cat "$sock/server.log" >&2
	fail "the server did not start on $PGDATA (its log is above)"
}
export PGHOST="$sock"

sql() { psql --no-psqlrc --quiet --set=ON_ERROR_STOP=1 --username="$SUPERUSER" "$@"; }

# A PGDATA made by the old pods ($APP_USER its bootstrap superuser) is
# upgraded to the new roles first (migrate.sh).
$fresh || migrate_old_layout

if [ -n "$dump" ]; then
	say "restoring $dump"
	sql --dbname=postgres --command="CREATE ROLE $APP_USER LOGIN" >/dev/null
	if [ -s "$globals" ]; then
		say "restoring roles and grants from $(basename "$globals")"
		sql --dbname=postgres --file="$globals" >/dev/null || fail "cannot restore the global objects of $globals"
		# --create makes the database as dumped: owner, grants and settings.
		pg_restore --exit-on-error --create --username="$SUPERUSER" --dbname=postgres "$dump" ||
			fail "pg_restore of $dump failed; the partial database is never served (empty the data volume to try again)"
	else
		say "no $(basename "$globals"): an older dump; objects will be owned by $APP_USER, grants are not restored"
		sql --dbname=postgres --command="CREATE DATABASE $APP_DATABASE OWNER $APP_USER" >/dev/null
		pg_restore --exit-on-error --no-owner --no-acl --role="$APP_USER" --username="$SUPERUSER" --dbname="$APP_DATABASE" "$dump" ||
			fail "pg_restore of $dump failed; the partial database is never served (empty the data volume to try again)"
	fi
	rm -f "$restore_marker"
	say "restored $dump"
fi

# Roles and passwords, at every start. The statements are read from stdin
# (psql -c would not interpolate :'pw'), statement logging is off for the
# session, and psql's output is discarded: no password reaches a log.
if ! sql --dbname=postgres --set=app="$APP_USER" --set=db="$APP_DATABASE" \
	--set=app_pw="$APP_PASSWORD" --set=su_pw="$SUPERUSER_PASSWORD" >/dev/null 2>&1 <<'SQL'; then
SET log_statement = 'none';
SET log_min_duration_statement = -1;
SET log_min_error_statement = 'panic';
SELECT format('CREATE ROLE %I LOGIN', :'app') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'app')
\gexec
ALTER ROLE :"app" WITH LOGIN NOSUPERUSER NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'app_pw';
ALTER ROLE CURRENT_USER WITH PASSWORD :'su_pw';
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'app') WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db')
\gexec
ALTER DATABASE :"db" OWNER TO :"app";
SQL
	fail "cannot set the roles and passwords of $APP_USER and $SUPERUSER from the Secrets (is $SUPERUSER the superuser of this data?)"
fi
say "roles $APP_USER (owner of $APP_DATABASE, not a superuser) and $SUPERUSER have the passwords of the Secrets"
if ha_enabled; then
	ensure_replication_role
fi
stop_server
trap - EXIT
say "ready"

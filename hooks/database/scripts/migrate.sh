# migrate.sh: the upgrade of a PGDATA made by the old pods (the official
# image's entrypoint with POSTGRES_USER=$APP_USER): there the application
# role is the bootstrap superuser (OID 10) and no $SUPERUSER role exists. The
# bootstrap role cannot stop being a superuser (PostgreSQL 16 refuses
# ALTER ROLE ... NOSUPERUSER on it; 15 allows it, but the role would still own
# every system catalog and function, and pg_upgrade needs it a superuser), and
# REASSIGN OWNED refuses it. So migrate_old_layout, which init.sh calls on the
# temporary server before it sets the roles and passwords:
#   1. renames the bootstrap role to $SUPERUSER and creates a new login role
#      $APP_USER (not a superuser), moving the old role's memberships to it, in one
#      transaction, as a temporary superuser (no session may rename itself);
#   2. in one transaction in $APP_DATABASE, gives $APP_USER every object there
#      that the old role owned: schemas, tables, partitioned and foreign
#      tables, views, materialized views, sequences, functions, procedures,
#      aggregates, types, domains, large objects, collations, conversions,
#      operators, operator classes and families, text search dictionaries and
#      configurations, extended statistics. The system's objects (OID below
#      16384) and extensions' members stay with the bootstrap role, and so do
#      what PostgreSQL lets only a superuser own (event triggers, foreign-data
#      wrappers), foreign servers, publications, subscriptions, the old role's
#      default privileges and role settings, and objects in other databases:
#      it says how many.
# A marker beside PGDATA is written before step 1 and removed after step 2:
# a start that finds it resumes the migration, and server.sh refuses to serve
# while it is there. Nothing is dropped or rewritten but owners; a failure
# rolls back its step and fails the init container with the reason.

migration_role=metahooks_migration

# bootstrap_role prints the name of the bootstrap superuser, connecting as
# $SUPERUSER, else as $APP_USER (the socket trusts local connections).
bootstrap_role() {
	for role in "$SUPERUSER" "$APP_USER"; do
		if name=$(psql --no-psqlrc --quiet --tuples-only --no-align --username="$role" --dbname=postgres \
			--command='SELECT rolname FROM pg_roles WHERE oid = 10' 2>/dev/null); then
			printf '%s\n' "$name"
			return 0
		fi
	done
	return 1
}

migrate_old_layout() {
	if ! bootstrap=$(bootstrap_role); then
		fail "neither $SUPERUSER nor $APP_USER can connect to $PGDATA; cannot tell its roles"
	fi
	if [ "$bootstrap" = "$APP_USER" ] && [ "$APP_USER" != "$SUPERUSER" ]; then
		if psql --no-psqlrc --quiet --tuples-only --no-align --username="$APP_USER" --dbname=postgres --set=su="$SUPERUSER" \
			--set=ON_ERROR_STOP=1 2>/dev/null <<'SQL' | grep -q .; then
SELECT 1 FROM pg_roles WHERE rolname = :'su';
SQL
			fail "$PGDATA has a role $SUPERUSER beside the bootstrap superuser $APP_USER: the upgrade cannot rename $APP_USER to $SUPERUSER; nothing was changed (rename or drop that role, then restart)"
		fi
		say "$PGDATA was initialised with $APP_USER as its bootstrap superuser (the old image entrypoint): migrating to superuser $SUPERUSER and application role $APP_USER"
		: >"$migration_marker"
		psql --no-psqlrc --quiet --set=ON_ERROR_STOP=1 --username="$APP_USER" --dbname=postgres --set=m="$migration_role" >/dev/null <<'SQL' ||
SELECT format('CREATE ROLE %I SUPERUSER LOGIN', :'m') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'m')
\gexec
SQL
			fail "upgrade: cannot create the temporary superuser $migration_role; nothing was changed"
		psql --no-psqlrc --quiet --set=ON_ERROR_STOP=1 --single-transaction --file=- --username="$migration_role" --dbname=postgres \
			--set=app="$APP_USER" --set=su="$SUPERUSER" >/dev/null <<'SQL' ||
ALTER ROLE :"app" RENAME TO :"su";
CREATE ROLE :"app" LOGIN NOSUPERUSER NOCREATEROLE NOREPLICATION NOBYPASSRLS;
SELECT format('GRANT %I TO %I', r.rolname, :'app'), format('REVOKE %I FROM %I', r.rolname, :'su')
  FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid WHERE m.member = 10
\gexec
SQL
			fail "upgrade: cannot rename $APP_USER to $SUPERUSER and create the new $APP_USER (rolled back; the data is unchanged)"
		say "upgrade: renamed the bootstrap role $APP_USER to $SUPERUSER, created role $APP_USER"
	elif [ ! -e "$migration_marker" ]; then
		return 0
	elif [ "$bootstrap" != "$SUPERUSER" ]; then
		fail "an upgrade of $PGDATA did not finish and its bootstrap role is $bootstrap, neither $SUPERUSER nor $APP_USER; refusing to serve it"
	else
		say "resuming the upgrade of $PGDATA that did not finish"
	fi

	if ! out=$(psql --no-psqlrc --quiet --tuples-only --no-align --set=ON_ERROR_STOP=1 --single-transaction --file=- \
		--username="$SUPERUSER" --dbname="$APP_DATABASE" --set=app="$APP_USER" 2>&1 <<'SQL'
CREATE TEMPORARY TABLE metahooks_moves (kind text, stmt text);
-- Objects of the old role (OID 10) made after initdb, not an extension's,
-- not this session's temporary ones.
CREATE TEMPORARY VIEW metahooks_mine AS
  SELECT classid, objid FROM (
    SELECT 'pg_namespace'::regclass AS classid, oid AS objid, nspowner AS owner, oid AS nsp FROM pg_namespace
    UNION ALL SELECT 'pg_class'::regclass, oid, relowner, relnamespace FROM pg_class
    UNION ALL SELECT 'pg_proc'::regclass, oid, proowner, pronamespace FROM pg_proc
    UNION ALL SELECT 'pg_type'::regclass, oid, typowner, typnamespace FROM pg_type
    UNION ALL SELECT 'pg_collation'::regclass, oid, collowner, collnamespace FROM pg_collation
    UNION ALL SELECT 'pg_conversion'::regclass, oid, conowner, connamespace FROM pg_conversion
    UNION ALL SELECT 'pg_operator'::regclass, oid, oprowner, oprnamespace FROM pg_operator
    UNION ALL SELECT 'pg_opclass'::regclass, oid, opcowner, opcnamespace FROM pg_opclass
    UNION ALL SELECT 'pg_opfamily'::regclass, oid, opfowner, opfnamespace FROM pg_opfamily
    UNION ALL SELECT 'pg_ts_dict'::regclass, oid, dictowner, dictnamespace FROM pg_ts_dict
    UNION ALL SELECT 'pg_ts_config'::regclass, oid, cfgowner, cfgnamespace FROM pg_ts_config
    UNION ALL SELECT 'pg_statistic_ext'::regclass, oid, stxowner, stxnamespace FROM pg_statistic_ext
    UNION ALL SELECT 'pg_largeobject'::regclass, oid, lomowner, 0 FROM pg_largeobject_metadata
  ) o
  WHERE owner = 10 AND (objid >= 16384 OR (classid = 'pg_namespace'::regclass AND objid = 2200)) -- 2200: public, before 15
    AND nsp NOT IN (SELECT oid FROM pg_namespace WHERE nspname ~ '^pg_(toast_)?temp_')
    AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = o.classid AND d.objid = o.objid AND d.deptype = 'e');
-- What changes owner with its own ALTER: indexes, TOAST tables, a table's
-- own sequences (serial, identity), its row type, array types and a
-- composite type's relation follow what they belong to (a range's multirange
-- does not, in 15).
INSERT INTO metahooks_moves
  SELECT i.type, format('ALTER %s %s OWNER TO %I',
           CASE i.type WHEN 'statistics object' THEN 'STATISTICS' ELSE upper(i.type) END, i.identity, :'app')
    FROM metahooks_mine m, pg_identify_object(m.classid, m.objid, 0) i
   WHERE CASE m.classid
     WHEN 'pg_class'::regclass THEN
       (SELECT relkind IN ('r', 'p', 'v', 'm', 'S', 'f') FROM pg_class WHERE oid = m.objid)
       AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = m.objid
         AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
         AND (SELECT relkind FROM pg_class WHERE oid = m.objid) = 'S')
     WHEN 'pg_type'::regclass THEN
       (SELECT t.typtype IN ('b', 'c', 'd', 'e', 'r', 'm')
           AND NOT EXISTS (SELECT FROM pg_type e WHERE e.typarray = t.oid)
           AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
          FROM pg_type t WHERE t.oid = m.objid)
     ELSE true END;
SELECT stmt FROM metahooks_moves ORDER BY kind, stmt
\gexec
SELECT 'moved ' || coalesce(string_agg(n || ' ' || kind, ', ' ORDER BY kind), 'nothing')
  FROM (SELECT kind, count(*) AS n FROM metahooks_moves GROUP BY kind) k;
SELECT 'left with ' || current_user || ': ' || s FROM (SELECT concat_ws(', ',
    nullif((SELECT count(*) FROM metahooks_mine), 0) || ' objects of ' || current_database(),
    nullif((SELECT count(*) FROM pg_event_trigger WHERE evtowner = 10 AND oid >= 16384), 0) || ' event triggers',
    nullif((SELECT count(*) FROM pg_foreign_data_wrapper WHERE fdwowner = 10 AND oid >= 16384), 0) || ' foreign-data wrappers',
    nullif((SELECT count(*) FROM pg_foreign_server WHERE srvowner = 10), 0) || ' foreign servers',
    nullif((SELECT count(*) FROM pg_publication WHERE pubowner = 10), 0) || ' publications',
    nullif((SELECT count(*) FROM pg_default_acl WHERE defaclrole = 10), 0) || ' default privileges',
    nullif((SELECT count(*) FROM pg_db_role_setting WHERE setrole = 10), 0) || ' role settings',
    nullif((SELECT count(*) FROM pg_database WHERE datdba = 10 AND oid >= 16384 AND datname <> current_database()), 0) || ' other databases'
  ) AS s) left_over WHERE s <> '';
SQL
	); then
		fail "upgrade: cannot give the objects of $APP_DATABASE to the new $APP_USER (rolled back; they stay with $SUPERUSER, nothing is served until this succeeds): $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
	fi
	printf '%s\n' "$out" | while read -r line; do say "upgrade: $line"; done
	psql --no-psqlrc --quiet --set=ON_ERROR_STOP=1 --username="$SUPERUSER" --dbname=postgres --set=m="$migration_role" >/dev/null <<'SQL' ||
DROP ROLE IF EXISTS :"m";
SQL
		fail "upgrade: cannot drop the temporary superuser $migration_role"
	rm -f "$migration_marker"
	say "upgrade: done; $APP_USER owns its objects and is not a superuser"
}

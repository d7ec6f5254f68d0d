# instance.sh: the instance's side of high availability (instances >= 2),
# prepended to init.sh and server.sh after lib.sh. An instance does what the
# topology record says (ConfigMap <n>-topology, mounted at $TOPOLOGY_DIR; the
# kubelet replaces its files at run time, so it is read again at every step)
# and nothing else; it never promotes itself:
#   - not the record's primary, PGDATA empty: pg_basebackup of the primary,
#     then streaming from it (standby.signal, primary_conninfo with
#     application_name $POD_NAME, the name synchronous_standby_names uses);
#   - not the primary, PGDATA of a primary (the old primary after a
#     failover): pg_rewind from the new primary, then streaming; a fresh
#     clone only if pg_rewind fails against a reachable primary (never while
#     the source cannot be reached: the data stays). It never runs as a
#     primary on the way. While the record is fenced it starts as a standby
#     that streams from nobody (a marker beside PGDATA says it still needs
#     pg_rewind), so that it reports its final position: it may be the
#     furthest instance left when the promoted one fails too;
#   - the primary, running as a standby: pg_ctl promote (follow_record);
#   - the primary while the record asks for a switchover: a fast shutdown
#     (its WAL reaches the connected standbys first), report "demoted", wait
#     for the record to name the new primary, rejoin as its standby;
#   - a running primary the record does not name: stop at once, rejoin;
#   - the primary: synchronous_standby_names as the record says;
#   - replication slots: every standby streams through a physical slot of
#     its own on the primary, metahooks_instance_<ordinal> (primary_slot_name;
#     without it while the primary lacks it, follow_slot); the primary
#     creates one for every other member of the record (ordinals below its
#     instances), at once after a promotion, and drops the inactive ones of
#     instances no longer in it and the invalidated ones (manage_slots); a
#     standby drops the slots it kept from a time it was the primary, which
#     would hold its WAL to max_slot_wal_keep_size for nothing (clear_slots);
#   - a fenced record (a failover under way): the primary it names stops and
#     does not start again until the record names another; a standby clears
#     primary_conninfo, and once its WAL receiver is gone and its startup
#     process waits for WAL (it has replayed all it holds) it reports the
#     record's epoch: its position is final.
# The record's epoch only grows: an instance remembers the highest it has
# seen beside PGDATA (with the Database's UID) and never acts on an older
# record (a stale mount after a restart).
# An instance reaches another at <name>.$PEER_DOMAIN (its pod, through the
# headless Service), port $PGPORT, as the replication role; the password goes
# into a passfile in $PG_RUN_DIR, never into PGDATA. PEER_ADDRESSES
# ("<name>=<host>:<port> ...") overrides those addresses where the pods run
# outside Kubernetes (test/podrun); the hook never sets it.
# It writes its report ($REPORT_DIR/report, an emptyDir the reporter container
# publishes from: the role label and annotations
# of docs/database.md, "What the instances publish") at every poll.
# Without $TOPOLOGY_DIR (instances 1) nothing here runs.

ha_enabled() { [ -n "${TOPOLOGY_DIR:-}" ]; }

passfile="$PG_RUN_DIR/replication.pgpass"
report_file="${REPORT_DIR:-$PG_RUN_DIR}/report"
rejoin_flag="$PG_RUN_DIR/rejoin"
clone_marker="$(dirname "$PGDATA")/clone-incomplete"
rewind_marker="$(dirname "$PGDATA")/rewind-required"
epoch_file="$(dirname "$PGDATA")/topology-epoch"
acted_file="$PG_RUN_DIR/acted-epoch"
stopping=false

# record_snapshot prints the keys of the record an instance acts on.
record_snapshot() {
	for key in primary switchoverTo synchronousStandbyNames previousPrimary reason epoch fenced databaseUID instances; do
		printf '%s=%s\n' "$key" "$(cat "$TOPOLOGY_DIR/$key" 2>/dev/null || true)"
	done
}

# read_record sets rec_primary, rec_switchover, rec_sync, rec_previous,
# rec_reason, rec_epoch, rec_fenced and rec_instances (how many ordinals are
# members: "" when the record does not say, and then no instance uses or
# manages slots) from two identical reads in a row (the
# kubelet may be swapping the files), waiting while the record names no
# primary or is older than one this instance has seen.
read_record() {
	stale_said=false
	while :; do
		snap=$(record_snapshot)
		if [ "$snap" = "$(record_snapshot)" ]; then
			rec_primary=$(printf '%s\n' "$snap" | sed -n 's/^primary=//p')
			rec_epoch=$(printf '%s\n' "$snap" | sed -n 's/^epoch=//p')
			rec_uid=$(printf '%s\n' "$snap" | sed -n 's/^databaseUID=//p')
			case $rec_epoch in '' | *[!0-9]*) rec_epoch=0 ;; esac
			seen=$(seen_epoch)
			if [ -n "$rec_primary" ] && [ "$rec_epoch" -ge "$seen" ]; then
				[ "$rec_epoch" -gt "$seen" ] && remember_epoch "$rec_epoch"
				break
			fi
			if [ -n "$rec_primary" ] && ! $stale_said; then
				say "the record's epoch $rec_epoch is older than $seen, which this instance has seen: waiting for the current record"
				stale_said=true
			fi
		fi
		sleep 1
	done
	rec_switchover=$(printf '%s\n' "$snap" | sed -n 's/^switchoverTo=//p')
	rec_sync=$(printf '%s\n' "$snap" | sed -n 's/^synchronousStandbyNames=//p')
	rec_previous=$(printf '%s\n' "$snap" | sed -n 's/^previousPrimary=//p')
	rec_reason=$(printf '%s\n' "$snap" | sed -n 's/^reason=//p')
	rec_fenced=$(printf '%s\n' "$snap" | sed -n 's/^fenced=//p')
	[ "$rec_fenced" = true ] || rec_fenced=false
	rec_instances=$(printf '%s\n' "$snap" | sed -n 's/^instances=//p')
	case $rec_instances in [1-9] | [1-9][0-9]) ;; *) rec_instances="" ;; esac
}

# slot_name prints the replication slot of the instance of ordinal $1 on the
# primary. It is made of the ordinal alone (digits, from the pod name the
# StatefulSet gives), never of the Database's name: always a valid slot name
# (lowercase letters, digits, underscores, far below 63 characters), and one
# the SQL below matches by its pattern.
slot_name() { printf 'metahooks_instance_%s' "$1"; }
slot_pattern='^metahooks_instance_[0-9]+$'

# own_ordinal is this instance's ordinal ("" if POD_NAME does not end in one).
own_ordinal=${POD_NAME##*-}
case $own_ordinal in '' | *[!0-9]*) own_ordinal="" ;; esac

# own_slot prints the primary_slot_name this instance streams with: its own
# slot, once the record says who the members are ("" otherwise: a record of
# an older hook, whose primary keeps no slots).
own_slot() {
	[ -n "$rec_instances" ] && [ -n "$own_ordinal" ] && slot_name "$own_ordinal"
	return 0
}

# wanted_slots prints the slots the primary keeps: one for every member of
# the record but itself, comma-separated.
wanted_slots() {
	slot_i=0
	slot_list=""
	while [ "$slot_i" -lt "${rec_instances:-0}" ]; do
		[ "$slot_i" = "$own_ordinal" ] || slot_list="$slot_list${slot_list:+,}$(slot_name "$slot_i")"
		slot_i=$((slot_i + 1))
	done
	printf '%s' "$slot_list"
}

# sync_slots makes this server's slots of the pattern the list $1 (names
# this script computed, passed as a psql variable, never spliced into SQL):
# it drops the inactive slots not in it, and those PostgreSQL invalidated
# (wal_status lost: the WAL they held went past max_slot_wal_keep_size), then
# creates the missing ones, reserving WAL at once (from the last
# checkpoint's redo). An active slot is never dropped: the next call tries
# again once its walsender is gone. It says what it did, and a failure once.
sync_slots() {
	if out=$(local_sql --set=want="$1" --set=pattern="$slot_pattern" 2>&1 <<'SQL'
WITH gone AS MATERIALIZED (
	SELECT slot_name, wal_status FROM pg_replication_slots
	WHERE slot_type = 'physical' AND NOT active AND slot_name ~ :'pattern'
		AND (slot_name <> ALL (string_to_array(:'want', ',')) OR wal_status = 'lost'))
SELECT 'dropped replication slot ' || gone.slot_name
	|| CASE WHEN gone.wal_status = 'lost' THEN ' (invalidated: its standby fell behind by more than max_slot_wal_keep_size)' ELSE '' END
FROM gone, LATERAL pg_drop_replication_slot(gone.slot_name);
WITH missing AS MATERIALIZED (
	SELECT name FROM unnest(string_to_array(:'want', ',')) AS name
	WHERE name NOT IN (SELECT slot_name FROM pg_replication_slots))
SELECT 'created replication slot ' || s.slot_name || ' at ' || s.lsn
FROM missing, LATERAL pg_create_physical_replication_slot(missing.name, true) s;
SQL
	); then
		slots_failed=""
		[ -z "$out" ] || printf '%s\n' "$out" | while IFS= read -r line; do say "$line"; done
		return 0
	fi
	[ "$slots_failed" = "$out" ] || say "cannot update the replication slots (retrying every poll): $out"
	slots_failed=$out
	return 1
}
slots_failed=""

# manage_slots, on the primary: a slot for every other member of the record,
# none for anyone else. Without the record's instances it leaves the slots
# alone.
manage_slots() {
	[ -n "$rec_instances" ] || return 0
	sync_slots "$(wanted_slots)"
}

# follow_slot, on a standby following the record's primary, keeps
# primary_slot_name its own slot while that primary has it, and empty while
# it has not, so that the standby streams either way: a primary whose agent
# keeps no slots (an older version, during the rolling update that brings
# this one; or just promoted, before it made them) would refuse a slot it
# lacks forever. It asks the primary only while the standby does not stream
# through its slot: at every poll while it streams without one (the primary
# answers at once), at most every 5 polls while it does not stream (a frozen
# primary holds the loop up to connect_timeout, 5 s). It changes nothing
# while the primary cannot be asked.
slot_wait=0
follow_slot() {
	want=$(own_slot)
	if [ "$srv_slot" = "$want" ] && { [ -z "$want" ] || $srv_receiving; }; then
		return 0
	fi
	if [ -z "$want" ]; then
		apply_setting primary_slot_name ""
		return
	fi
	if [ "$slot_wait" -gt 0 ] && ! $srv_receiving; then
		slot_wait=$((slot_wait - 1))
		return 0
	fi
	slot_wait=5
	has=$(printf "SELECT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = :'slot');\n" |
		psql --no-psqlrc -X -A -t --set=slot="$want" "$(replication_conninfo "$rec_primary")" 2>/dev/null) || return 0
	case $has in
	t) apply_setting primary_slot_name "$want" ;;
	f) [ -z "$srv_slot" ] || say "$rec_primary has no replication slot $want: streaming without one until it has"
		apply_setting primary_slot_name "" ;;
	esac
}

# clear_slots, on a standby: drops the slots of the pattern, once per server
# start (a standby creates none; those it has are from a time it was the
# primary, a clone or pg_rewind does not remove them, and they would hold
# its WAL for nothing). A promotion creates them afresh.
slots_cleared="$PG_RUN_DIR/slots-cleared"
clear_slots() {
	[ -e "$slots_cleared" ] && return 0
	sync_slots "" && : >"$slots_cleared"
}

# seen_epoch prints the highest epoch this instance has seen in a record of
# this Database (0 for none, or for another Database's record: a volume kept
# and reused).
seen_epoch() {
	line=$(cat "$epoch_file" 2>/dev/null || true)
	if [ -n "$line" ] && [ "${line% *}" = "$rec_uid" ]; then
		case ${line##* } in '' | *[!0-9]*) echo 0 ;; *) echo "${line##* }" ;; esac
	else
		echo 0
	fi
}

remember_epoch() {
	printf '%s %s\n' "$rec_uid" "$1" >"$epoch_file.tmp" && mv "$epoch_file.tmp" "$epoch_file"
}

# acted_epoch prints the record's epoch this instance last acted on in full
# (kept in the run directory: a restarted container acts again).
acted_epoch() { cat "$acted_file" 2>/dev/null || echo 0; }
set_acted() { echo "$1" >"$acted_file"; }

write_passfile() {
	(umask 077 && printf '*:*:*:%s:%s\n' "$REPLICATION_USER" "$REPLICATION_PASSWORD" >"$passfile")
}

# peer_address is the libpq host and port of instance $1.
peer_address() {
	addr=""
	for entry in ${PEER_ADDRESSES:-}; do
		case $entry in "$1="*) addr=${entry#*=} ;; esac
	done
	if [ -n "$addr" ]; then
		printf 'host=%s port=%s' "${addr%:*}" "${addr##*:}"
	else
		printf 'host=%s.%s port=%s' "$1" "$PEER_DOMAIN" "$PGPORT"
	fi
}

# replication_conninfo connects to instance $1 as the replication role.
replication_conninfo() {
	printf '%s user=%s passfile=%s dbname=postgres application_name=%s connect_timeout=5' \
		"$(peer_address "$1")" "$REPLICATION_USER" "$passfile" "$POD_NAME"
}

# local_sql runs psql on this instance's server, over the pod's socket.
local_sql() {
	psql --no-psqlrc --quiet --no-align --tuples-only --set=ON_ERROR_STOP=1 --username="$SUPERUSER" --dbname=postgres "$@"
}

pgdata_empty() { [ ! -d "$PGDATA" ] || [ -z "$(ls -A "$PGDATA")" ]; }

# set_auto_conf sets $1 to $2 in postgresql.auto.conf ("" removes it), for a
# server that is not running; a running one is changed with ALTER SYSTEM.
set_auto_conf() {
	f="$PGDATA/postgresql.auto.conf"
	[ -e "$f" ] || : >"$f"
	sed -i "/^$1[ =]/d" "$f"
	[ -z "$2" ] || printf "%s = '%s'\n" "$1" "$(printf '%s' "$2" | sed "s/'/''/g")" >>"$f"
}

# write_report writes the report: role, timeline, WAL position, receiving,
# the record's epoch acted on in full.
write_report() {
	{
		printf 'example.com/role=%s\n' "$1"
		printf 'example.com/timeline=%s\n' "$2"
		printf 'example.com/lsn=%s\n' "$3"
		printf 'example.com/receiving=%s\n' "$4"
		printf 'example.com/epoch=%s\n' "$5"
		printf 'example.com/reported-at=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} >"$report_file.tmp" && mv "$report_file.tmp" "$report_file"
}

# query_server reads the running server in one query: server_role, srv_tli,
# srv_lsn (a primary: WAL flushed; a standby: the larger of received and
# replayed, since after a restart the received position starts over at its
# segment's beginning), srv_receiving (its WAL receiver streams),
# srv_drained (no WAL receiver, primary_conninfo empty, and the startup
# process waiting for WAL: it has replayed all it holds) and srv_slot (its
# primary_slot_name). A standby's timeline is the one its WAL receiver last
# streamed on, remembered once it stops (its checkpoint's lags until the
# next restartpoint).
query_server() {
	out=$(local_sql -c "SELECT CASE WHEN pg_is_in_recovery() THEN 'standby' ELSE 'primary' END,
		CASE WHEN pg_is_in_recovery() THEN coalesce((SELECT received_tli FROM pg_stat_wal_receiver WHERE received_tli > 0), 0)
			ELSE ('x' || substr(pg_walfile_name(pg_current_wal_flush_lsn()), 1, 8))::bit(32)::int END,
		CASE WHEN pg_is_in_recovery() THEN greatest(coalesce(pg_last_wal_receive_lsn(), '0/0'), coalesce(pg_last_wal_replay_lsn(), '0/0'))
			ELSE pg_current_wal_flush_lsn() END,
		coalesce((SELECT status = 'streaming' FROM pg_stat_wal_receiver), false),
		(SELECT timeline_id FROM pg_control_checkpoint()),
		pg_is_in_recovery() AND current_setting('primary_conninfo') = '' AND NOT EXISTS (SELECT FROM pg_stat_wal_receiver)
			AND coalesce((SELECT wait_event = 'RecoveryRetrieveRetryInterval' FROM pg_stat_activity WHERE backend_type = 'startup'), false),
		current_setting('primary_slot_name')" 2>/dev/null) || return 1
	IFS='|' read -r role srv_tli srv_lsn receiving checkpoint_tli drained srv_slot <<EOF
$out
EOF
	if [ "$role" = standby ]; then
		if [ "$srv_tli" -gt 0 ]; then
			echo "$srv_tli" >"$PG_RUN_DIR/received-tli"
		else
			srv_tli=$(cat "$PG_RUN_DIR/received-tli" 2>/dev/null || echo "$checkpoint_tli")
		fi
	fi
	[ "$receiving" = t ] && srv_receiving=true || srv_receiving=false
	[ "$drained" = t ] && srv_drained=true || srv_drained=false
	server_role=$role
}

# control_field prints a field of pg_controldata for PGDATA.
control_field() {
	LC_ALL=C pg_controldata "$PGDATA" | sed -n "s/^$1: *//p"
}

# clone makes PGDATA a copy of the record's primary (pg_basebackup), waiting
# for it to be reachable. A marker beside PGDATA says a clone is under way:
# a PGDATA found with it is partial and cloned again.
clone() {
	: >"$clone_marker"
	n=0
	while ! $stopping; do
		read_record
		if [ "$rec_primary" = "$POD_NAME" ]; then
			fail "the record names $POD_NAME the primary while it holds no data (its clone did not finish); refusing to start an empty database in its place"
		fi
		rm -rf "$PGDATA"
		mkdir -p "$PGDATA" && chmod 700 "$PGDATA"
		if out=$(pg_basebackup --pgdata="$PGDATA" --dbname="$(replication_conninfo "$rec_primary")" \
			--wal-method=stream --checkpoint=fast --no-password 2>&1); then
			rm -f "$clone_marker"
			say "cloned the primary $rec_primary (pg_basebackup)"
			return 0
		fi
		[ $((n % 15)) -eq 0 ] && say "cannot clone the primary $rec_primary yet, retrying every 2 s: $out"
		n=$((n + 1))
		sleep 2
	done
	return 1
}

# ensure_clean_shutdown completes crash recovery (a server killed) on a
# socket of its own with no TCP, with the pod's configuration (pg_rewind's
# own recovery would read PGDATA's unused postgresql.conf, without
# wal_log_hints), and stops it.
ensure_clean_shutdown() {
	case $(control_field "Database cluster state") in
	"shut down" | "shut down in recovery") return 0 ;;
	esac
	say "crash recovery before pg_rewind"
	sock=$(mktemp -d "$PG_RUN_DIR/rewind.XXXXXX")
	pg_ctl start --pgdata="$PGDATA" --wait --timeout=86400 --silent \
		-o "$(server_options "$sock") -c listen_addresses='' -c synchronous_standby_names=''" >"$sock/server.log" 2>&1 ||
		{ cat "$sock/server.log" >&2; rm -rf "$sock"; return 1; }
	pg_ctl stop --pgdata="$PGDATA" --mode=fast --wait --silent >/dev/null 2>&1
	rm -rf "$sock"
}

# rewind makes PGDATA, a former primary's, follow the record's primary
# (pg_rewind), or clones it again when pg_rewind fails. pg_rewind tells the
# timelines apart by the source's control file, which shows the new one only
# after a checkpoint: it waits for the source to be out of recovery and
# checkpointed on a later timeline than PGDATA's (asking for a CHECKPOINT),
# for at most 60 checks that reach it. A source that cannot be reached is
# waited for as long as it takes: PGDATA is never given up for a primary
# nobody can see. It returns 2, PGDATA untouched, once the record is fenced
# or names this instance: the caller decides again.
rewind() {
	if ! ensure_clean_shutdown; then
		say "crash recovery of $PGDATA failed, cloning $rec_primary instead"
		clone
		return
	fi
	mine=$(control_field "Latest checkpoint's TimeLineID")
	n=0
	m=0
	while :; do
		$stopping && return 1
		read_record
		if $rec_fenced || [ "$rec_primary" = "$POD_NAME" ]; then
			return 2
		fi
		src=$(replication_conninfo "$rec_primary")
		theirs=$(psql --no-psqlrc -X -A -t "$src" -c "SELECT NOT pg_is_in_recovery() AND timeline_id > $mine FROM pg_control_checkpoint()" 2>/dev/null || true)
		[ "$theirs" = t ] && break
		if [ "$theirs" = f ]; then
			[ "$n" -ge 60 ] && break
			[ $((n % 15)) -eq 0 ] && say "waiting for $rec_primary to be a primary checkpointed past timeline $mine"
			psql --no-psqlrc -X -q "$src" -c CHECKPOINT >/dev/null 2>&1 || true
			n=$((n + 1))
		else
			[ $((m % 15)) -eq 0 ] && say "cannot reach $rec_primary to rewind onto it, retrying every 1 s; PGDATA is kept"
			m=$((m + 1))
		fi
		sleep 1
	done
	if out=$(pg_rewind --target-pgdata="$PGDATA" --source-server="$src" 2>&1); then
		say "rewound onto $rec_primary: $(printf '%s' "$out" | tail -n 1)"
		return 0
	fi
	say "pg_rewind from $rec_primary failed, cloning it instead: $out"
	clone
}

# prepare_instance makes PGDATA what the record says this instance is, while
# no server runs on it; ha_role is then primary or standby.
prepare_instance() {
	need_tools psql pg_ctl pg_controldata pg_basebackup pg_rewind
	write_passfile
	read_record
	if [ "$rec_primary" = "$POD_NAME" ] && { $rec_fenced || [ -n "$rec_switchover" ]; }; then
		await_successor || return 1
	fi
	if [ "$rec_primary" = "$POD_NAME" ]; then
		ha_role=primary
		if [ -s "$PGDATA/PG_VERSION" ]; then
			# A standby the record made the primary starts as a standby and
			# is promoted by follow_record, with these names already set.
			set_auto_conf synchronous_standby_names "$rec_sync"
			[ -e "$PGDATA/standby.signal" ] || rm -f "$rewind_marker"
		elif [ -n "$rec_previous" ] || [ -e "$clone_marker" ]; then
			fail "the record names $POD_NAME the primary (${rec_reason:-a change} from $rec_previous) but its PGDATA holds no database; refusing to start an empty one in its place"
		fi
		return 0
	fi
	ha_role=standby
	if [ -e "$clone_marker" ] || pgdata_empty; then
		clone || return 1
		rm -f "$rewind_marker"
	elif [ ! -e "$PGDATA/standby.signal" ] || [ -e "$rewind_marker" ]; then
		: >"$rewind_marker"
		if $rec_fenced; then
			say "PGDATA is a primary's and the record is fenced (epoch $rec_epoch, a failover): starting as a standby that streams from nobody, to report its final position; pg_rewind once the record names the new primary"
		else
			say "PGDATA is a primary's but the record names $rec_primary the primary: rejoining as its standby"
			rc=0
			rewind || rc=$?
			case $rc in
			0) rm -f "$rewind_marker" ;;
			2) prepare_instance; return ;;
			*) return 1 ;;
			esac
		fi
	fi
	: >"$PGDATA/standby.signal"
	rm -f "$slots_cleared"
	set_auto_conf primary_slot_name "$(own_slot)"
	if $rec_fenced; then
		# A failover is under way: receive from nobody until the record
		# names the new primary.
		set_auto_conf primary_conninfo ""
		say "standby, fenced at epoch $rec_epoch: not streaming until the record names the new primary"
		return 0
	fi
	set_auto_conf primary_conninfo "$(replication_conninfo "$rec_primary")"
	say "standby of $rec_primary"
}

# ensure_replication_role makes the replication role, with the Secret's
# password and what pg_rewind and the rejoin need, on the primary's private
# init server ($PGHOST); statement logging off, output discarded.
ensure_replication_role() {
	psql --no-psqlrc --quiet --set=ON_ERROR_STOP=1 --username="$SUPERUSER" --dbname=postgres \
		--set=repl="$REPLICATION_USER" --set=repl_pw="$REPLICATION_PASSWORD" >/dev/null 2>&1 <<'SQL' ||
SET log_statement = 'none';
SET log_min_duration_statement = -1;
SET log_min_error_statement = 'panic';
SELECT format('CREATE ROLE %I', :'repl') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'repl')
\gexec
ALTER ROLE :"repl" WITH LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD :'repl_pw';
GRANT EXECUTE ON FUNCTION pg_catalog.pg_ls_dir(text, boolean, boolean) TO :"repl";
GRANT EXECUTE ON FUNCTION pg_catalog.pg_stat_file(text, boolean) TO :"repl";
GRANT EXECUTE ON FUNCTION pg_catalog.pg_read_binary_file(text) TO :"repl";
GRANT EXECUTE ON FUNCTION pg_catalog.pg_read_binary_file(text, bigint, bigint, boolean) TO :"repl";
GRANT EXECUTE ON FUNCTION pg_catalog.pg_control_checkpoint() TO :"repl";
SELECT format('GRANT pg_checkpoint TO %I', :'repl') WHERE EXISTS (SELECT FROM pg_roles WHERE rolname = 'pg_checkpoint')
\gexec
SQL
		fail "cannot make the replication role $REPLICATION_USER with the password of its Secret"
	say "replication role $REPLICATION_USER has the password of its Secret"
}

# apply_setting gives the running server $1 = $2 ("" resets it) with ALTER
# SYSTEM and a reload, when it differs.
apply_setting() {
	[ "$(local_sql -c "SHOW $1" 2>/dev/null)" = "$2" ] && return 0
	if [ -n "$2" ]; then
		printf "ALTER SYSTEM SET %s = :'v';\n" "$1" | local_sql --set=v="$2" || return 1
	else
		local_sql -c "ALTER SYSTEM RESET $1" || return 1
	fi
	local_sql -c "SELECT pg_reload_conf()" >/dev/null && say "$1 = '$2', from the record"
}

# stop_for writes why the server stops ($1: rejoin, demote or fence) for server.sh
# and stops it (fast: clients disconnected, WAL sent, checkpoint written).
stop_for() {
	echo "$1" >"$rejoin_flag"
	pg_ctl stop --pgdata="$PGDATA" --mode=fast --wait --timeout="${STOP_TIMEOUT:-50}" --silent >/dev/null 2>&1 ||
		pg_ctl stop --pgdata="$PGDATA" --mode=immediate --wait --silent >/dev/null 2>&1
}

# follow_record runs beside postgres (server.sh starts it in the background):
# every $TOPOLOGY_POLL_SECONDS (1) it reads the server and the record, does
# what the record says (follow_step) and reports.
follow_record() {
	while :; do
		sleep "${TOPOLOGY_POLL_SECONDS:-1}"
		[ -e "$rejoin_flag" ] && continue # server.sh is bringing the server back
		query_server || continue
		read_record
		follow_step
		[ -e "$rejoin_flag" ] || write_report "$server_role" "$srv_tli" "$srv_lsn" "$srv_receiving" "$(acted_epoch)"
	done
}

# follow_step does what the record says, on the server as query_server read
# it; set_acted records the epoch once it is acted on in full.
follow_step() {
	if [ "$rec_primary" != "$POD_NAME" ]; then
		if [ "$server_role" = primary ]; then
			say "the record names $rec_primary the primary: stopping, to rejoin as its standby"
			stop_for rejoin
			return
		fi
		clear_slots
		if $rec_fenced; then
			# Final only on what this poll read: no receiver, nothing
			# left to replay, and no conninfo to start one again.
			if $srv_drained; then
				[ "$(acted_epoch)" = "$rec_epoch" ] || say "fenced at epoch $rec_epoch: WAL receiver stopped, all WAL replayed, final at $srv_lsn"
				set_acted "$rec_epoch"
			else
				apply_setting primary_conninfo ""
			fi
			return
		fi
		if [ -e "$rewind_marker" ]; then
			# A former primary started while fenced: its WAL may fork
			# from the new primary's, so it rejoins through pg_rewind.
			say "the record names $rec_primary the primary: stopping, to rewind onto it"
			stop_for rejoin
			return
		fi
		apply_setting primary_conninfo "$(replication_conninfo "$rec_primary")" && set_acted "$rec_epoch"
		follow_slot
		return
	fi
	if $rec_fenced; then
		if [ "$server_role" = primary ]; then
			say "the record fences $POD_NAME (epoch $rec_epoch, a failover): stopping, no more writes"
			stop_for fence
		fi
		return
	fi
	apply_setting synchronous_standby_names "$rec_sync"
	if [ "$server_role" = standby ]; then
		say "the record names $POD_NAME the primary (${rec_reason:-} from ${rec_previous:-}): promoting"
		if pg_ctl promote --pgdata="$PGDATA" --wait --timeout=600 --silent; then
			rm -f "$rewind_marker"
			# The standbys' slots at once: without its slot a standby
			# cannot stream, and synchronous commits wait for one.
			manage_slots
			# pg_rewind of the former primary reads this checkpoint's timeline.
			local_sql -c CHECKPOINT >/dev/null
			say "promoted"
		fi
	elif [ -n "$rec_switchover" ]; then
		say "switchover to $rec_switchover: shutting down cleanly"
		stop_for demote
	else
		manage_slots
		set_acted "$rec_epoch"
	fi
}

# await_successor, once the server is down for a switchover or a fence (or
# found down with the record asking for either), waits for the record to
# name the new primary, or to call the switchover off (then it starts as the
# primary again); it never starts a server meanwhile. It reports "demoted"
# at the shutdown checkpoint only when pg_controldata says the server shut
# down cleanly: a fast shutdown that timed out and fell back to an immediate
# stop has no last record the target can be known to hold, so the
# switchover waits and the failover rules take over.
await_successor() {
	read_record
	clean=false
	case $(control_field "Database cluster state") in "shut down") clean=true ;; esac
	if $clean; then
		write_report demoted "$(control_field "Latest checkpoint's TimeLineID")" "$(control_field "Latest checkpoint location")" false "$rec_epoch"
		say "shut down cleanly at $(control_field "Latest checkpoint location"), waiting for the record to name the new primary"
	else
		say "not shut down cleanly ($(control_field "Database cluster state")): no demoted report; waiting for the record to name the new primary"
	fi
	while ! $stopping; do
		read_record
		[ "$rec_primary" != "$POD_NAME" ] && return 0
		if ! $rec_fenced && [ -z "$rec_switchover" ]; then
			say "the switchover was called off: starting as the primary again"
			return 0
		fi
		sleep 1
	done
	return 1
}

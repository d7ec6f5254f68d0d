# server.sh: the server container "postgres". The init container has
# prepared PGDATA; this runs postgres as a child and waits for it, so that the
# preStop hook (prestop.sh) can see the shutdown through to its end:
#   - SIGTERM (the kubelet) or SIGINT asks postgres for a fast shutdown;
#   - once postgres is gone, it waits (at most 5 s) for a running preStop to
#     finish before the container exits, so that hook is never killed;
#   - it exits with postgres's status.
# With instances >= 2 (instance.sh) PGDATA is first made what the topology
# record says (a container restart runs no init container), and
# follow_record runs in the background beside postgres. When it stops the
# server to rejoin as a standby, for a switchover or a fence, this brings it
# back as the record says instead of exiting (prepare_instance waits while
# the record still asks this primary to stay down).
METAHOOKS_STEP=server
set -u
need_tools postgres
if [ -e "$restore_marker" ]; then
	fail "an earlier restore into $PGDATA did not finish; refusing to start on partial data (empty the data volume to restore again)"
fi
if [ -e "$migration_marker" ]; then
	fail "the upgrade of the roles of $PGDATA did not finish (the init container says why); refusing to serve it"
fi
pid=""
follower=""
trap 'stopping=true; [ -z "$pid" ] || kill -INT "$pid" 2>/dev/null' TERM INT
if ha_enabled; then
	prepare_instance || exit 1
	rm -f "$rejoin_flag"
	follow_record &
	follower=$!
fi
while :; do
	$stopping && break
	# shellcheck disable=SC2046
	postgres $(server_options "$PG_RUN_DIR") &
	pid=$!
	while :; do
		wait "$pid"
		code=$?
		kill -0 "$pid" 2>/dev/null || break # wait was interrupted by a signal
	done
	pid=""
	if $stopping || [ ! -e "$rejoin_flag" ]; then
		break
	fi
	$stopping && break
	prepare_instance || exit 1
	rm -f "$rejoin_flag"
done
[ -z "$follower" ] || kill "$follower" 2>/dev/null
i=0
while [ -e "$PG_RUN_DIR/prestop" ] && [ "$i" -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
exit "${code:-0}"

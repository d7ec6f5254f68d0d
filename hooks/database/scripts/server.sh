# server.sh: the server container "postgres". The init container has
# prepared PGDATA; this runs postgres as a child and waits for it, so that the
# preStop hook (prestop.sh) can see the shutdown through to its end:
#   - SIGTERM (the kubelet) or SIGINT asks postgres for a fast shutdown;
#   - once postgres is gone, it waits (at most 5 s) for a running preStop to
#     finish before the container exits, so that hook is never killed;
#   - it exits with postgres's status.
METAHOOKS_STEP=server
set -u
need_tools postgres
if [ -e "$restore_marker" ]; then
	fail "an earlier restore into $PGDATA did not finish; refusing to start on partial data (empty the data volume to restore again)"
fi
# shellcheck disable=SC2046
postgres $(server_options "$PG_RUN_DIR") &
pid=$!
trap 'kill -INT "$pid" 2>/dev/null' TERM INT
while :; do
	wait "$pid"
	code=$?
	kill -0 "$pid" 2>/dev/null || break # wait was interrupted by a signal
done
i=0
while [ -e "$PG_RUN_DIR/prestop" ] && [ "$i" -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
exit "$code"

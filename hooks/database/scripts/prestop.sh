# prestop.sh: the server container's preStop hook. A fast shutdown (clients
# disconnected, a checkpoint written), waited for: it exits 0 once postgres
# has stopped cleanly and non-zero, saying why, when it did not stop in time.
# The flag file tells server.sh to stay until this hook has exited.
METAHOOKS_STEP=prestop
set -u
need_tools pg_ctl
: >"$PG_RUN_DIR/prestop"
trap 'rm -f "$PG_RUN_DIR/prestop"' EXIT
pg_ctl status --pgdata="$PGDATA" >/dev/null 2>&1
case $? in
3 | 4) say "no server runs"; exit 0 ;;
esac
if ! out=$(pg_ctl stop --pgdata="$PGDATA" --mode=fast --wait --timeout="${STOP_TIMEOUT:-50}" 2>&1); then
	fail "fast shutdown did not finish: $out"
fi
say "server stopped (fast shutdown)"

# lib.sh: prepended to every script of the Database pods (see scripts.go).
# POSIX sh only: the images may ship dash, bash or busybox.

# say prints a line of this script's log; fail prints the reason on stderr and
# exits 1. Containers use terminationMessagePolicy FallbackToLogsOnError, so
# the last lines of the log become the container's termination message, which
# the hook reads into the Database's status.
say() { printf '%s: %s\n' "$METAHOOKS_STEP" "$*"; }
fail() { printf '%s: FAILED: %s\n' "$METAHOOKS_STEP" "$*" >&2; exit 1; }

# need_tools checks that PostgreSQL's own programs are there, looking on PATH,
# then in pg_config --bindir and /usr/lib/postgresql/<major>/bin (the newest
# major first), and fails with one clear line naming what is missing.
need_tools() {
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 && continue
		for dir in $(pg_config --bindir 2>/dev/null) $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
			if [ -x "$dir/$tool" ]; then
				PATH="$PATH:$dir"
				break
			fi
		done
	done
	missing=""
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
	done
	if [ -n "$missing" ]; then
		fail "the image lacks PostgreSQL's programs:$missing (searched PATH=$PATH, pg_config --bindir, /usr/lib/postgresql/*/bin). Supported images: the official postgres images 13 to 17 (Debian or Alpine) or any image with PostgreSQL's server and client programs and /bin/sh; see docs/database.md"
	fi
}

# server_options are the options every server of the pod starts with: the
# configuration and pg_hba.conf from the ConfigMap, the socket in $1, and
# the port $PGPORT (postgresql.conf's), which every script connects to.
server_options() {
	printf -- "-c config_file=%s -c hba_file=%s -c unix_socket_directories=%s -c port=%s" "$PG_CONFIG_FILE" "$PG_HBA_FILE" "$1" "$PGPORT"
}

# restore_marker sits beside PGDATA while a restore is loading: a database
# found with it is partial and is never served.
restore_marker="$(dirname "$PGDATA")/restore-incomplete"

# migration_marker sits beside PGDATA while the upgrade of an old PGDATA
# (migrate.sh) has not finished: such a database is never served.
migration_marker="$(dirname "$PGDATA")/migration-incomplete"

# backup.sh: the backup container of the backup CronJob, of on-demand backup
# Jobs and of the final backup Job. It writes two files to $BACKUP_DIR:
#   <UTC time><suffix>.globals.sql  roles (without passwords), their settings
#                                   and memberships: pg_dumpall --globals-only,
#                                   less the two roles init.sh manages;
#   <UTC time><suffix>.dump         pg_dump --format=custom of the database,
#                                   with its grants, owner and settings.
# Each is written as .partial, flushed, renamed (the dump last, so a .dump
# means a complete pair), and the directory flushed. Then, when
# BACKUP_RETENTION > 0, all but the newest BACKUP_RETENTION scheduled dumps
# (exactly <UTC time>.dump) are deleted with their globals. Final and
# on-demand dumps (a suffix) and files of any other name are never touched.
# It connects as the superuser (the only role that can read every object),
# over TCP with scram-sha-256. Every failure ends with one line saying why.
METAHOOKS_STEP=backup
set -eu
umask 077
need_tools pg_dump pg_dumpall pg_isready
stamp=$(date -u +%Y%m%dT%H%M%SZ)
base="$BACKUP_DIR/${stamp}${BACKUP_SUFFIX:-}"
trap 'rm -f "$base.dump.partial" "$base.globals.sql.partial"' EXIT
find "$BACKUP_DIR" -maxdepth 1 -name '[0-9]*T[0-9]*Z*.partial' -mmin +1440 -delete

i=0
until ready=$(pg_isready 2>&1); do
	i=$((i + 1))
	if [ "$i" -ge 60 ]; then
		fail "the server $PGHOST:$PGPORT did not accept connections for 5 minutes (pg_isready: $ready); no backup written, older ones kept"
	fi
	sleep 5
done

if ! out=$(pg_dumpall --globals-only --no-role-passwords --no-password --file="$base.globals.sql.partial" 2>&1); then
	fail "pg_dumpall --globals-only failed: $out; no backup written, older ones kept"
fi
# The superuser and the application role are made by init.sh from the
# Secrets; restoring their attributes would undo that.
sed -i -E "/^(CREATE ROLE|ALTER ROLE) (${PGUSER}|${APP_USER})( WITH .*)?;\$/d" "$base.globals.sql.partial"
if ! out=$(pg_dump --format=custom --no-password --file="$base.dump.partial" 2>&1); then
	fail "pg_dump failed: $out; no backup written, older ones kept"
fi
sync "$base.globals.sql.partial" "$base.dump.partial"
mv "$base.globals.sql.partial" "$base.globals.sql"
mv "$base.dump.partial" "$base.dump"
sync "$BACKUP_DIR"
say "wrote $base.dump ($(wc -c <"$base.dump") bytes) and $(basename "$base.globals.sql")"

if [ "${BACKUP_RETENTION:-0}" -gt 0 ]; then
	ls -1 "$BACKUP_DIR" | grep -E '^[0-9]{8}T[0-9]{6}Z\.dump$' | LC_ALL=C sort -r | tail -n +$((BACKUP_RETENTION + 1)) | while read -r old; do
		rm -f -- "$BACKUP_DIR/$old" "$BACKUP_DIR/${old%.dump}.globals.sql"
		say "deleted $old (retention $BACKUP_RETENTION)"
	done
fi

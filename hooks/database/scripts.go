package database

import (
	_ "embed" // the pod scripts
)

// The shell scripts of the Database pods, in scripts/. Each container runs
// one of them with /bin/sh -c, lib.sh first: they call PostgreSQL's own
// programs (initdb, pg_ctl, postgres, psql, pg_restore, pg_dump, pg_dumpall)
// and never the image's entrypoint, so any image with those programs and a
// POSIX /bin/sh behaves the same (see docs/database.md, Supported images).
//
// What they read, all from the environment, so that they hold no path of
// their own: PGDATA, PG_CONFIG_FILE, PG_HBA_FILE and PG_RUN_DIR (the socket
// directory, an emptyDir), the role names and passwords from the Secrets, and
// the RESTORE_* and BACKUP_* settings of their container; with instances >= 2
// the topology record's directory, the pod's name, the instances' domain and
// the replication role (instance.sh, prepended to init.sh and server.sh).
var (
	//go:embed scripts/lib.sh
	libScript string
	//go:embed scripts/instance.sh
	instanceScript string
	//go:embed scripts/init.sh
	initScriptBody string
	//go:embed scripts/migrate.sh
	migrateScript string
	//go:embed scripts/server.sh
	serverScriptBody string
	//go:embed scripts/prestop.sh
	preStopScriptBody string
	//go:embed scripts/backup.sh
	backupScriptBody string
)

// The scripts as the containers run them.
var (
	initScript    = libScript + instanceScript + migrateScript + initScriptBody
	serverScript  = libScript + instanceScript + serverScriptBody
	preStopScript = libScript + preStopScriptBody
	backupScript  = libScript + backupScriptBody
)

// shellCommand runs script with /bin/sh; name is $0 in its messages.
func shellCommand(script, name string) []string {
	return []string{"/bin/sh", "-c", script, name}
}

#!/usr/bin/env bash
# Prints the directory of PostgreSQL's server programs (initdb, postgres,
# pg_ctl, ...) for the tests, installing Debian's postgresql package first
# when it is missing and this runs as root (as CI does). Without root it says
# which package to install and fails. No cluster is created or started: the
# tests start their own servers on free loopback ports.
set -euo pipefail

find_bindir() {
	local dir
	for dir in "${PG_BINDIR:-}" "$(pg_config --bindir 2>/dev/null || true)" $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
		if [[ -n $dir && -x $dir/initdb && -x $dir/postgres && -x $dir/pg_ctl && -x $dir/pg_dumpall && -x $dir/pg_restore ]]; then
			echo "$dir"
			return 0
		fi
	done
	return 1
}

if find_bindir; then
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "PostgreSQL is not installed: install Debian's package postgresql (sudo apt-get install postgresql), or set PG_BINDIR" >&2
	exit 1
fi
echo "installing Debian's postgresql package (apt-get)..." >&2
# The package would otherwise create and start a cluster on port 5432.
if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
	mkdir -p /etc/postgresql-common
	echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update >&2
apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql >&2
find_bindir || { echo "postgresql was installed but its programs were not found" >&2; exit 1; }

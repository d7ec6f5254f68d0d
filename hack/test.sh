#!/usr/bin/env bash
# `make test`: gofmt and vet (make fmt-check vet), the unit tests (with
# PostgreSQL), then the e2e tests on every Kubernetes minor (hack/e2e.sh).
#
# On a cold machine most of the time is the build of the control plane of
# three minors (hack/kube-binaries/build.sh, about 12 minutes each on 2
# cores). So it starts at once, in the background, at the lowest CPU
# priority (nice 19): it takes only what the unit tests and the earlier
# minors' e2e tests leave idle, and they are not slowed by it. hack/e2e.sh
# asks build.sh for each minor in turn, which waits on the cache lock while
# the background build of that minor is under way, and then uses it. When
# every binary is cached, the background build finds them in a second and
# does nothing. A minor that cannot be built fails in hack/e2e.sh, naming it,
# exactly as without the background build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p bin

prebuild_log=bin/kube-binaries-prebuild.log
setsid bash -c '
	for minor in $(hack/kube-binaries/build.sh --minors); do
		nice -n 19 hack/kube-binaries/build.sh "${minor}" >/dev/null || true
	done' >"${prebuild_log}" 2>&1 &
prebuild=$!
# The background build never outlives this script (it is its own process group).
trap 'kill -- -"${prebuild}" 2>/dev/null || true' EXIT
echo "test: building the kube binaries in the background at nice 19 (log ${prebuild_log})"

# While vet compiles, the background build downloads its modules and
# PostgreSQL is installed when missing (apt-get: network and disk).
pg_bindir_file="$(mktemp)"
hack/postgresql.sh >"${pg_bindir_file}" &
postgresql=$!
make --no-print-directory fmt-check vet
wait "${postgresql}" # fails the run if PostgreSQL cannot be had
PG_BINDIR="$(cat "${pg_bindir_file}")"
rm -f "${pg_bindir_file}"
export PG_BINDIR

start=${SECONDS}
go test -count=1 -timeout 40m $(go list ./... | grep -v /test/e2e)
echo "test: unit tests passed in $((SECONDS - start))s"
hack/e2e.sh

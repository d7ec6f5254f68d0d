#!/usr/bin/env bash
# Runs the e2e tests (test/e2e) once per Kubernetes minor that
# hack/kube-binaries has a module for (or the minors given as arguments),
# each against its own etcd, kube-apiserver, kube-controller-manager and
# kube-scheduler, built once and cached by hack/kube-binaries/build.sh.
#
#   hack/e2e.sh               every minor, oldest first
#   hack/e2e.sh v1.37         one minor
#
# A minor that cannot be built or whose tests fail is named at the end and
# makes the script fail; the others still run. Full logs: bin/e2e-<minor>.log;
# the full-loop figures of every run: bin/e2e-figures.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $# -gt 0 ]]; then
	minors=("$@")
else
	mapfile -t minors < <(hack/kube-binaries/build.sh --minors)
fi
mkdir -p bin
figures="${PWD}/bin/e2e-figures.txt"
: >"${figures}"
failed=()
for minor in "${minors[@]}"; do
	start=${SECONDS}
	if ! assets="$(hack/kube-binaries/build.sh "${minor}")"; then
		echo "e2e: FAIL: Kubernetes ${minor} cannot be built here (see the build output above)"
		failed+=("${minor} (build)")
		continue
	fi
	release="$(basename "${assets}")"
	echo "e2e: Kubernetes ${minor}: ${release}, binaries ready in $((SECONDS - start))s; running test/e2e"
	log="bin/e2e-${minor}.log"
	start=${SECONDS}
	# TestMyAppsAtScale runs 300 MyApps on the newest minor, 30 on the others
	# (about 100 s against 15 s on 2 cores); METAHOOKS_E2E_MYAPPS overrides both.
	myapps=30
	[[ "${minor}" != "${minors[-1]}" ]] || myapps=300
	myapps="${METAHOOKS_E2E_MYAPPS:-${myapps}}"
	if KUBEBUILDER_ASSETS="${assets}" METAHOOKS_FIGURES="${figures}" METAHOOKS_E2E_MYAPPS="${myapps}" \
		go test -count=1 -v -timeout 30m ./test/e2e/ >"${log}" 2>&1; then
		grep -E '^(--- |ok )' "${log}" || true
		echo "e2e: Kubernetes ${minor} (${release}): passed in $((SECONDS - start))s"
	else
		grep -vE '^(=== (RUN|PAUSE|CONT)|    --- PASS)' "${log}" | tail -n 400
		echo "e2e: FAIL: Kubernetes ${minor} (${release}) after $((SECONDS - start))s; full log ${log}"
		failed+=("${minor}")
	fi
done
echo "e2e: full-loop figures:"
cat "${figures}"
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "e2e: FAIL on Kubernetes ${failed[*]}"
	exit 1
fi
echo "e2e: passed on Kubernetes ${minors[*]}"

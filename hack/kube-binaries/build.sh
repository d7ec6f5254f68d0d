#!/usr/bin/env bash
# Builds, from Go modules, the control plane the e2e tests start: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler of one Kubernetes
# minor (the module in v1.MINOR/ next to this file, see gen-module.sh), and
# kwok. Everything goes to a cache folder outside the repo keyed by version;
# the build is skipped when the cached binaries are there and run.
#
#   hack/kube-binaries/build.sh [v1.MINOR]     (default: the newest minor here)
#   hack/kube-binaries/build.sh --minors       lists the minors, oldest first
#
# stdout: exactly one line, the absolute path of the folder holding the
#         binaries (use it as KUBEBUILDER_ASSETS). It also holds `kwok` and
#         `kwok-stage` (links to the kwok binary and to kustomize/stage/ of the
#         sigs.k8s.io/kwok module in the Go module cache). Everything else: stderr.
#
# Environment:
#   METAHOOKS_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/metahooks)
#   FORCE_REBUILD=1  rebuild even if the cached binaries work
set -euo pipefail

# Keep stdout for the final path only.
exec 3>&1 1>&2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
kwok_version=v0.8.0

minors() { (cd "${here}" && ls -d v1.* | sort -t. -k2 -n); }
if [[ "${1:-}" == --minors ]]; then
	minors >&3
	exit 0
fi
minor="${1:-$(minors | tail -n1)}"
mod="${here}/${minor}"
if [[ ! -f "${mod}/go.mod" ]]; then
	echo "kube-binaries: no module for Kubernetes ${minor} (have: $(minors | tr '\n' ' ')); make one with gen-module.sh" >&2
	exit 1
fi

# Versions come from the module's go.mod so the cache key cannot drift.
modversion() {
	awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit }' "${mod}/go.mod"
}
k8s_version="$(modversion k8s.io/kubernetes)"
etcd_version="$(modversion go.etcd.io/etcd/server/v3)"
if [[ -z "${k8s_version}" || -z "${etcd_version}" ]]; then
	echo "kube-binaries: cannot read k8s.io/kubernetes / go.etcd.io/etcd/server/v3 versions from ${mod}/go.mod" >&2
	exit 1
fi

source "${here}/../cache-root.sh"
mkdir -p "${cache_root}/kube-binaries"
base="$(cd "${cache_root}/kube-binaries" && pwd -P)"
dest="${base}/k8s-${k8s_version}-etcd-${etcd_version}"
kwok_dest="${base}/kwok-${kwok_version}"
k8s_binaries=(kube-apiserver kube-controller-manager kube-scheduler)

# All binaries exist, run, and report the expected versions.
k8s_ok() {
	local dir="$1" out b
	for b in "${k8s_binaries[@]}"; do
		[[ -x "${dir}/${b}" ]] || return 1
		out="$("${dir}/${b}" --version 2>&1)" || return 1
		[[ "${out}" == *"Kubernetes ${k8s_version}"* ]] || return 1
	done
	[[ -x "${dir}/etcd" ]] || return 1
	out="$("${dir}/etcd" --version 2>&1)" || return 1
	[[ "${out}" == *"etcd Version: ${etcd_version#v}"* ]] || return 1
}
kwok_ok() {
	local out
	[[ -x "$1/kwok" ]] || return 1
	out="$("$1/kwok" --version 2>&1)" || return 1
	[[ "${out}" == *"${kwok_version#v}"* ]] || return 1
}
all_ok() {
	[[ "${FORCE_REBUILD:-}" != 1 ]] && k8s_ok "${dest}" && kwok_ok "${kwok_dest}" &&
		[[ -d "${dest}/kwok-stage/pod" && "${dest}/kwok" -ef "${kwok_dest}/kwok" ]]
}
done_ok() {
	echo "kube-binaries: using cached ${dest}"
	echo "${dest}" >&3
	exit 0
}

all_ok && done_ok

# Serialise builds (they would only slow each other down on a small machine);
# re-check after getting the lock, another run may have just built them.
if command -v flock >/dev/null 2>&1; then
	exec 9>"${base}/.lock"
	if ! flock -n 9; then
		echo "kube-binaries: waiting for another build to finish (${base}/.lock)"
		flock 9
	fi
	all_ok && done_ok
fi

tmp="$(mktemp -d "${base}/.build-XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
# -dwarf=false: the compiler skips debug info that "-s -w" would strip anyway
# (go run does the same); it saves compile time and changes no binary's code.
flags=(-trimpath -buildvcs=false -tags selinux,notest,grpcnotrace -gcflags=all=-dwarf=false)

if [[ "${FORCE_REBUILD:-}" == 1 ]] || ! kwok_ok "${kwok_dest}"; then
	echo "kube-binaries: building kwok ${kwok_version} into ${kwok_dest}"
	start=${SECONDS}
	# go install pkg@version builds with kwok's own go.mod, as its release does.
	mkdir -p "${tmp}/kwok"
	(cd "${tmp}" && CGO_ENABLED="${CGO_ENABLED:-0}" GOBIN="${tmp}/kwok" go install \
		-trimpath -ldflags "-s -w" -gcflags=all=-dwarf=false \
		"sigs.k8s.io/kwok/cmd/kwok@${kwok_version}")
	if ! kwok_ok "${tmp}/kwok"; then
		echo "kube-binaries: freshly built kwok ${kwok_version} failed the --version check:" >&2
		"${tmp}/kwok/kwok" --version >&2 || true
		exit 1
	fi
	mkdir -p "${kwok_dest}"
	mv -f "${tmp}/kwok/kwok" "${kwok_dest}/kwok"
	echo "kube-binaries: built kwok in $((SECONDS - start))s"
fi

if [[ "${FORCE_REBUILD:-}" == 1 ]] || ! k8s_ok "${dest}"; then
	# Same version stamping as Kubernetes' hack/lib/version.sh; the build date
	# is the tag's commit time so the output does not depend on when it was built.
	build_date="$(cd "${mod}" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)"
	k8s_minor="${k8s_version#v1.}"
	k8s_minor="${k8s_minor%%.*}"
	ldflags="-s -w"
	for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
		ldflags+=" -X ${pkg}.gitVersion=${k8s_version}"
		ldflags+=" -X ${pkg}.gitMajor=1"
		ldflags+=" -X ${pkg}.gitMinor=${k8s_minor}"
		ldflags+=" -X ${pkg}.gitTreeState=clean"
		ldflags+=" -X ${pkg}.buildDate=${build_date}"
	done
	echo "kube-binaries: building ${k8s_binaries[*]} ${k8s_version} and etcd ${etcd_version} into ${dest} (a cold build takes 10 minutes or more)"
	start=${SECONDS}
	# One go build for all four: packages they share are compiled once.
	# Flags as in Kubernetes' hack/lib/golang.sh for release binaries.
	if ! (cd "${mod}" && CGO_ENABLED="${CGO_ENABLED:-0}" go build "${flags[@]}" -ldflags "${ldflags}" \
		-o "${tmp}/" "${k8s_binaries[@]/#/k8s.io/kubernetes/cmd/}" ./etcd); then
		echo "kube-binaries: cannot build Kubernetes ${k8s_version} (module ${mod})" >&2
		exit 1
	fi
	if ! k8s_ok "${tmp}"; then
		echo "kube-binaries: freshly built Kubernetes ${k8s_version} binaries failed the --version check:" >&2
		for b in "${k8s_binaries[@]}" etcd; do "${tmp}/${b}" --version >&2 || true; done
		exit 1
	fi
	# rename(2) within one filesystem: readers never see a half-written binary.
	mkdir -p "${dest}"
	for b in etcd "${k8s_binaries[@]}"; do mv -f "${tmp}/${b}" "${dest}/${b}"; done
	echo "kube-binaries: built Kubernetes ${k8s_version} in $((SECONDS - start))s"
fi

# kwok's stage definitions, read where the Go module cache keeps them.
kwok_dir="$(cd "${tmp}" && go mod download -json "sigs.k8s.io/kwok@${kwok_version}" | awk -F'"' '$2 == "Dir" { print $4 }')"
if [[ ! -d "${kwok_dir}/kustomize/stage/pod" ]]; then
	echo "kube-binaries: no kustomize/stage/ in sigs.k8s.io/kwok@${kwok_version} (${kwok_dir})" >&2
	exit 1
fi
ln -sfn "${kwok_dir}/kustomize/stage" "${dest}/kwok-stage"
ln -sfn "${kwok_dest}/kwok" "${dest}/kwok"

all_ok || { echo "kube-binaries: ${dest} is not complete after the build" >&2; exit 1; }
echo "${dest}" >&3

#!/usr/bin/env bash
# Builds kube-apiserver and etcd from Go modules (see go.mod next to this file)
# for controller-runtime's envtest, into a cache folder outside the repo keyed
# by version. Skips the build when both binaries are already there and run.
#
# stdout: exactly one line, the absolute path of the folder holding the
#         binaries (use it as KUBEBUILDER_ASSETS). Everything else: stderr.
#
# Environment:
#   METAHOOKS_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/metahooks)
#   FORCE_REBUILD=1  rebuild even if the cached binaries work
set -euo pipefail

# Keep stdout for the final path only.
exec 3>&1 1>&2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"

# Versions come from this module's go.mod so the cache key cannot drift.
modversion() {
	awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit }' "${here}/go.mod"
}
k8s_version="$(modversion k8s.io/kubernetes)"
etcd_version="$(modversion go.etcd.io/etcd/server/v3)"
if [[ -z "${k8s_version}" || -z "${etcd_version}" ]]; then
	echo "build.sh: cannot read k8s.io/kubernetes / go.etcd.io/etcd/server/v3 versions from ${here}/go.mod" >&2
	exit 1
fi

source "${here}/../cache-root.sh"
mkdir -p "${cache_root}/kube-binaries"
base="$(cd "${cache_root}/kube-binaries" && pwd -P)"
dest="${base}/k8s-${k8s_version}-etcd-${etcd_version}"

# Both binaries exist, run, and report the expected versions.
binaries_ok() {
	local dir="$1" out
	[[ -x "${dir}/kube-apiserver" && -x "${dir}/etcd" ]] || return 1
	out="$("${dir}/kube-apiserver" --version 2>&1)" || return 1
	[[ "${out}" == *"Kubernetes ${k8s_version}"* ]] || return 1
	out="$("${dir}/etcd" --version 2>&1)" || return 1
	[[ "${out}" == *"etcd Version: ${etcd_version#v}"* ]] || return 1
}

if [[ "${FORCE_REBUILD:-}" != 1 ]] && binaries_ok "${dest}"; then
	echo "kube-binaries: using cached ${dest}"
	echo "${dest}" >&3
	exit 0
fi

# Serialise concurrent builds (e.g. parallel make targets); re-check after
# getting the lock, another run may have just finished the build.
if command -v flock >/dev/null 2>&1; then
	exec 9>"${base}/.lock"
	flock 9
	if [[ "${FORCE_REBUILD:-}" != 1 ]] && binaries_ok "${dest}"; then
		echo "kube-binaries: using cached ${dest}"
		echo "${dest}" >&3
		exit 0
	fi
fi

tmp="$(mktemp -d "${base}/.build-XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT

# Same version stamping as Kubernetes' hack/lib/version.sh; the build date is
# the tag's commit time so the output does not depend on when it was built.
build_date="$(cd "${here}" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)"
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

echo "kube-binaries: building kube-apiserver ${k8s_version} and etcd ${etcd_version} into ${dest} (a cold build takes several minutes)"
start=${SECONDS}
(
	cd "${here}"
	# Flags as in Kubernetes' hack/lib/golang.sh for release binaries.
	CGO_ENABLED="${CGO_ENABLED:-0}" go build \
		-trimpath -buildvcs=false \
		-tags selinux,notest,grpcnotrace \
		-ldflags "${ldflags}" \
		-o "${tmp}/" \
		k8s.io/kubernetes/cmd/kube-apiserver ./etcd
)

if ! binaries_ok "${tmp}"; then
	echo "kube-binaries: freshly built binaries failed the --version check:" >&2
	"${tmp}/kube-apiserver" --version >&2 || true
	"${tmp}/etcd" --version >&2 || true
	exit 1
fi

# rename(2) within one filesystem: readers never see a half-written binary.
mkdir -p "${dest}"
mv -f "${tmp}/etcd" "${dest}/etcd"
mv -f "${tmp}/kube-apiserver" "${dest}/kube-apiserver"

echo "kube-binaries: built in $((SECONDS - start))s"
echo "${dest}" >&3

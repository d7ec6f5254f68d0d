#!/usr/bin/env bash
# Regenerates everything derived from the Go types in api/ (`make generate`):
#
#   api/<version>/zz_generated.deepcopy.go   controller-gen object (DeepCopy, runtime.Object)
#   deploy/crds/<group>_<plural>.yaml        controller-gen crd, one file per CRD,
#                                            quantities bounded by hack/crdquantity
#
# deploy/crds holds generated CRDs only: its *.yaml files are replaced wholesale,
# so a CRD whose type is gone disappears too. api/generate_test.go runs this
# script into a temporary folder and fails when the checked-in files differ.
#
# controller-gen is pinned in hack/tools/go.mod (a module of its own, so the
# generator's dependencies stay out of the main go.mod). It is built once per
# version into a cache folder outside the repo.
#
# Environment:
#   GENERATE_OUTPUT_DIR  write into this folder instead of the repo, with the
#                        same layout (api/<version>/..., deploy/crds/...)
#   METAHOOKS_CACHE      cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/metahooks)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
tools="${root}/hack/tools"
out="${GENERATE_OUTPUT_DIR:-${root}}"

# --- controller-gen, built from the tools module into the cache -------------
version="$(cd "${tools}" && go list -m -f '{{.Version}}' sigs.k8s.io/controller-tools)"
if [[ -z "${version}" ]]; then
	echo "generate.sh: cannot read the sigs.k8s.io/controller-tools version from ${tools}/go.mod" >&2
	exit 1
fi
source "${root}/hack/cache-root.sh"
mkdir -p "${cache_root}/tools"
controller_gen="${cache_root}/tools/controller-gen-${version}"
if [[ "$("${controller_gen}" --version 2>/dev/null || true)" != "Version: ${version}" ]]; then
	echo "generate.sh: building controller-gen ${version} into ${controller_gen}" >&2
	partial="$(mktemp "${controller_gen}.XXXXXX")"
	(cd "${tools}" && go build -trimpath -o "${partial}" sigs.k8s.io/controller-tools/cmd/controller-gen)
	mv -f "${partial}" "${controller_gen}" # rename(2): concurrent runs never see half a binary
fi

# --- generate into a scratch folder, then install ---------------------------
scratch="$(mktemp -d)"
trap 'rm -rf "${scratch}"' EXIT

cd "${root}"
# API packages: every api/<version>/ holding *_types.go files.
packages=()
for dir in api/*/; do
	dir="${dir%/}"
	compgen -G "${dir}/*_types.go" >/dev/null && packages+=("${dir}")
done
if ((${#packages[@]} == 0)); then
	echo "generate.sh: no api/<version>/*_types.go found" >&2
	exit 1
fi

# One run per package: each writes a file of the same name.
for pkg in "${packages[@]}"; do
	"${controller_gen}" object paths="./${pkg}" output:object:dir="${scratch}/${pkg}"
done
# One run over all packages, so a CRD served in several versions is one file.
crd_paths=()
for pkg in "${packages[@]}"; do crd_paths+=("paths=./${pkg}"); done
"${controller_gen}" crd:crdVersions=v1 "${crd_paths[@]}" output:crd:dir="${scratch}/deploy/crds"
# controller-gen's quantity pattern takes any exponent ("1e-99999999", which
# resource.ParseQuantity and CEL's quantity() take minutes over): bound every
# quantity by api.QuantityPattern and api.MaxQuantityLength, as the hook
# does. hack/crdquantity fails when controller-gen's pattern is not found.
go run ./hack/crdquantity "${scratch}/deploy/crds/"*.yaml

for pkg in "${packages[@]}"; do
	mkdir -p "${out}/${pkg}"
	cp "${scratch}/${pkg}/zz_generated.deepcopy.go" "${out}/${pkg}/zz_generated.deepcopy.go"
done
mkdir -p "${out}/deploy/crds"
rm -f "${out}/deploy/crds/"*.yaml
cp "${scratch}/deploy/crds/"*.yaml "${out}/deploy/crds/"

if [[ -z "${GENERATE_OUTPUT_DIR:-}" ]]; then
	echo "generate.sh: controller-gen ${version}: deepcopy for ${packages[*]}; CRDs in deploy/crds:" \
		"$(cd deploy/crds && echo *.yaml)" >&2
fi

# Sourced by hack/generate.sh and hack/kube-binaries/build.sh: sets cache_root
# to the folder outside the repo where built tools are kept, keyed by version
# below it: $METAHOOKS_CACHE, else $XDG_CACHE_HOME/metahooks, else
# ~/.cache/metahooks.
if [[ -n "${METAHOOKS_CACHE:-}" ]]; then
	cache_root="${METAHOOKS_CACHE}"
elif [[ -n "${XDG_CACHE_HOME:-}" ]]; then
	cache_root="${XDG_CACHE_HOME}/metahooks"
elif [[ -n "${HOME:-}" ]]; then
	cache_root="${HOME}/.cache/metahooks"
else
	echo "$(basename "$0"): set METAHOOKS_CACHE, XDG_CACHE_HOME or HOME" >&2
	exit 1
fi

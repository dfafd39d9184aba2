#!/usr/bin/env bash
# Builds the benchmark's reference operator (controller-runtime, Go) through the Go
# module proxy, as tools/controlplane/build.sh builds the control plane. The binary
# is cached outside the repository, keyed by the hash of this module's sources, so a
# second run builds nothing. Prints the binary's path.
#
#   AIDC_REFERENCE_CACHE  cache root (default: $XDG_CACHE_HOME or ~/.cache, /aidc-operator/reference-operator)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${AIDC_REFERENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aidc-operator/reference-operator}"
hash="$(cat "$here/go.mod" "$here/go.sum" "$here"/*.go | sha256sum | cut -c1-16)"
out="$cache_root/$hash"
bin="$out/reference-operator"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$out"
printf '[reference-operator] building (first run only; this takes a while)\n' >&2
start=$SECONDS
(cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/.reference-operator.tmp" .)
mv "$out/.reference-operator.tmp" "$bin"
printf '[reference-operator] built in %ss\n' "$((SECONDS - start))" >&2
echo "$bin"

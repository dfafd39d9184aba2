#!/usr/bin/env bash
# Builds promtool (Prometheus' rule checker and rule unit-test runner) and
# promql-selectors (main.go: what PromQL expressions read, by Prometheus' parser) from
# the Go wrapper module beside this script, through the Go module proxy, as
# tools/controlplane/build.sh builds the control plane. Both binaries are cached
# outside the repository, keyed by Prometheus' version and this module's sources, so
# a second run builds nothing. Prints the directory holding `promtool` and
# `promql-selectors`.
#
#   AIDC_CONTROLPLANE_CACHE  cache root (default: $XDG_CACHE_HOME or ~/.cache, /aidc-operator/controlplane)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="$(awk '{ if ($1 == "require") { $1 = $2; $2 = $3 } } ($1 == "github.com/prometheus/prometheus" && $2 ~ /^v/) {print $2; exit}' "$here/go.mod")"
[ -n "$version" ] || { echo "no version of github.com/prometheus/prometheus in $here/go.mod" >&2; exit 1; }
cache_root="${AIDC_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aidc-operator/controlplane}"
key="$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" "$0" | sha256sum | cut -c1-12)"
out="$cache_root/promtool-$version-$key"
if [ -x "$out/promtool" ] && [ -x "$out/promql-selectors" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$out"
# One build of an entry at a time: parallel test runs wait here, then find it built.
exec 9>"$out/.lock"
flock 9
if [ -x "$out/promtool" ] && [ -x "$out/promql-selectors" ]; then
  echo "$out"
  exit 0
fi
printf '[promtool] building Prometheus %s tools (first run only; this takes a while)\n' "$version" >&2
start=$SECONDS
# Temporary names, then renames: an interrupted build never leaves a half-written binary.
(
  cd "$here"
  export CGO_ENABLED=0 GOFLAGS=-mod=mod
  go build -trimpath -ldflags "-s -w" -o "$out/.promtool.tmp" github.com/prometheus/prometheus/cmd/promtool
  go build -trimpath -ldflags "-s -w" -o "$out/.promql-selectors.tmp" .
)
mv "$out/.promtool.tmp" "$out/promtool"
mv "$out/.promql-selectors.tmp" "$out/promql-selectors"
printf '[promtool] built in %ss\n' "$((SECONDS - start))" >&2
echo "$out"

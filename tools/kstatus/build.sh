#!/usr/bin/env bash
# Builds tools/kstatus (kstatus' verdict of objects read as JSON on stdin; see
# main.go) through the Go module proxy, as tools/controlplane/build.sh builds the
# control plane. The binary is cached outside the repository, keyed by the sources,
# so a second run builds nothing. Prints the binary's path.
#
#   AIDC_CONTROLPLANE_CACHE  cache root (default: $XDG_CACHE_HOME or ~/.cache, /aidc-operator/controlplane)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${AIDC_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aidc-operator/controlplane}"
key="$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
out="$cache_root/kstatus-$key"
bin="$out/kstatus"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$out"
# One build of an entry at a time: parallel test runs wait here, then find it built.
exec 9>"$out/.lock"
flock 9
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
printf '[kstatus] building %s (first run only)\n' "$bin" >&2
(cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/.kstatus.tmp" .)
mv "$out/.kstatus.tmp" "$bin"
echo "$bin"

#!/usr/bin/env bash
# Builds MinIO, the S3-compatible server the Bucket tests and `npm run dev` run
# against, from the Go wrapper module beside this script, through the Go module proxy,
# as tools/controlplane/build.sh builds the control plane. The binary is cached outside
# the repository, keyed by MinIO's version (and the recipe below), so a second run
# builds nothing. Prints the binary's path.
#
#   AIDC_CONTROLPLANE_CACHE  cache root (default: $XDG_CACHE_HOME or ~/.cache, /aidc-operator/controlplane)
#   AIDC_MINIO_BIN           a ready MinIO binary: used as it is, nothing is built
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -n "${AIDC_MINIO_BIN:-}" ]; then
  [ -x "$AIDC_MINIO_BIN" ] || { echo "AIDC_MINIO_BIN=$AIDC_MINIO_BIN is not an executable" >&2; exit 1; }
  echo "$AIDC_MINIO_BIN"
  exit 0
fi
version="$(awk '($1 == "github.com/minio/minio" && $2 ~ /^v/) {print $2; exit}' "$here/go.mod")"
[ -n "$version" ] || { echo "no version of github.com/minio/minio in $here/go.mod" >&2; exit 1; }
cache_root="${AIDC_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aidc-operator/controlplane}"
# RECIPE names the build flags: change it when they change, so that caches rebuild.
RECIPE=1
out="$cache_root/minio-$version-r$RECIPE"
bin="$out/minio"
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
printf '[minio] building %s (first run only; this takes a while)\n' "$version" >&2
start=$SECONDS
# A temporary name, then a rename: an interrupted build never leaves a half-written binary.
(cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/.minio.tmp" github.com/minio/minio)
mv "$out/.minio.tmp" "$bin"
printf '[minio] built in %ss\n' "$((SECONDS - start))" >&2
echo "$bin"

#!/usr/bin/env bash
# The system tools the tests use besides Node and Go: openssl (control-plane
# certificates) and lua5.1 (Argo CD health checks, Argo CD's own Lua version).
# Installed with apt-get when missing and possible (root, as on CI), so that
# `npm test` alone works on a fresh machine; otherwise says what to install.
set -euo pipefail
missing=()
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v lua5.1 >/dev/null 2>&1 || [ -n "${AIDC_LUA:-}" ] || missing+=(lua5.1)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "[ensure-test-tools] installing ${missing[*]} with apt-get" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
else
  echo "[ensure-test-tools] missing: ${missing[*]}; install them (e.g. apt-get install ${missing[*]})" >&2
  exit 1
fi

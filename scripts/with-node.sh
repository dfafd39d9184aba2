#!/usr/bin/env bash
# Runs a command with Node >= 22.19 first on PATH. @kubernetes/client-node 2.x does
# not load on older Node, and these machines ship Node 20: when the machine's Node is
# older, Node 24 is installed once from the npm registry (the `node` package ships the
# binary) into a cache outside the repository, and put first on PATH.
#
#   bash scripts/with-node.sh <command> [args...]
#   source scripts/with-node.sh            # only adjusts PATH of the calling shell
#
#   AIDC_NODE_CACHE   where Node 24 is kept (default ~/.cache/aidc-operator/node)
NODE_WANTED_VERSION="24.21.0"

aidc_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)'
}

aidc_use_node() {
  aidc_node_ok && return 0
  local cache="${AIDC_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aidc-operator/node}/$NODE_WANTED_VERSION"
  if [ ! -x "$cache/node_modules/node/bin/node" ]; then
    echo "[with-node] installing Node $NODE_WANTED_VERSION from the npm registry into $cache" >&2
    mkdir -p "$cache"
    npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$cache" "node@$NODE_WANTED_VERSION" >&2
  fi
  export PATH="$cache/node_modules/node/bin:$PATH"
  aidc_node_ok || { echo "[with-node] could not get Node >= 22.19" >&2; return 1; }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  aidc_use_node
  [ $# -gt 0 ] || { node --version; exit 0; }
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  # A fresh clone (or a changed lock file) gets its packages first, so that
  # `npm test` and `npm run dev` are the only commands a new machine needs. A
  # node_modules that is a link (a git worktree sharing another checkout's packages)
  # is left alone: npm ci would empty the checkout it points to.
  if [ ! -L "$root/node_modules" ] && { [ ! -f "$root/node_modules/.package-lock.json" ] ||
    [ "$root/package-lock.json" -nt "$root/node_modules/.package-lock.json" ]; }; then
    echo "[with-node] npm ci" >&2
    (cd "$root" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
  export PATH="$root/node_modules/.bin:$PATH"
  exec "$@"
else
  aidc_use_node
fi

#!/usr/bin/env bash
# Builds the local control plane's binaries (etcd, kube-apiserver,
# kube-controller-manager, kubectl, helm, and helm4: Helm 4 for test/e2e/helm4.test.ts)
# from the Go wrapper modules beside this script, through the Go module proxy.
# Binaries are cached outside the repository, keyed by version, so a second run
# builds nothing. Prints the directory that holds the binaries.
#
#   build.sh [WRAPPER]  the Kubernetes wrapper module beside this script: kubernetes (the
#                       default, what the tests run against) or kubernetes-floor (the oldest
#                       version the chart supports, for test/integration/kube-floor.test.ts)
#
#   AIDC_CONTROLPLANE_CACHE  cache root (default: $XDG_CACHE_HOME or ~/.cache, /aidc-operator/controlplane)
#   KUBEBUILDER_ASSETS       a directory with envtest binaries (etcd, kube-apiserver,
#                            kubectl): used as they are. envtest ships no
#                            kube-controller-manager: it is built (as kubectl is when
#                            missing), and helm always.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# module_version DIR MODULE: the version a wrapper's go.mod requires.
module_version() {
  local v
  v="$(awk -v m="$2" '($1 == m && $2 ~ /^v/) {print $2; exit} ($1 == "require" && $2 == m) {print $3; exit}' "$here/$1/go.mod")"
  [ -n "$v" ] || { echo "no version of $2 in $1/go.mod" >&2; exit 1; }
  echo "$v"
}
K8S_DIR="${1:-kubernetes}"
[ -f "$here/$K8S_DIR/go.mod" ] || { echo "no wrapper module $here/$K8S_DIR" >&2; exit 1; }
K8S_VERSION="$(module_version "$K8S_DIR" k8s.io/kubernetes)"
ETCD_VERSION="$(module_version etcd go.etcd.io/etcd/server/v3)"
HELM_VERSION="$(module_version helm helm.sh/helm/v3)"
HELM4_VERSION="$(module_version helm4 helm.sh/helm/v4)"

cache_root="${AIDC_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aidc-operator/controlplane}"
# RECIPE names the build flags and the set of binaries below: change it when they
# change, so that caches rebuild (3: kube-controller-manager joined the set).
RECIPE=3
out="$cache_root/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-helm-$HELM_VERSION-r$RECIPE"
mkdir -p "$out"
# One build of an entry at a time: parallel test runs wait here, then find it built.
exec 9>"$out/.lock"
flock 9

log() { printf '[controlplane] %s\n' "$*" >&2; }

# go_build DIR PACKAGE OUTPUT [LDFLAGS]: builds into a temporary name, then renames,
# so an interrupted build never leaves a half-written binary in the cache.
go_build() {
  local dir="$1" pkg="$2" bin="$3" ldflags="${4:-}"
  if [ -x "$out/$bin" ]; then
    log "$bin: cached in $out"
    return
  fi
  log "$bin: building $pkg (first run only; this takes a while)"
  local start=$SECONDS
  (cd "$here/$dir" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w $ldflags" -o "$out/.$bin.tmp" "$pkg")
  mv "$out/.$bin.tmp" "$out/$bin"
  log "$bin: built in $((SECONDS - start))s"
}

link_asset() {
  local bin="$1"
  if [ -x "$KUBEBUILDER_ASSETS/$bin" ]; then
    ln -sf "$KUBEBUILDER_ASSETS/$bin" "$out/$bin"
    return 0
  fi
  return 1
}

k8s_ldflags() {
  local v="$K8S_VERSION" minor
  minor="$(echo "$v" | cut -d. -f2)"
  local flags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ "$K8S_DIR" = kubernetes ]; then
  log "using binaries from KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  link_asset etcd || { log "etcd missing in KUBEBUILDER_ASSETS"; exit 1; }
  link_asset kube-apiserver || { log "kube-apiserver missing in KUBEBUILDER_ASSETS"; exit 1; }
  link_asset kubectl || go_build "$K8S_DIR" k8s.io/kubernetes/cmd/kubectl kubectl "$(k8s_ldflags)"
  link_asset kube-controller-manager ||
    go_build "$K8S_DIR" k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager "$(k8s_ldflags)"
else
  go_build etcd go.etcd.io/etcd/server/v3 etcd
  go_build "$K8S_DIR" k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver "$(k8s_ldflags)"
  go_build "$K8S_DIR" k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager "$(k8s_ldflags)"
  go_build "$K8S_DIR" k8s.io/kubernetes/cmd/kubectl kubectl "$(k8s_ldflags)"
fi
# As helm's Makefile does: the Kubernetes version helm assumes for `helm template`
# and lint (Capabilities.KubeVersion) comes from the client-go it is built with.
helm_ldflags() {
  local cg minor
  cg="$(module_version helm k8s.io/client-go)"
  minor="$(echo "$cg" | cut -d. -f2)"
  local flags="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    flags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$minor"
  done
  echo "$flags"
}
go_build helm helm.sh/helm/v3/cmd/helm helm "$(helm_ldflags)"
# Helm 4 (not for the floor: the tests that use it run on the default wrapper) takes the
# Kubernetes version from its client-go's build info. Its binary is named by version (so
# that the cache key above needs no change); helm4 links to it.
if [ "$K8S_DIR" = kubernetes ]; then
  go_build helm4 helm.sh/helm/v4/cmd/helm "helm4-$HELM4_VERSION" \
    "-X helm.sh/helm/v4/internal/version.version=$HELM4_VERSION"
  ln -sfn "helm4-$HELM4_VERSION" "$out/helm4"
fi

echo "$out"

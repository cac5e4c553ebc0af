#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy into a cache outside the
# repository, keyed by version, and prints the directory (usable as KUBEBUILDER_ASSETS).
#
# Nothing is downloaded as a prebuilt binary: a throwaway module requires
# k8s.io/kubernetes at KUBE_VERSION and replaces each of its staging modules with
# the matching v0.Y.Z release, which is enough for `go build` of the API server.
# etcd is built at the version kubernetes' own go.mod pins.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.34.4}
STAGING_VERSION="v0.${KUBE_VERSION#v1.}"
CACHE_ROOT=${KUBECTL_IDX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-idx}
OUT="$CACHE_ROOT/envtest/k8s-$KUBE_VERSION"

# Reuse a cached build only if it reports the version it was built for.
if [[ -x "$OUT/kube-apiserver" && -x "$OUT/etcd" ]] &&
  [[ "$("$OUT/kube-apiserver" --version 2>/dev/null)" == "Kubernetes $KUBE_VERSION" ]]; then
  echo "$OUT"
  exit 0
fi

log() { echo "envtest-assets: $*" >&2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"

gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[[ -f "$gomod" ]] || { log "cannot find go.mod of k8s.io/kubernetes@$KUBE_VERSION"; exit 1; }

etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$gomod")
[[ -n "$etcd_version" ]] || { log "k8s.io/kubernetes@$KUBE_VERSION does not pin go.etcd.io/etcd/server/v3"; exit 1; }

cd "$work"
{
  echo "module envtestassets"
  echo
  echo "go 1.24"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  # Every `k8s.io/x => ./staging/src/k8s.io/x` line becomes `k8s.io/x => k8s.io/x v0.Y.Z`.
  grep -E '^[[:space:]]*k8s\.io/[^ ]+ => \./staging/' "$gomod" |
    awk -v v="$STAGING_VERSION" '{print "replace " $1 " => " $1 " " v}'
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
GO
log "resolving k8s.io/kubernetes $KUBE_VERSION (staging $STAGING_VERSION) and etcd $etcd_version"
go get "go.etcd.io/etcd/server/v3@$etcd_version" >&2
go mod tidy >&2
# The version packages are stamped as the release build does, so the server
# reports its real version (/version, `kubectl version`) instead of v0.0.0-master.
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
log "building kube-apiserver (several minutes on first run)"
CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$OUT/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2
log "building etcd $etcd_version"
CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
mv "$OUT/kube-apiserver.tmp" "$OUT/kube-apiserver"
mv "$OUT/etcd.tmp" "$OUT/etcd"
echo "$OUT"
